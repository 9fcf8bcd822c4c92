import { MemoryError } from '../errors/memory-error.js';
import { readJobBacklog, type Job, type JobBacklogStatus } from '../jobs/job.js';
import { resolveUserScope } from '../messages/scope.js';
import type { CallOptions, Conversation, Page, PageOptions, Store, StoreReadiness } from '../store/store.js';

// The reads of `Memory` that do more than resolve a scope and call the store: the checks of their
// inputs and the small computations on what the store returns.

/** Longest search text accepted: ids are short, and the text is matched inside every id of a tenant. */
const maxSearchLength = 200;

/** One page of a tenant's conversations (or one user's), whose ids contain `search`; `invalid_input` for a bad search. */
export function listConversations(
  store: Store,
  filter: { tenantId?: string; userId?: string; search?: string },
  page: PageOptions | undefined,
  options: CallOptions | undefined,
): Promise<Page<Conversation>> {
  const user = resolveUserScope(filter);
  const search = checkSearch(filter.search);
  return store.listConversations(
    {
      tenantId: user.tenantId,
      ...(filter.userId === undefined ? {} : { userId: user.userId }),
      ...(search === undefined ? {} : { search }),
    },
    page,
    options,
  );
}

/** A tenant's most recent failed jobs, at most `limit` (1–100, default 20). */
export function listRecentFailures(
  store: Store,
  tenant: { tenantId?: string },
  query: { limit?: number },
  options: CallOptions | undefined,
): Promise<Job[]> {
  return store.listFailedJobs(
    { tenantId: resolveUserScope({ tenantId: tenant.tenantId }).tenantId, limit: checkFailureLimit(query.limit) },
    options,
  );
}

/** The job backlog (of a tenant, or all), with the age of its oldest pending job at `now`. */
export async function jobBacklogAt(
  store: Store,
  filter: { tenantId?: string },
  now: number,
  options: CallOptions | undefined,
): Promise<JobBacklogStatus> {
  const backlog = await readJobBacklog(
    store,
    filter.tenantId === undefined ? {} : { tenantId: filter.tenantId },
    options,
  );
  const oldest = backlog.oldestPendingCreatedAt;
  return oldest === undefined ? backlog : { ...backlog, oldestPendingAgeMs: Math.max(0, now - Date.parse(oldest)) };
}

/** The store's own readiness checks, or (a store without them) whether one read succeeds. */
export async function storeReadiness(store: Store, options: CallOptions | undefined): Promise<StoreReadiness> {
  if (store.checkReadiness !== undefined) return store.checkReadiness(options);
  try {
    await store.listConversations({ tenantId: 'default' }, { limit: 1 }, options);
    return { ready: true, checks: [{ name: 'read', ok: true }] };
  } catch (error) {
    return {
      ready: false,
      checks: [{ name: 'read', ok: false, message: error instanceof Error ? error.message : String(error) }],
    };
  }
}

function checkSearch(search: unknown): string | undefined {
  if (search === undefined) return undefined;
  if (typeof search !== 'string' || search.length > maxSearchLength) {
    throw new MemoryError('invalid_input', `search must be a string of at most ${maxSearchLength} characters`, {
      details: { field: 'search' },
    });
  }
  return search.trim() === '' ? undefined : search.trim();
}

function checkFailureLimit(limit: unknown): number {
  if (limit === undefined) return 20;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new MemoryError('invalid_input', 'limit must be an integer from 1 to 100', { details: { field: 'limit' } });
  }
  return limit;
}
