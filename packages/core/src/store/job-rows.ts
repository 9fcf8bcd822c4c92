import { MemoryError } from '../errors/memory-error.js';
import type { Job, JobKind, JobStatus } from '../jobs/job.js';
import { type ToIsoTime } from './knowledge-rows.js';
import type { JobLease } from './store.js';

/** A `jobs` row as every SQL adapter reads it (the columns of {@link jobColumns}); see `MessageRow`. */
export interface JobRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly conversation_id: string;
  readonly kind: string;
  readonly status: string;
  readonly attempts: unknown;
  readonly max_attempts: unknown;
  readonly run_at: unknown;
  readonly lease_owner: string | null;
  readonly lease_expires_at: unknown;
  readonly last_error: string | null;
  readonly created_at: unknown;
  readonly updated_at: unknown;
}

/** The columns of a job, in the order every SQL adapter selects them. */
export const jobColumns =
  'id, tenant_id, user_id, conversation_id, kind, status, attempts, max_attempts, run_at, lease_owner, lease_expires_at, last_error, created_at, updated_at';

/** Maps a `jobs` row to a frozen {@link Job}. */
export function jobFromRow(row: JobRow, toIso: ToIsoTime): Job {
  return Object.freeze({
    id: row.id,
    tenantId: row.tenant_id,
    userId: row.user_id,
    conversationId: row.conversation_id,
    kind: row.kind as JobKind,
    status: row.status as JobStatus,
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    runAt: toIso(row.run_at),
    ...(row.lease_owner === null ? {} : { leaseOwner: row.lease_owner }),
    ...(row.lease_expires_at === null || row.lease_expires_at === undefined
      ? {}
      : { leaseExpiresAt: toIso(row.lease_expires_at) }),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  });
}

/** The `conflict` of completing or failing a job whose lease the caller no longer holds (it expired and another worker took it). */
export function leaseLost(lease: JobLease): MemoryError {
  return new MemoryError('conflict', `job ${lease.id} is not leased by ${lease.leaseOwner ?? 'this worker'} any more`, {
    details: { jobId: lease.id },
  });
}
