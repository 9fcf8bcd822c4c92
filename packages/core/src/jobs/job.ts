/** Kinds of background jobs. */
export const jobKinds = ['compact', 'embed', 'extract'] as const;

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
