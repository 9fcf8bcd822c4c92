import { MemoryError } from '@mnemo/core';
import type {
  CallOptions,
  Conversation,
  Entity,
  EntityInput,
  EraseResult,
  Fact,
  FactQuery,
  Job,
  JobBacklog,
  JobKindCount,
  MemoryFile,
  MemoryFileInfo,
  Message,
  MessageRange,
  Metadata,
  NewFact,
  NewMessage,
  NewSummary,
  Page,
  PageOptions,
  Relation,
  RelationInput,
  RoleCounts,
  Scope,
  Store,
  Summary,
  UsageEntry,
  UsageRecord,
  UsageTotals,
  UserScope,
} from '@mnemo/core';
import type {
  ConversationFilter,
  JobCompletion,
  JobFailure,
  JobLease,
  JobRequest,
  LeaseRequest,
  MemoryFileWrite,
  MessageEmbedding,
  SearchHit,
  SearchOptions,
} from '@mnemo/core/store-kit';
import pg from 'pg';
import type { PostgresPool } from './postgres-driver.js';
import { toPostgresError } from './postgres-error.js';
import { PostgresFileStore } from './postgres-file-store.js';
import { PostgresJobStore } from './postgres-job-store.js';
import { PostgresKnowledgeStore } from './postgres-knowledge-store.js';
import { PostgresMessageStore } from './postgres-message-store.js';
import { migratePostgresSchema, postgresMigrations, readPostgresSchemaVersion } from './postgres-migrations.js';
import { PostgresSearchStore } from './postgres-search-store.js';
import { PostgresSummaryStore } from './postgres-summary-store.js';
import { checkSchemaName, defaultPostgresSchema, postgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { adoptArrayVectors, findVectorExtension } from './postgres-vector-tables.js';

/** Options of {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /** A libpq-style URL, e.g. `postgres://mnemo:secret@127.0.0.1:5432/mnemo`. */
  readonly connectionString: string;
  /** Schema holding the store's tables, created on first use; default `mnemo`. Lower-case letters, digits and `_`. */
  readonly schema?: string;
  /** Most connections the pool opens; default 10. */
  readonly poolMax?: number;
  /** Server-side limit on one statement, in ms (a lock wait counts); past it the call fails with `unavailable`. Default 30,000; 0 for none. */
  readonly statementTimeoutMs?: number;
  /** How long a call waits for a connection (a new one, or a free one from a full pool), in ms; default 10,000. */
  readonly connectionTimeoutMs?: number;
  /**
   * Open an existing, current schema for reading only: nothing is created or migrated, and every
   * transaction is read-only (writes fail with `storage_failed`). `not_found` when the schema holds no
   * store. Default false.
   */
  readonly readonly?: boolean;
  /** Keep vectors in pgvector tables with HNSW indexes when the extension is installed (default true); `false` keeps `real[]` rows. All replicas of a store must agree. */
  readonly pgvector?: boolean;
}

/** Defaults of {@link PostgresStoreOptions}. */
export const postgresStoreDefaults = Object.freeze({
  schema: defaultPostgresSchema,
  poolMax: 10,
  statementTimeoutMs: 30_000,
  connectionTimeoutMs: 10_000,
  readonly: false,
  pgvector: true,
});

/**
 * The {@link Store} on PostgreSQL, for many stateless replicas on one database. Appends lock the
 * conversation's row, so seqs are gapless across connections and processes; jobs are leased with
 * `FOR UPDATE SKIP LOCKED`; summaries move the watermark under the same row lock. Driver errors become
 * `MemoryError`s: `unavailable` for lost races, timeouts and unreachable servers (retryable),
 * `storage_failed` otherwise; calls after `close()` or with an aborted signal are `unavailable`.
 */
export class PostgresStore implements Store {
  readonly #pool: PostgresPool;
  readonly #messages: PostgresMessageStore;
  readonly #summaries: PostgresSummaryStore;
  readonly #jobs: PostgresJobStore;
  readonly #files: PostgresFileStore;
  readonly #search: PostgresSearchStore;
  readonly #knowledge: PostgresKnowledgeStore;
  #closed = false;

  /** Wraps a pool whose schema is already migrated (see {@link createPostgresStore}); the store owns the pool and ends it on `close`. */
  constructor(pool: PostgresPool, options: { readonly schema?: string; readonly pgvector?: boolean } = {}) {
    const tables = postgresTables(options.schema ?? defaultPostgresSchema);
    this.#pool = pool;
    this.#messages = new PostgresMessageStore(pool, tables);
    this.#summaries = new PostgresSummaryStore(pool, tables);
    this.#jobs = new PostgresJobStore(pool, tables);
    this.#files = new PostgresFileStore(pool, tables);
    this.#search = new PostgresSearchStore(pool, tables, { usePgvector: options.pgvector ?? true });
    this.#knowledge = new PostgresKnowledgeStore(pool, tables);
  }

  async appendMessages(scope: Scope, messages: readonly NewMessage[], options?: CallOptions): Promise<Message[]> {
    return this.#run('appending messages', options, () => this.#messages.appendMessages(scope, messages));
  }

  async listMessages(scope: Scope, range?: MessageRange, options?: CallOptions): Promise<Message[]> {
    return this.#run('listing messages', options, () => this.#messages.listMessages(scope, range));
  }

  async getConversation(scope: Scope, options?: CallOptions): Promise<Conversation | undefined> {
    return this.#run('reading a conversation', options, () => this.#messages.getConversation(scope));
  }

  async listConversations(filter: ConversationFilter, page?: PageOptions, options?: CallOptions): Promise<Page<Conversation>> {
    return this.#run('listing conversations', options, () => this.#messages.listConversations(filter, page));
  }

  async updateConversationMetadata(scope: Scope, metadata: Metadata, options?: CallOptions): Promise<Conversation | undefined> {
    return this.#run('updating conversation metadata', options, () => this.#messages.updateConversationMetadata(scope, metadata));
  }

  async countMessagesByRole(scope: Scope, options?: CallOptions): Promise<RoleCounts> {
    return this.#run('counting messages by role', options, () => this.#messages.countMessagesByRole(scope));
  }

  async insertUsage(scope: Scope, record: UsageRecord, options?: CallOptions): Promise<void> {
    return this.#run('recording usage', options, () => this.#messages.insertUsage(scope, record));
  }

  async getUsageTotals(scope: Scope, options?: CallOptions): Promise<UsageTotals> {
    return this.#run('summing usage', options, () => this.#messages.getUsageTotals(scope));
  }

  async listUsage(scope: Scope, page?: PageOptions, options?: CallOptions): Promise<Page<UsageEntry>> {
    return this.#run('listing usage', options, () => this.#messages.listUsage(scope, page));
  }

  async insertSummary(scope: Scope, summary: NewSummary, options: CallOptions & { expectedWatermark: number }): Promise<Summary> {
    return this.#run('writing a summary', options, () => this.#summaries.insertSummary(scope, summary, options.expectedWatermark));
  }

  async getLatestSummary(scope: Scope, options?: CallOptions): Promise<Summary | undefined> {
    return this.#run('reading the latest summary', options, () => this.#summaries.getLatestSummary(scope));
  }

  async listSummaries(scope: Scope, options?: CallOptions): Promise<Summary[]> {
    return this.#run('listing summaries', options, () => this.#summaries.listSummaries(scope));
  }

  async getSummary(user: UserScope, summaryId: string, options?: CallOptions): Promise<Summary | undefined> {
    return this.#run('reading a summary', options, () => this.#summaries.getSummary(user, summaryId));
  }

  async enqueueJob(scope: Scope, request: JobRequest, options?: CallOptions): Promise<Job> {
    return this.#run('queueing a job', options, () => this.#jobs.enqueueJob(scope, request));
  }

  async leaseJob(request: LeaseRequest, options?: CallOptions): Promise<Job | undefined> {
    return this.#run('leasing a job', options, () => this.#jobs.leaseJob(request));
  }

  async completeJob(lease: JobLease, now: string, options?: CallOptions & JobCompletion): Promise<void> {
    return this.#run('completing a job', options, () => this.#jobs.completeJob(lease, now, options?.warning));
  }

  async failJob(lease: JobLease, failure: JobFailure, options?: CallOptions): Promise<Job> {
    return this.#run('failing a job', options, () => this.#jobs.failJob(lease, failure));
  }

  async listJobs(scope: Scope, options?: CallOptions): Promise<Job[]> {
    return this.#run('listing jobs', options, () => this.#jobs.listJobs(scope));
  }

  async countJobsByKind(filter: { tenantId?: string }, options?: CallOptions): Promise<JobKindCount[]> {
    return this.#run('counting jobs by kind', options, () => this.#jobs.countJobsByKind(filter.tenantId));
  }

  async listFailedJobs(filter: { tenantId?: string; limit: number }, options?: CallOptions): Promise<Job[]> {
    return this.#run('listing failed jobs', options, () => this.#jobs.listFailedJobs(filter.tenantId, filter.limit));
  }

  async upsertEmbeddings(scope: Scope, model: string, embeddings: readonly MessageEmbedding[], options?: CallOptions): Promise<void> {
    return this.#run('storing vectors', options, () => this.#search.upsertEmbeddings(scope, model, embeddings));
  }

  async listUnembeddedMessages(scope: Scope, model: string, limit: number, options?: CallOptions): Promise<Message[]> {
    return this.#run('listing messages without vectors', options, () => this.#search.listUnembeddedMessages(scope, model, limit));
  }

  async deleteEmbeddings(filter: { tenantId: string; userId?: string; exceptModel?: string }, options?: CallOptions): Promise<number> {
    return this.#run('deleting vectors', options, () => this.#search.deleteEmbeddings(filter));
  }

  async searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions, callOptions?: CallOptions): Promise<SearchHit[]> {
    return this.#run('searching by keyword', callOptions, () => this.#search.searchKeyword(user, terms, options));
  }

  async searchVector(user: UserScope, model: string, vector: Float32Array, options: SearchOptions, callOptions?: CallOptions): Promise<SearchHit[]> {
    return this.#run('searching by vector', callOptions, () => this.#search.searchVector(user, model, vector, options));
  }

  async insertFact(user: UserScope, fact: NewFact, options: CallOptions & { supersedes?: string } = {}): Promise<Fact> {
    return this.#run('storing a fact', options, () => this.#knowledge.insertFact(user, fact, options.supersedes));
  }

  async retireFact(user: UserScope, factId: string, at: string, options?: CallOptions): Promise<Fact> {
    return this.#run('retiring a fact', options, () => this.#knowledge.retireFact(user, factId, at));
  }

  async listFacts(user: UserScope, query: FactQuery = {}, options?: CallOptions): Promise<Fact[]> {
    return this.#run('listing facts', options, () => this.#knowledge.listFacts(user, query));
  }

  async upsertEntity(user: UserScope, input: EntityInput, now: string, options?: CallOptions): Promise<Entity> {
    return this.#run('storing an entity', options, () => this.#knowledge.upsertEntity(user, input, now));
  }

  async listEntities(user: UserScope, query: { query?: string; ids?: readonly string[]; limit?: number } = {}, options?: CallOptions): Promise<Entity[]> {
    return this.#run('listing entities', options, () => this.#knowledge.listEntities(user, query));
  }

  async insertRelation(user: UserScope, input: RelationInput, now: string, options?: CallOptions): Promise<Relation> {
    return this.#run('storing a relation', options, () => this.#knowledge.insertRelation(user, input, now));
  }

  async retireRelation(user: UserScope, relationId: string, at: string, options?: CallOptions): Promise<Relation> {
    return this.#run('retiring a relation', options, () => this.#knowledge.retireRelation(user, relationId, at));
  }

  async listRelations(user: UserScope, query: { entityIds: readonly string[]; includeHistory?: boolean }, options?: CallOptions): Promise<Relation[]> {
    return this.#run('listing relations', options, () => this.#knowledge.listRelations(user, query));
  }

  async getCursor(scope: Scope, name: string, options?: CallOptions): Promise<number> {
    return this.#run('reading a cursor', options, () => this.#knowledge.getCursor(scope, name));
  }

  async advanceCursor(scope: Scope, name: string, expected: number, next: number, options?: CallOptions): Promise<void> {
    return this.#run('moving a cursor', options, () => this.#knowledge.advanceCursor(scope, name, expected, next));
  }

  async getMemoryFile(user: UserScope, path: string, options?: CallOptions): Promise<MemoryFile | undefined> {
    return this.#run('reading a memory file', options, () => this.#files.getMemoryFile(user, path));
  }

  async listMemoryFiles(user: UserScope, directory: string, options?: CallOptions): Promise<MemoryFileInfo[]> {
    return this.#run('listing memory files', options, () => this.#files.listMemoryFiles(user, directory));
  }

  async putMemoryFile(user: UserScope, write: MemoryFileWrite, options?: CallOptions): Promise<MemoryFile> {
    return this.#run('writing a memory file', options, () => this.#files.putMemoryFile(user, write));
  }

  async deleteMemoryFiles(user: UserScope, path: string, options?: CallOptions): Promise<number> {
    return this.#run('deleting memory files', options, () => this.#files.deleteMemoryFiles(user, path));
  }

  async renameMemoryFiles(user: UserScope, from: string, to: string, now: string, options?: CallOptions): Promise<number> {
    return this.#run('renaming memory files', options, () => this.#files.renameMemoryFiles(user, from, to, now));
  }

  async deleteConversation(scope: Scope, options?: CallOptions): Promise<EraseResult> {
    return this.#run('erasing a conversation', options, () => this.#messages.deleteConversation(scope));
  }

  async deleteUser(user: UserScope, options?: CallOptions): Promise<EraseResult> {
    return this.#run('erasing a user', options, () =>
      runInTransaction(this.#pool, async (client) => {
        const erased = await this.#messages.deleteUser(client, user);
        await this.#knowledge.deleteUser(client, user);
        await this.#files.deleteUser(client, user);
        return erased;
      }),
    );
  }

  /** Ends the pool, waiting for calls in flight; closing twice is not an error. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#pool.end();
    } catch (error) {
      throw toPostgresError(error, 'closing the connection pool');
    }
  }

  async #run<T>(action: string, options: CallOptions | undefined, body: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new MemoryError('unavailable', `${action} failed: the store is closed`);
    const signal = options?.signal;
    // A statement sent to the server runs to its end (or its timeout) whatever the caller does next, so the
    // signal is honoured before starting, which is the only point where aborting changes nothing stored.
    if (signal?.aborted === true) {
      throw new MemoryError('unavailable', `${action} was aborted`, { cause: signal.reason, details: { aborted: true } });
    }
    try {
      return await body();
    } catch (error) {
      throw toPostgresError(error, action);
    }
  }
}

/**
 * Opens a pool on a PostgreSQL database, migrates the store's schema to the current version (creating it
 * on first use; see `migratePostgresSchema`), moves vectors stored as `real[]` into pgvector tables when
 * the extension is now installed, and returns a store that owns the pool. Throws `invalid_input` for bad
 * options, `unavailable` when the server cannot be reached in time, `not_found` for a read-only open of a
 * schema without a store, and `storage_failed` for a schema written by a newer mnemo (or, read-only, by an
 * older one) or any other failure (the pool is then ended).
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const { connectionString, schema, poolMax, statementTimeoutMs, connectionTimeoutMs, readonly, pgvector } = resolvePostgresStoreOptions(options);
  const pool = new pg.Pool({
    connectionString,
    max: poolMax,
    connectionTimeoutMillis: connectionTimeoutMs,
    application_name: 'mnemo',
    ...(statementTimeoutMs === 0 ? {} : { statement_timeout: statementTimeoutMs }),
    // Read-only at the server: a bug that writes fails instead of changing the store.
    ...(readonly ? { options: '-c default_transaction_read_only=on' } : {}),
  });
  // An idle connection that breaks (server restart, network drop) is reported here and discarded by the
  // pool; the next call opens a fresh one. Without a listener Node would crash the process on the event.
  pool.on('error', () => undefined);
  try {
    if (readonly) await checkCurrentSchema(pool, schema);
    else {
      await migratePostgresSchema(pool, { schema });
      const extensionSchema = pgvector ? await findVectorExtension(pool) : undefined;
      if (extensionSchema !== undefined) await adoptArrayVectors(pool, postgresTables(schema), extensionSchema);
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw toPostgresError(error, 'preparing the PostgreSQL store');
  }
  return new PostgresStore(pool, { schema, pgvector });
}

function resolvePostgresStoreOptions(options: PostgresStoreOptions): Required<PostgresStoreOptions> {
  const { connectionString } = options;
  if (typeof connectionString !== 'string' || connectionString.trim().length === 0) {
    throw new MemoryError('invalid_input', 'connectionString must be a PostgreSQL URL such as postgres://user:password@host/database', {
      details: { field: 'connectionString' },
    });
  }
  const resolved = {
    connectionString,
    schema: checkSchemaName(options.schema ?? postgresStoreDefaults.schema),
    poolMax: options.poolMax ?? postgresStoreDefaults.poolMax,
    statementTimeoutMs: options.statementTimeoutMs ?? postgresStoreDefaults.statementTimeoutMs,
    connectionTimeoutMs: options.connectionTimeoutMs ?? postgresStoreDefaults.connectionTimeoutMs,
    readonly: options.readonly ?? postgresStoreDefaults.readonly,
    pgvector: options.pgvector ?? postgresStoreDefaults.pgvector,
  };
  for (const field of ['readonly', 'pgvector'] as const) {
    if (typeof resolved[field] !== 'boolean') throw new MemoryError('invalid_input', `${field} must be a boolean`, { details: { field } });
  }
  if (!Number.isSafeInteger(resolved.poolMax) || resolved.poolMax < 1) {
    throw new MemoryError('invalid_input', 'poolMax must be a positive integer', { details: { field: 'poolMax' } });
  }
  for (const field of ['statementTimeoutMs', 'connectionTimeoutMs'] as const) {
    if (!Number.isSafeInteger(resolved[field]) || resolved[field] < 0) {
      throw new MemoryError('invalid_input', `${field} must be a non-negative integer of milliseconds`, { details: { field } });
    }
  }
  return Object.freeze(resolved);
}

// A read-only store can neither create nor migrate its schema: it opens only one this code reads as it is.
async function checkCurrentSchema(pool: PostgresPool, schema: string): Promise<void> {
  const version = await readPostgresSchemaVersion(pool, schema);
  const latest = postgresMigrations.length;
  if (version === 0) {
    throw new MemoryError('not_found', `schema "${schema}" holds no mnemo store (run mnemo migrate, or open it writable once)`, { details: { field: 'schema', schema } });
  }
  if (version !== latest) {
    const advice = version < latest ? 'which a read-only store cannot migrate; open it writable once (or run mnemo migrate)' : 'upgrade mnemo to open it';
    throw new MemoryError('storage_failed', `schema "${schema}" has version ${version}, this @mnemo/postgres reads version ${latest}, ${advice}`, {
      details: { schema, schemaVersion: version, supportedVersion: latest },
    });
  }
}
