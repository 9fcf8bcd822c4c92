import { MemoryError } from '../errors/memory-error.js';
import type { ErasureReceipt, MessageSelection } from '../store/message-erasure.js';
import type { UserScope } from '../messages/scope.js';
import { groupBy } from '../store/group-by.js';
import type { CallOptions, Conversation, Store } from '../store/store.js';

/** How long a user's messages are kept: older ones are erased with all made of them. */
export interface RetentionPolicy {
  /** Messages created more than this many days ago are erased (a positive number; fractions allowed). */
  readonly maxAgeDays: number;
}

/** The retention of one tenant: its default policy and per-user overrides (`null`: keep that user's messages forever). */
export interface RetentionRules {
  readonly tenantId: string;
  /** The tenant's policy; absent: keep forever (unless a user's own says otherwise). */
  readonly policy?: RetentionPolicy;
  readonly users?: Readonly<Record<string, RetentionPolicy | null>>;
}

/** What a retention run did for one user: the cutoff, and the erasure's receipt (absent in a dry run). */
export interface RetentionOutcome {
  readonly userId: string;
  /** ISO 8601: messages created before this were (or, dry, would be) erased. */
  readonly before: string;
  readonly receipt?: ErasureReceipt;
}

/** Options of {@link applyRetention}. */
export interface RetentionOptions extends CallOptions {
  /** Report the users that have messages past their policy and erase nothing. Default false. */
  readonly dryRun?: boolean;
  /** Only these users of the tenant. */
  readonly userIds?: readonly string[];
}

/** What {@link applyRetention} needs: the store to find users and their oldest messages, and the engine's erasure. */
export interface RetentionDependencies {
  readonly store: Store;
  readonly eraseMessages: (target: UserScope & MessageSelection, options?: CallOptions) => Promise<ErasureReceipt>;
}

/**
 * Applies a tenant's retention at `now` (ISO 8601): for every user of the tenant with a policy (their own,
 * else the tenant's), the messages created before `now − maxAgeDays` are erased through the engine's
 * erasure, which reaches every summary, index, fact and memory file made of them and leaves an audit
 * entry. A user whose oldest message is younger than the cutoff is left alone (no empty audit entry).
 * `invalid_input` for a policy that is not a positive number of days.
 */
export async function applyRetention(
  dependencies: RetentionDependencies,
  rules: RetentionRules,
  now: string,
  options: RetentionOptions = {},
): Promise<RetentionOutcome[]> {
  for (const policy of [rules.policy, ...Object.values(rules.users ?? {})]) {
    if (policy !== undefined && policy !== null && !(Number.isFinite(policy.maxAgeDays) && policy.maxAgeDays > 0)) {
      throw new MemoryError(
        'invalid_input',
        `maxAgeDays must be a positive number of days (got ${JSON.stringify(policy.maxAgeDays)})`,
        {
          details: { field: 'maxAgeDays' },
        },
      );
    }
  }
  const callOptions: CallOptions = options.signal === undefined ? {} : { signal: options.signal };
  const conversationsOf = await listConversationsByUser(dependencies.store, rules.tenantId, callOptions);
  const outcomes: RetentionOutcome[] = [];
  for (const [userId, conversationIds] of conversationsOf) {
    if (options.userIds !== undefined && !options.userIds.includes(userId)) continue;
    const own = rules.users?.[userId];
    const policy = own === undefined ? rules.policy : own;
    if (policy === undefined || policy === null) continue;
    const before = new Date(Date.parse(now) - policy.maxAgeDays * 86_400_000).toISOString();
    const user = { tenantId: rules.tenantId, userId };
    if (!(await hasMessageBefore(dependencies.store, user, conversationIds, before, callOptions))) continue;
    if (options.dryRun === true) {
      outcomes.push({ userId, before });
      continue;
    }
    outcomes.push({ userId, before, receipt: await dependencies.eraseMessages({ ...user, before }, callOptions) });
  }
  return outcomes;
}

async function listConversationsByUser(
  store: Store,
  tenantId: string,
  options: CallOptions,
): Promise<Map<string, string[]>> {
  const conversations: Conversation[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listConversations(
      { tenantId },
      { limit: 500, ...(cursor === undefined ? {} : { cursor }) },
      options,
    );
    conversations.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return new Map(
    [...groupBy(conversations, (conversation) => conversation.userId)].map(([userId, owned]) => [
      userId,
      owned.map((conversation) => conversation.conversationId),
    ]),
  );
}

// The oldest stored message of each conversation (seqs grow with time) decides whether anything is past the cutoff.
async function hasMessageBefore(
  store: Store,
  user: UserScope,
  conversationIds: readonly string[],
  before: string,
  options: CallOptions,
): Promise<boolean> {
  for (const conversationId of conversationIds) {
    const [oldest] = await store.listMessages({ ...user, conversationId }, { afterSeq: 0, limit: 1 }, options);
    if (oldest !== undefined && oldest.createdAt < before) return true;
  }
  return false;
}
