import { jobKinds } from '@mnemo/core';
import type { Job, JobKind, JobKindCount, JobStatus, Scope } from '@mnemo/core';
import {
  checkCount,
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
import type { SqliteDatabase } from './sqlite-driver.js';
import { createStatementCache, type SqliteStatementCache } from './sqlite-statement-cache.js';
import { scopeKey, toEpochMs, toIsoTime } from './sqlite-values.js';

const inConversation = 'tenant_id = ? AND user_id = ? AND conversation_id = ?';

const sql = {
  selectPending: `SELECT ${jobColumns} FROM jobs WHERE ${inConversation} AND kind = ? AND status = 'pending' LIMIT 1`,
  insertJob: `INSERT INTO jobs (${jobColumns}) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, NULL, NULL, NULL, ?, ?)`,
  // Leases that lapsed after the last allowed attempt: the job keeps crashing its workers; give it up.
  expireExhausted: `UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?,
    last_error = 'lease expired after ' || attempts || ' attempts'
    WHERE status = 'running' AND lease_expires_at <= ? AND attempts >= max_attempts`,
  selectDue: `SELECT ${jobColumns} FROM jobs
    WHERE ((status = 'pending' AND run_at <= ?) OR (status = 'running' AND lease_expires_at <= ?)) AND kind IN (SELECT value FROM json_each(?))
    ORDER BY run_at, rowid LIMIT 1`,
  lease: `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?, lease_expires_at = ?, updated_at = ? WHERE id = ?`,
  selectById: `SELECT ${jobColumns} FROM jobs WHERE id = ?`,
  complete: `UPDATE jobs SET status = 'done', lease_owner = NULL, lease_expires_at = NULL, updated_at = ?, last_error = coalesce(?, last_error)
    WHERE id = ? AND status = 'running' AND lease_owner = ?`,
  fail: `UPDATE jobs SET status = ?, run_at = coalesce(?, run_at), last_error = ?, lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
    WHERE id = ? AND status = 'running' AND lease_owner = ?`,
  selectForConversation: `SELECT ${jobColumns} FROM jobs WHERE ${inConversation} ORDER BY rowid`,
  countByKindAll:
    'SELECT kind, status, count(*) AS count, min(created_at) AS oldest FROM jobs GROUP BY kind, status ORDER BY kind, status',
  countByKindTenant:
    'SELECT kind, status, count(*) AS count, min(created_at) AS oldest FROM jobs WHERE tenant_id = ? GROUP BY kind, status ORDER BY kind, status',
  failedAll: `SELECT ${jobColumns} FROM jobs WHERE last_error IS NOT NULL AND status <> 'done' ORDER BY updated_at DESC, rowid DESC LIMIT ?`,
  failedTenant: `SELECT ${jobColumns} FROM jobs WHERE tenant_id = ? AND last_error IS NOT NULL AND status <> 'done' ORDER BY updated_at DESC, rowid DESC LIMIT ?`,
} as const;

/** The SQL of the job queue: leases taken in `BEGIN IMMEDIATE` transactions, so each job runs in one worker at a time across processes. */
export class SqliteJobStore {
  readonly #database: SqliteDatabase;
  readonly #statement: SqliteStatementCache;

  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#statement = createStatementCache(database);
  }

  enqueueJob(scope: Scope, request: JobRequest): Job {
    const runAtMs = toEpochMs('runAt', request.runAt);
    checkCount('maxAttempts', request.maxAttempts);
    const key = scopeKey(scope);
    // Most appends find the job of the previous one still pending: a plain read (no write lock) answers
    // them. It absorbs the request exactly as the check under the lock would: a job pending when this
    // read ran is leased after it, so its run reads the messages appended before this call.
    const pendingNow = this.#statement(sql.selectPending).get(...key, request.kind) as JobRow | undefined;
    if (pendingNow !== undefined) return toJob(pendingNow);
    return this.#database
      .transaction(() => {
        const pending = this.#statement(sql.selectPending).get(...key, request.kind) as JobRow | undefined;
        if (pending !== undefined) return toJob(pending);
        const id = crypto.randomUUID();
        const now = Date.now();
        this.#statement(sql.insertJob).run(id, ...key, request.kind, request.maxAttempts, runAtMs, now, now);
        return toJob(this.#statement(sql.selectById).get(id) as JobRow);
      })
      .immediate();
  }

  leaseJob(request: LeaseRequest): Job | undefined {
    const nowMs = toEpochMs('now', request.now);
    checkCount('leaseMs', request.leaseMs);
    const kinds = JSON.stringify(request.kinds ?? jobKinds);
    return this.#database
      .transaction(() => {
        this.#statement(sql.expireExhausted).run(nowMs, nowMs);
        const due = this.#statement(sql.selectDue).get(nowMs, nowMs, kinds) as JobRow | undefined;
        if (due === undefined) return undefined;
        this.#statement(sql.lease).run(request.workerId, nowMs + request.leaseMs, nowMs, due.id);
        return toJob(this.#statement(sql.selectById).get(due.id) as JobRow);
      })
      .immediate();
  }

  completeJob(lease: JobLease, now: string, options: JobCompletion = {}): void {
    const { warning } = options;
    const changes = this.#statement(sql.complete).run(
      toEpochMs('now', now),
      warning ?? null,
      lease.id,
      lease.leaseOwner ?? null,
    ).changes;
    if (changes === 0) throw leaseLost(lease);
  }

  failJob(lease: JobLease, failure: JobFailure): Job {
    const retryAtMs = failure.retryAt === undefined ? null : toEpochMs('retryAt', failure.retryAt);
    const status: JobStatus = retryAtMs === null ? 'failed' : 'pending';
    const changes = this.#statement(sql.fail).run(
      status,
      retryAtMs,
      failure.error,
      toEpochMs('now', failure.now),
      lease.id,
      lease.leaseOwner ?? null,
    ).changes;
    if (changes === 0) throw leaseLost(lease);
    return toJob(this.#statement(sql.selectById).get(lease.id) as JobRow);
  }

  listJobs(scope: Scope): Job[] {
    return (this.#statement(sql.selectForConversation).all(...scopeKey(scope)) as JobRow[]).map(toJob);
  }

  countJobsByKind(filter: { tenantId?: string }): JobKindCount[] {
    const { tenantId } = filter;
    const rows = (
      tenantId === undefined
        ? this.#statement(sql.countByKindAll).all()
        : this.#statement(sql.countByKindTenant).all(tenantId)
    ) as {
      kind: JobKind;
      status: JobStatus;
      count: number;
      oldest: number;
    }[];
    return rows.map((row) => ({
      kind: row.kind,
      status: row.status,
      count: row.count,
      oldestCreatedAt: toIsoTime(row.oldest),
    }));
  }

  listFailedJobs(filter: { tenantId?: string; limit: number }): Job[] {
    const { tenantId, limit } = filter;
    checkCount('limit', limit);
    const rows =
      tenantId === undefined
        ? this.#statement(sql.failedAll).all(limit)
        : this.#statement(sql.failedTenant).all(tenantId, limit);
    return (rows as JobRow[]).map(toJob);
  }
}

function toJob(row: JobRow): Job {
  return jobFromRow(row, toIsoTime);
}
