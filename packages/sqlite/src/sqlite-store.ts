import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { MemoryError } from '@mnemo/core';
import type {
  CallOptions,
  Conversation,
  EraseResult,
  Job,
  JobBacklog,
  JobKindCount,
  MemoryFile,
  MemoryFileInfo,
  Entity,
  EntityInput,
  Fact,
  FactQuery,
  NewFact,
  Relation,
  RelationInput,
  Message,
  MessageRange,
  Metadata,
  RoleCounts,
  NewMessage,
  NewSummary,
  Page,
  PageOptions,
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
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import type { SqliteDatabase } from './sqlite-driver.js';
import { toSqliteError } from './sqlite-error.js';
import { SqliteFileStore } from './sqlite-file-store.js';
import { SqliteJobStore } from './sqlite-job-store.js';
import { SqliteKnowledgeStore } from './sqlite-knowledge-store.js';
import { SqliteMessageStore } from './sqlite-message-store.js';
import { migrateSqliteDatabase } from './sqlite-migrations.js';
import { SqliteSearchStore } from './sqlite-search-store.js';
import { SqliteSummaryStore } from './sqlite-summary-store.js';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /** Database file (created if missing; its directory must exist), or `:memory:` for a private in-process database. */
  readonly path: string;
  /** How long a write waits for another connection's lock before failing with `unavailable`, in ms; default 5000. */
  readonly busyTimeoutMs?: number;
  /** Open an existing, current database for reading only; every write fails with `storage_failed`. Default false. */
  readonly readonly?: boolean;
}

/** Default of {@link SqliteStoreOptions.busyTimeoutMs}. */
export const defaultBusyTimeoutMs = 5000;

const memoryPath = ':memory:';

/**
 * The {@link Store} on SQLite: durable, and safe with many processes on one file (WAL, a busy timeout,
 * and appends in `BEGIN IMMEDIATE` transactions). Methods are async as the port requires but run the
 * synchronous driver inline. Driver errors become `MemoryError`s: `unavailable` when a lock outlasted the
 * busy timeout, `storage_failed` otherwise; calls after `close()` or with an aborted signal are `unavailable`.
 */
export class SqliteStore implements Store {
  readonly #database: SqliteDatabase;
  readonly #messages: SqliteMessageStore;
  readonly #summaries: SqliteSummaryStore;
  readonly #jobs: SqliteJobStore;
  readonly #files: SqliteFileStore;
  readonly #search: SqliteSearchStore;
  readonly #knowledge: SqliteKnowledgeStore;
  #closed = false;

  /** Wraps a connection already configured and migrated (see {@link openSqliteStore}); the store owns and closes it. */
  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#messages = new SqliteMessageStore(database);
    this.#summaries = new SqliteSummaryStore(database);
    this.#jobs = new SqliteJobStore(database);
    this.#files = new SqliteFileStore(database);
    this.#search = new SqliteSearchStore(database);
    this.#knowledge = new SqliteKnowledgeStore(database);
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
    this.#run('recording usage', options, () => this.#messages.insertUsage(scope, record));
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
    this.#run('completing a job', options, () => this.#jobs.completeJob(lease, now, options?.warning));
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
    this.#run('storing vectors', options, () => this.#search.upsertEmbeddings(scope, model, embeddings));
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
    this.#run('moving a cursor', options, () => this.#knowledge.advanceCursor(scope, name, expected, next));
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
    return this.#run('erasing a conversation', options, () =>
      this.#database
        .transaction(() => {
          this.#search.deleteVectorsOf('tenant_id = ? AND user_id = ? AND conversation_id = ?', [scope.tenantId, scope.userId, scope.conversationId]);
          this.#knowledge.deleteConversation(scope);
          return this.#messages.deleteConversation(scope);
        })
        .immediate(),
    );
  }

  async deleteUser(user: UserScope, options?: CallOptions): Promise<EraseResult> {
    return this.#run('erasing a user', options, () =>
      this.#database
        .transaction(() => {
          this.#files.deleteUser(user);
          this.#search.deleteVectorsOf('tenant_id = ? AND user_id = ?', [user.tenantId, user.userId]);
          this.#knowledge.deleteUser(user);
          return this.#messages.deleteUser(user);
        })
        .immediate(),
    );
  }

  /** Closes the connection (checkpointing the WAL when it is the last one); closing twice is not an error. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#database.close();
    } catch (error) {
      throw toSqliteError(error, 'closing the database');
    }
  }

  #run<T>(action: string, options: CallOptions | undefined, body: () => T): T {
    if (this.#closed) throw new MemoryError('unavailable', `${action} failed: the store is closed`);
    const signal = options?.signal;
    // The driver is synchronous: once a statement starts it cannot be interrupted, so the signal is
    // honoured before starting, which is the only point where aborting changes nothing stored.
    if (signal?.aborted === true) {
      throw new MemoryError('unavailable', `${action} was aborted`, { cause: signal.reason, details: { aborted: true } });
    }
    try {
      return body();
    } catch (error) {
      throw toSqliteError(error, action);
    }
  }
}

/**
 * Opens (creating if needed) a SQLite database, sets WAL (files only), `busy_timeout`, `synchronous=NORMAL`
 * and `foreign_keys=ON`, migrates it to the current schema, and returns a store that owns the connection.
 * Throws `invalid_input` for bad options or a missing directory, `not_found` for a missing file opened
 * read-only, `storage_failed` for a file that is not a SQLite database or has a newer schema, and
 * `unavailable` when another process holds the lock past the busy timeout.
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const { path, busyTimeoutMs, readonly } = resolveSqliteStoreOptions(options);
  const memory = path === memoryPath;
  if (!memory) checkFileLocation(path, readonly);
  let database: Database.Database;
  try {
    database = new Database(path, { readonly, fileMustExist: readonly, timeout: busyTimeoutMs });
  } catch (error) {
    throw withPath(toSqliteError(error, 'opening the database'), path);
  }
  try {
    database.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // WAL lets readers run beside the one writer and is what makes several processes on one file
    // practical; a read-only connection cannot change the journal mode, and `:memory:` has no WAL.
    if (!memory && !readonly) database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    // sqlite-vec ships its binary inside the npm package; it must be loaded on every connection.
    sqliteVec.load(database);
    migrateSqliteDatabase(database, { readonly });
  } catch (error) {
    database.close();
    throw withPath(toSqliteError(error, 'preparing the database'), path);
  }
  return new SqliteStore(database);
}

function resolveSqliteStoreOptions(options: SqliteStoreOptions): Required<SqliteStoreOptions> {
  const { path, busyTimeoutMs = defaultBusyTimeoutMs, readonly = false } = options;
  if (typeof path !== 'string' || path.trim().length === 0) {
    throw new MemoryError('invalid_input', 'path must be a file path or ":memory:"', { details: { field: 'path' } });
  }
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new MemoryError('invalid_input', 'busyTimeoutMs must be a non-negative integer of milliseconds', { details: { field: 'busyTimeoutMs' } });
  }
  if (typeof readonly !== 'boolean') {
    throw new MemoryError('invalid_input', 'readonly must be a boolean', { details: { field: 'readonly' } });
  }
  if (readonly && path === memoryPath) {
    throw new MemoryError('invalid_input', 'an in-memory database cannot be opened read-only', { details: { field: 'readonly' } });
  }
  return Object.freeze({ path, busyTimeoutMs, readonly });
}

// SQLite's own message for both cases is "unable to open database file"; say which it is.
function checkFileLocation(path: string, readonly: boolean): void {
  const directory = dirname(resolve(path));
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    throw new MemoryError('invalid_input', `cannot open SQLite database ${path}: directory ${directory} does not exist; create it first`, {
      details: { field: 'path', path, directory },
    });
  }
  if (readonly && !existsSync(path)) {
    throw new MemoryError('not_found', `cannot open SQLite database ${path} read-only: the file does not exist`, { details: { field: 'path', path } });
  }
}

function withPath(error: MemoryError, path: string): MemoryError {
  return new MemoryError(error.code, `cannot open SQLite database ${path}: ${error.message}`, {
    cause: error.cause,
    details: { ...error.details, path },
  });
}
