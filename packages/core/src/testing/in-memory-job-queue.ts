import { leaseLost } from '../store/job-rows.js';
import type { Job, JobKindCount, LeaseRequest } from '../jobs/job.js';
import type { Scope } from '../messages/scope.js';
import type { JobFailure, JobLease, JobRequest } from '../store/store.js';
import { compareText } from '../text/compare-text.js';

/** The job queue of {@link InMemoryStore}: the same lease rules as the durable stores, in one process. */
export class InMemoryJobQueue {
  readonly #jobs: Job[] = [];

  enqueue(scope: Scope, request: JobRequest, now: string): Job {
    const pending = this.#jobs.find(
      (job) => sameConversation(job, scope) && job.kind === request.kind && job.status === 'pending',
    );
    if (pending !== undefined) return pending;
    const job: Job = {
      id: crypto.randomUUID(),
      ...scope,
      kind: request.kind,
      status: 'pending',
      attempts: 0,
      maxAttempts: request.maxAttempts,
      runAt: request.runAt,
      createdAt: now,
      updatedAt: now,
    };
    this.#jobs.push(job);
    return job;
  }

  lease(request: LeaseRequest): Job | undefined {
    const { now } = request;
    for (const [index, job] of this.#jobs.entries()) {
      if (request.kinds !== undefined && !request.kinds.includes(job.kind)) continue;
      const expired = job.status === 'running' && (job.leaseExpiresAt ?? '') <= now;
      if (expired && job.attempts >= job.maxAttempts) {
        this.#jobs[index] = withoutLease({
          ...job,
          status: 'failed',
          lastError: `lease expired after ${job.attempts} attempts`,
          updatedAt: now,
        });
        continue;
      }
      if (!(job.status === 'pending' && job.runAt <= now) && !expired) continue;
      const leaseExpiresAt = new Date(Date.parse(now) + request.leaseMs).toISOString();
      const leased: Job = {
        ...job,
        status: 'running',
        attempts: job.attempts + 1,
        leaseOwner: request.workerId,
        leaseExpiresAt,
        updatedAt: now,
      };
      this.#jobs[index] = leased;
      return leased;
    }
    return undefined;
  }

  complete(lease: JobLease, now: string, warning?: string): void {
    const index = this.#held(lease);
    this.#jobs[index] = withoutLease({
      ...this.#jobs[index]!,
      status: 'done',
      updatedAt: now,
      ...(warning === undefined ? {} : { lastError: warning }),
    });
  }

  fail(lease: JobLease, failure: JobFailure): Job {
    const index = this.#held(lease);
    const job = this.#jobs[index]!;
    const next = withoutLease({
      ...job,
      status: failure.retryAt === undefined ? 'failed' : 'pending',
      runAt: failure.retryAt ?? job.runAt,
      lastError: failure.error,
      updatedAt: failure.now,
    });
    this.#jobs[index] = next;
    return next;
  }

  list(scope: Scope): Job[] {
    return this.#jobs.filter((job) => sameConversation(job, scope));
  }

  countByKind(tenantId: string | undefined): JobKindCount[] {
    const groups = new Map<string, JobKindCount>();
    for (const job of this.#jobs) {
      if (tenantId !== undefined && job.tenantId !== tenantId) continue;
      const key = `${job.kind}\u0000${job.status}`;
      const group = groups.get(key);
      groups.set(key, {
        kind: job.kind,
        status: job.status,
        count: (group?.count ?? 0) + 1,
        oldestCreatedAt:
          group === undefined || job.createdAt < group.oldestCreatedAt ? job.createdAt : group.oldestCreatedAt,
      });
    }
    return [...groups.values()].sort((a, b) => compareText(a.kind, b.kind) || compareText(a.status, b.status));
  }

  listFailed(tenantId: string | undefined, limit: number): Job[] {
    return this.#jobs
      .filter(
        (job) =>
          (tenantId === undefined || job.tenantId === tenantId) && job.lastError !== undefined && job.status !== 'done',
      )
      .sort((a, b) => compareText(b.updatedAt, a.updatedAt))
      .slice(0, limit);
  }

  /** Removes the jobs matching `filter` (erase). */
  delete(filter: (job: Job) => boolean): void {
    for (let index = this.#jobs.length - 1; index >= 0; index -= 1)
      if (filter(this.#jobs[index]!)) this.#jobs.splice(index, 1);
  }

  #held(lease: JobLease): number {
    const index = this.#jobs.findIndex((job) => job.id === lease.id);
    const job = this.#jobs[index];
    if (job === undefined || job.status !== 'running' || job.leaseOwner !== lease.leaseOwner) {
      throw leaseLost(lease);
    }
    return index;
  }
}

function sameConversation(job: Job, scope: Scope): boolean {
  return job.tenantId === scope.tenantId && job.userId === scope.userId && job.conversationId === scope.conversationId;
}

function withoutLease(job: Job): Job {
  const { leaseOwner: _owner, leaseExpiresAt: _expires, ...rest } = job;
  return rest;
}
