import { jobKinds } from '@mnemo/core';
import type { Job, JobKind, JobKindCount, JobStatus, Scope } from '@mnemo/core';
import {
  jobColumns,
  jobFromRow,
  leaseLost,
  type JobCompletion,
  type JobFailure,
  type JobLease,
  type JobRequest,
  type JobRow,
  type LeaseRequest,
} from '@mnemo/core/store-kit';
import type { PostgresPool } from './postgres-driver.js';
import { inConversation } from './postgres-message-store.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { checkCount, checkTime, scopeKey, toInteger, toIsoTime } from './postgres-values.js';

function statements(t: PostgresTables) {
  return {
    // Serializes enqueuers of one conversation and kind (the key is hashed to a 64-bit advisory lock), so
    // two of them cannot both miss the pending job and insert two. A hash collision only makes two
    // unrelated enqueues wait for each other's short transaction.
    lockEnqueue: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
    selectPending: `SELECT ${jobColumns} FROM ${t.jobs} WHERE ${inConversation} AND kind = $4 AND status = 'pending' ORDER BY position LIMIT 1`,
    insertJob: `INSERT INTO ${t.jobs} (tenant_id, user_id, conversation_id, id, kind, status, attempts, max_attempts, run_at, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7, $8, $8) RETURNING ${jobColumns}`,
    // One statement: give up leases that lapsed after the last allowed attempt (the job keeps killing its
    // workers), then lease the oldest due job. SKIP LOCKED makes concurrent workers pass over the rows
    // another worker is taking instead of queueing behind it, so each job goes to exactly one of them.
    // The two updates never touch the same row: one takes exhausted jobs, the other only the rest.
    lease: `WITH given_up AS (
        UPDATE ${t.jobs} SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL, updated_at = $1,
          last_error = 'lease expired after ' || attempts || ' attempts'
        WHERE id IN (SELECT id FROM ${t.jobs} WHERE status = 'running' AND lease_expires_at <= $1 AND attempts >= max_attempts FOR UPDATE SKIP LOCKED)
      )
      UPDATE ${t.jobs} SET status = 'running', attempts = attempts + 1, lease_owner = $2, lease_expires_at = $3, updated_at = $1
      WHERE id = (
        SELECT id FROM ${t.jobs}
        WHERE ((status = 'pending' AND run_at <= $1) OR (status = 'running' AND lease_expires_at <= $1 AND attempts < max_attempts))
          AND kind = ANY($4::text[])
        ORDER BY run_at, position LIMIT 1 FOR UPDATE SKIP LOCKED
      )
      RETURNING ${jobColumns}`,
    complete: `UPDATE ${t.jobs} SET status = 'done', lease_owner = NULL, lease_expires_at = NULL, updated_at = $1, last_error = coalesce($4, last_error)
      WHERE id = $2 AND status = 'running' AND lease_owner = $3`,
    fail: `UPDATE ${t.jobs} SET status = $1, run_at = coalesce($2, run_at), last_error = $3, lease_owner = NULL, lease_expires_at = NULL, updated_at = $4
      WHERE id = $5 AND status = 'running' AND lease_owner = $6 RETURNING ${jobColumns}`,
    selectForConversation: `SELECT ${jobColumns} FROM ${t.jobs} WHERE ${inConversation} ORDER BY position`,
    countByKindAll: `SELECT kind, status, count(*) AS count, min(created_at) AS oldest FROM ${t.jobs} GROUP BY kind, status ORDER BY kind, status`,
    countByKindTenant: `SELECT kind, status, count(*) AS count, min(created_at) AS oldest FROM ${t.jobs} WHERE tenant_id = $1
      GROUP BY kind, status ORDER BY kind, status`,
    failedAll: `SELECT ${jobColumns} FROM ${t.jobs} WHERE last_error IS NOT NULL AND status <> 'done' ORDER BY updated_at DESC, position DESC LIMIT $1`,
    failedTenant: `SELECT ${jobColumns} FROM ${t.jobs} WHERE tenant_id = $1 AND last_error IS NOT NULL AND status <> 'done'
      ORDER BY updated_at DESC, position DESC LIMIT $2`,
  };
}

/** The SQL of the job queue: leases taken with `FOR UPDATE SKIP LOCKED`, so each job runs in one worker at a time across processes. */
export class PostgresJobStore {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #sql: ReturnType<typeof statements>;

  constructor(pool: PostgresPool, tables: PostgresTables) {
    this.#pool = pool;
    this.#tables = tables;
    this.#sql = statements(tables);
  }

  async enqueueJob(scope: Scope, request: JobRequest): Promise<Job> {
    const runAt = checkTime('runAt', request.runAt);
    const maxAttempts = checkCount('maxAttempts', request.maxAttempts);
    const key = scopeKey(scope);
    // Most appends find the job of the previous one still pending: one plain read answers them, without
    // a transaction and its advisory lock. It absorbs the request exactly as the check under the lock
    // would: a job pending when this read ran is leased after it, so its run reads the messages appended before this call.
    const pendingNow = (await this.#pool.query<JobRow>(this.#sql.selectPending, [...key, request.kind])).rows[0];
    if (pendingNow !== undefined) return toJob(pendingNow);
    return runInTransaction(this.#pool, async (client) => {
      // Control characters cannot occur in ids (resolveScope refuses them), so \u001f separates unambiguously.
      await client.query(this.#sql.lockEnqueue, [[this.#tables.schema, ...key, request.kind].join('\u001f')]);
      const pending = (await client.query<JobRow>(this.#sql.selectPending, [...key, request.kind])).rows[0];
      if (pending !== undefined) return toJob(pending);
      const now = new Date().toISOString();
      const inserted = await client.query<JobRow>(this.#sql.insertJob, [
        ...key,
        crypto.randomUUID(),
        request.kind,
        maxAttempts,
        runAt,
        now,
      ]);
      return toJob(inserted.rows[0]!);
    });
  }

  async leaseJob(request: LeaseRequest): Promise<Job | undefined> {
    const nowMs = Date.parse(checkTime('now', request.now));
    const leaseMs = checkCount('leaseMs', request.leaseMs);
    const kinds = [...(request.kinds ?? jobKinds)];
    const now = new Date(nowMs).toISOString();
    const expiresAt = new Date(nowMs + leaseMs).toISOString();
    const row = (await this.#pool.query<JobRow>(this.#sql.lease, [now, request.workerId, expiresAt, kinds])).rows[0];
    return row === undefined ? undefined : toJob(row);
  }

  async completeJob(lease: JobLease, now: string, options: JobCompletion = {}): Promise<void> {
    const { warning } = options;
    const result = await this.#pool.query(this.#sql.complete, [
      checkTime('now', now),
      lease.id,
      lease.leaseOwner ?? null,
      warning ?? null,
    ]);
    if (result.rowCount === 0) throw leaseLost(lease);
  }

  async failJob(lease: JobLease, failure: JobFailure): Promise<Job> {
    const retryAt = failure.retryAt === undefined ? null : checkTime('retryAt', failure.retryAt);
    const status: JobStatus = retryAt === null ? 'failed' : 'pending';
    const parameters = [
      status,
      retryAt,
      failure.error,
      checkTime('now', failure.now),
      lease.id,
      lease.leaseOwner ?? null,
    ];
    const row = (await this.#pool.query<JobRow>(this.#sql.fail, parameters)).rows[0];
    if (row === undefined) throw leaseLost(lease);
    return toJob(row);
  }

  async listJobs(scope: Scope): Promise<Job[]> {
    return (await this.#pool.query<JobRow>(this.#sql.selectForConversation, scopeKey(scope))).rows.map(toJob);
  }

  async countJobsByKind(filter: { tenantId?: string }): Promise<JobKindCount[]> {
    const { tenantId } = filter;
    type Row = { kind: JobKind; status: JobStatus; count: unknown; oldest: unknown };
    const result =
      tenantId === undefined
        ? await this.#pool.query<Row>(this.#sql.countByKindAll)
        : await this.#pool.query<Row>(this.#sql.countByKindTenant, [tenantId]);
    return result.rows.map((row) => ({
      kind: row.kind,
      status: row.status,
      count: toInteger(row.count),
      oldestCreatedAt: toIsoTime(row.oldest),
    }));
  }

  async listFailedJobs(filter: { tenantId?: string; limit: number }): Promise<Job[]> {
    const { tenantId, limit } = filter;
    const count = checkCount('limit', limit);
    const result =
      tenantId === undefined
        ? await this.#pool.query<JobRow>(this.#sql.failedAll, [count])
        : await this.#pool.query<JobRow>(this.#sql.failedTenant, [tenantId, count]);
    return result.rows.map(toJob);
  }
}

function toJob(row: JobRow): Job {
  return jobFromRow(row, toIsoTime);
}
