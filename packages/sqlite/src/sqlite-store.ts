import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { MemoryError } from '@mnemo/core';
import { ComposedStore } from '@mnemo/core/store-kit';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import type { SqliteDatabase } from './sqlite-driver.js';
import { createBusyRetry } from './sqlite-busy-retry.js';
import { checkSqliteIntegrity } from './sqlite-integrity-check.js';
import { sqliteErrorCode, toSqliteError, type SqliteErrorContext } from './sqlite-error.js';
import { checkSqliteReadiness, probeSqliteWrite } from './sqlite-readiness.js';
import { SqliteFileStore } from './sqlite-file-store.js';
import { SqliteJobStore } from './sqlite-job-store.js';
import { SqliteKnowledgeStore } from './sqlite-knowledge-store.js';
import { SqliteMessageErasure } from './sqlite-message-erasure.js';
import { SqliteMessageStore } from './sqlite-message-store.js';
import { migrateSqliteSchema } from './sqlite-migrations.js';
import { SqliteSearchStore } from './sqlite-search-store.js';
import { SqliteStoreTransfer } from './sqlite-store-transfer.js';
import { SqliteSummaryStore } from './sqlite-summary-store.js';

/** Options of {@link createSqliteStore}. */
export interface SqliteStoreOptions {
  /** Database file (created if missing; its directory must exist), or `:memory:` for a private in-process database. */
  readonly path: string;
  /**
   * How long a call waits for another connection's lock before failing with `unavailable`, in ms; default
   * 5000. The wait is a timer between short attempts, never a sleep on the event loop (after opening:
   * the open itself, and the migrations, wait synchronously, as nothing is served yet).
   */
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
 * synchronous driver inline; a call that finds the write lock taken waits on a timer and tries again
 * (never a synchronous busy wait). Driver errors become `MemoryError`s (see `toSqliteError`):
 * `unavailable` when a lock outlasted the busy timeout, the disk is full or the file cannot be written,
 * `storage_failed` otherwise; calls after `close()` or with an aborted signal are `unavailable`.
 */
export class SqliteStore extends ComposedStore {
  readonly #path: string | undefined;
  readonly #integrity: { corruption?: string; checking: boolean };

  /**
   * Wraps a connection already configured and migrated (see {@link createSqliteStore}); the store owns and
   * closes it. `busyTimeoutMs` above 0: a call that finds the database locked runs again after a short
   * timer (see `createBusyRetry`) for up to that long, for a connection whose own `busy_timeout` is 0.
   * `path` lets errors and readiness tell a full disk; `readonly` says the connection was opened so.
   */
  constructor(database: SqliteDatabase, options: SqliteErrorContext & { readonly busyTimeoutMs?: number } = {}) {
    const context: SqliteErrorContext = {
      ...(options.path === undefined ? {} : { path: options.path }),
      ...(options.readonly === undefined ? {} : { readonly: options.readonly }),
    };
    const retry =
      options.busyTimeoutMs !== undefined && options.busyTimeoutMs > 0
        ? createBusyRetry(options.busyTimeoutMs)
        : undefined;
    const integrity: { corruption?: string; checking: boolean } = { checking: false };
    const messages = new SqliteMessageStore(database);
    const search = new SqliteSearchStore(database);
    const knowledge = new SqliteKnowledgeStore(database);
    const files = new SqliteFileStore(database);
    const erasure = new SqliteMessageErasure(database);
    super({
      messages,
      usage: messages,
      summaries: new SqliteSummaryStore(database),
      jobs: new SqliteJobStore(database),
      search,
      knowledge,
      files,
      transfer: new SqliteStoreTransfer(database, search),
      erasure: {
        deleteConversation: (scope) =>
          database
            .transaction(() => {
              search.deleteVectorsOf('tenant_id = ? AND user_id = ? AND conversation_id = ?', [
                scope.tenantId,
                scope.userId,
                scope.conversationId,
              ]);
              knowledge.deleteConversation(scope);
              return messages.deleteConversation(scope);
            })
            .immediate(),
        deleteUser: (user) =>
          database
            .transaction(() => {
              files.deleteUser(user);
              search.deleteVectorsOf('tenant_id = ? AND user_id = ?', [user.tenantId, user.userId]);
              knowledge.deleteUser(user);
              const deleted = messages.deleteUser(user);
              // After the messages, whose deletions the trigger has just counted.
              search.forgetUsers('tenant_id = ? AND user_id = ?', [user.tenantId, user.userId]);
              return deleted;
            })
            .immediate(),
        eraseMessages: (user, selection, options) => erasure.erase(user, selection, options),
        listErasures: (filter) => erasure.list(filter),
      },
      toError: (error, action) => toSqliteError(error, action, context),
      runCall: async (action, attempt) => {
        try {
          return await (retry === undefined ? attempt() : retry(action, attempt));
        } catch (error) {
          // A damaged page stays damaged: readiness reports it from now on.
          if (sqliteErrorCode(error)?.startsWith('SQLITE_CORRUPT') === true)
            integrity.corruption ??= toSqliteError(error, action, context).message;
          throw error;
        }
      },
      checkReadiness: () =>
        checkSqliteReadiness(database, {
          ...context,
          corruption: () => integrity.corruption,
          checking: () => integrity.checking,
        }),
      // Closing checkpoints the WAL when this is the last connection.
      closeConnection: () => {
        try {
          database.close();
        } catch (error) {
          throw toSqliteError(error, 'closing the database');
        }
      },
    });
    this.#path = options.path;
    this.#integrity = integrity;
  }

  /**
   * Checks every page of the file on a thread (see `checkSqliteIntegrity`) without holding the event
   * loop; problems found make readiness fail from then on (a damaged page stays damaged), and are
   * returned. Resolves with none for `:memory:` or a store made without a path.
   */
  async checkIntegrity(): Promise<string[]> {
    if (this.#path === undefined) return [];
    this.#integrity.checking = true;
    try {
      const problems = await checkSqliteIntegrity(this.#path);
      if (problems.length > 0)
        this.#integrity.corruption ??= `the database file is damaged (${problems.slice(0, 3).join('; ')}); restore it from a backup`;
      return problems;
    } finally {
      this.#integrity.checking = false;
    }
  }
}

/**
 * Opens (creating if needed) a SQLite database, sets WAL (files only), `busy_timeout`, `synchronous=NORMAL`
 * and `foreign_keys=ON`, migrates it to the current schema, checks with one write that the file can be
 * written (unless read-only), and returns a store that owns the connection.
 * Throws `invalid_input` for bad options or a missing directory, `not_found` for a missing file opened
 * read-only, `storage_failed` for a file that is not a SQLite database or has a newer schema, and
 * `unavailable` when another process holds the lock past the busy timeout, the disk is full or the file
 * cannot be written.
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const { path, busyTimeoutMs, readonly } = resolveSqliteStoreOptions(options);
  const memory = path === memoryPath;
  if (!memory) checkFileLocation(path, readonly);
  const context: SqliteErrorContext = { ...(memory ? {} : { path }), readonly };
  let database: Database.Database;
  try {
    database = new Database(path, { readonly, fileMustExist: readonly, timeout: busyTimeoutMs });
  } catch (error) {
    throw withPath(toSqliteError(error, 'opening the database', context), path);
  }
  try {
    database.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // WAL lets readers run beside the one writer and is what makes several processes on one file
    // practical; a read-only connection cannot change the journal mode, and `:memory:` has no WAL.
    if (!memory && !readonly) database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    // Deleted rows are overwritten with zeros in their pages, so an erased message leaves no bytes behind.
    database.pragma('secure_delete = ON');
    // Vectors live in a plain table (decision 0025); sqlite-vec is loaded only for a file that still
    // holds its tables, which migrations 6 and 7 read and drop.
    if (holdsSqliteVecTables(database)) sqliteVec.load(database);
    migrateSqliteSchema(database, { readonly });
  } catch (error) {
    database.close();
    throw withPath(toSqliteError(error, 'preparing the database', context), path);
  }
  if (!readonly && !memory) {
    // SQLite opens a file it may not write (permissions, `chattr +i`) read-only without a word; a server
    // on it would answer every append with an error. Refuse it here, where the operator is looking.
    try {
      probeSqliteWrite(database);
    } catch (error) {
      database.close();
      throw withPath(toSqliteError(error, 'writing to the database', context), path);
    }
  }
  // From here on a lock held elsewhere is waited for between attempts, off the event loop (createBusyRetry).
  database.pragma('busy_timeout = 0');
  return new SqliteStore(database, { ...context, busyTimeoutMs });
}

/** Whether the file has a table of sqlite-vec's `vec0` module (written by a version before decision 0025). */
function holdsSqliteVecTables(database: Database.Database): boolean {
  return (
    database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING vec0(%' LIMIT 1").get() !==
    undefined
  );
}

/**
 * The former name of {@link createSqliteStore}, kept because earlier READMEs showed it.
 * @deprecated Use {@link createSqliteStore}; the adapters' factories are `createSqliteStore` and `createPostgresStore`.
 */
export const openSqliteStore = createSqliteStore;

function resolveSqliteStoreOptions(options: SqliteStoreOptions): Required<SqliteStoreOptions> {
  const { path, busyTimeoutMs = defaultBusyTimeoutMs, readonly = false } = options;
  if (typeof path !== 'string' || path.trim().length === 0) {
    throw new MemoryError('invalid_input', 'path must be a file path or ":memory:"', { details: { field: 'path' } });
  }
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new MemoryError('invalid_input', 'busyTimeoutMs must be a non-negative integer of milliseconds', {
      details: { field: 'busyTimeoutMs' },
    });
  }
  if (typeof readonly !== 'boolean') {
    throw new MemoryError('invalid_input', 'readonly must be a boolean', { details: { field: 'readonly' } });
  }
  if (readonly && path === memoryPath) {
    throw new MemoryError('invalid_input', 'an in-memory database cannot be opened read-only', {
      details: { field: 'readonly' },
    });
  }
  return Object.freeze({ path, busyTimeoutMs, readonly });
}

// SQLite's own message for both cases is "unable to open database file"; say which it is.
function checkFileLocation(path: string, readonly: boolean): void {
  const directory = dirname(resolve(path));
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    throw new MemoryError(
      'invalid_input',
      `cannot open SQLite database ${path}: directory ${directory} does not exist; create it first`,
      {
        details: { field: 'path', path, directory },
      },
    );
  }
  if (readonly && !existsSync(path)) {
    throw new MemoryError('not_found', `cannot open SQLite database ${path} read-only: the file does not exist`, {
      details: { field: 'path', path },
    });
  }
}

function withPath(error: MemoryError, path: string): MemoryError {
  return new MemoryError(error.code, `cannot open SQLite database ${path}: ${error.message}`, {
    cause: error.cause,
    details: { ...error.details, path },
  });
}
