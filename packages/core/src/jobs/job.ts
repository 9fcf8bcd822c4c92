/**
 * Kinds of background jobs. `refine` adds the refining model's vectors (decision 0045): best effort, run
 * only while the machine is idle, so its backlog is quality not yet had, never a message unsearchable.
 */
export const jobKinds = ['compact', 'embed', 'extract', 'refine'] as const;

/** One of {@link jobKinds}. */
export type JobKind = (typeof jobKinds)[number];

/** Where a job is in its life: waiting (maybe for a retry time), leased by a worker, finished, or given up. */
export type JobStatus = 'pending' | 'running' | 'done' | 'failed';

/** A background job on one conversation, leased by at most one worker at a time. */
export interface Job {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly conversationId: string;
  readonly kind: JobKind;
  readonly status: JobStatus;
  /** Leases taken so far (a lease that expired counts). */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** ISO 8601: not leased before this time (retry backoff). */
  readonly runAt: string;
  /** Worker holding the lease while `running`. */
  readonly leaseOwner?: string;
  /** ISO 8601: the lease lapses at this time and another worker may take the job. */
  readonly leaseExpiresAt?: string;
  readonly lastError?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What to lease: the worker's id, how long the lease lasts, and the time it is now (ISO 8601). */
export interface LeaseRequest {
  readonly workerId: string;
  readonly leaseMs: number;
  readonly now: string;
  readonly kinds?: readonly JobKind[];
}

/** Counts of jobs by status, for metrics and `mnemo stats`. */
export type JobCounts = Readonly<Record<JobStatus, number>>;

/** How many jobs of one kind are in one status, and when the oldest of them was queued (ISO 8601). */
export interface JobKindCount {
  readonly kind: JobKind;
  readonly status: JobStatus;
  readonly count: number;
  readonly oldestCreatedAt: string;
}

/** The background work not done yet, per kind: what `/metrics` and `mnemo stats` show. */
export interface JobBacklog {
  /** Jobs waiting to run (due now or retrying later) and jobs running now, per kind. */
  readonly byKind: Readonly<Record<JobKind, { readonly pending: number; readonly running: number }>>;
  /** ISO 8601 creation time of the oldest pending job; absent when none is pending. */
  readonly oldestPendingCreatedAt?: string;
  /** Jobs by status, done and failed included, over every kind. */
  readonly byStatus: JobCounts;
}

/** A {@link JobBacklog} read at one moment, with the age of its oldest pending job. */
export interface JobBacklogStatus extends JobBacklog {
  /** How long the oldest pending job has waited, in ms; absent when none is pending. */
  readonly oldestPendingAgeMs?: number;
}

/** Adds up a backlog from rows of (kind, status, count, oldest creation time in epoch ms) — one way for every store. */
export function backlogFromRows(
  rows: Iterable<{ readonly kind: string; readonly status: string; readonly count: number; readonly oldestMs: number }>,
): JobBacklog {
  const byKind = Object.fromEntries(jobKinds.map((kind) => [kind, { pending: 0, running: 0 }])) as Record<
    JobKind,
    { pending: number; running: number }
  >;
  const byStatus: Record<JobStatus, number> = { pending: 0, running: 0, done: 0, failed: 0 };
  let oldestMs: number | undefined;
  for (const row of rows) {
    if (Object.hasOwn(byStatus, row.status)) byStatus[row.status as JobStatus] += row.count;
    const entry = byKind[row.kind as JobKind];
    if (entry === undefined || (row.status !== 'pending' && row.status !== 'running')) continue;
    entry[row.status] += row.count;
    if (row.status === 'pending') oldestMs = oldestMs === undefined ? row.oldestMs : Math.min(oldestMs, row.oldestMs);
  }
  return {
    byKind,
    byStatus,
    ...(oldestMs === undefined ? {} : { oldestPendingCreatedAt: new Date(oldestMs).toISOString() }),
  };
}

/** The backlog of one tenant or (without `tenantId`) all, from the store's per-kind counts: pending and running jobs, the oldest pending one's creation time. */
export async function readJobBacklog(
  store: {
    countJobsByKind(filter: { tenantId?: string }, options?: { signal?: AbortSignal }): Promise<JobKindCount[]>;
  },
  filter: { tenantId?: string },
  options?: { signal?: AbortSignal },
): Promise<JobBacklog> {
  const counts = await store.countJobsByKind(filter, options);
  return backlogFromRows(counts.map((count) => ({ ...count, oldestMs: Date.parse(count.oldestCreatedAt) })));
}
