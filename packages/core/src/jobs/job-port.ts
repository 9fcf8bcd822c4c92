import type { Scope } from '../messages/scope.js';
import type { PortCalls } from '../store/port.js';
import type { CallOptions, JobCompletion, JobFailure, JobLease, JobRequest } from '../store/store.js';
import type { Job, JobKindCount, LeaseRequest } from './job.js';

/** The job queue. Part of the `Store` port; an adapter implements it as a `StorePart<JobPort>`. */
export interface JobPort {
  /**
   * Queues a job on a conversation. A pending job of the same kind on the same conversation absorbs the
   * request (it is returned instead), so bursts of appends queue one job; a running job does not, since it
   * may have planned before the newest messages.
   */
  enqueueJob(scope: Scope, request: JobRequest, options?: CallOptions): Promise<Job>;
  /**
   * Leases the oldest due job (pending with `runAt` ≤ now, or running with an expired lease) to one
   * worker, atomically across processes, counting an attempt. A job whose lease expired after its last
   * allowed attempt is marked failed instead. `undefined` when nothing is due.
   */
  leaseJob(request: LeaseRequest, options?: CallOptions): Promise<Job | undefined>;
  /** Marks a leased job done; `conflict` when the caller no longer holds the lease. */
  completeJob(lease: JobLease, now: string, options?: CallOptions & JobCompletion): Promise<void>;
  /** Records a failed attempt (retry at `retryAt`, or given up); `conflict` when the caller no longer holds the lease. */
  failJob(lease: JobLease, failure: JobFailure, options?: CallOptions): Promise<Job>;
  /** Jobs of one conversation, oldest first. */
  listJobs(scope: Scope, options?: CallOptions): Promise<Job[]>;
  /** Jobs by kind and status with the time the oldest of each was queued, for one tenant or all; by kind, then status. */
  countJobsByKind(filter: { tenantId?: string }, options?: CallOptions): Promise<JobKindCount[]>;
  /** The `limit` most recently updated jobs that carry an error and are not done (given up, or waiting to retry), newest first. */
  listFailedJobs(filter: { tenantId?: string; limit: number }, options?: CallOptions): Promise<Job[]>;
}

/** What each method of {@link JobPort} does, in the words of an error, and the index of its call options. */
export const jobPortCalls: PortCalls<JobPort> = {
  enqueueJob: ['queueing a job', 2],
  leaseJob: ['leasing a job', 1],
  completeJob: ['completing a job', 2],
  failJob: ['failing a job', 2],
  listJobs: ['listing jobs', 1],
  countJobsByKind: ['counting jobs by kind', 1],
  listFailedJobs: ['listing failed jobs', 1],
};
