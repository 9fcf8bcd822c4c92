import { MemoryError, type ReadinessCheck, type StoreReadiness, type UserScope } from '@mnemo/core';
import { ComposedStore } from '@mnemo/core/store-kit';
import pg from 'pg';
import type { PostgresPool } from './postgres-driver.js';
import { toPostgresError } from './postgres-error.js';
import { PostgresFileStore } from './postgres-file-store.js';
import { PostgresJobStore } from './postgres-job-store.js';
import { PostgresKnowledgeStore } from './postgres-knowledge-store.js';
import { PostgresMessageErasure } from './postgres-message-erasure.js';
import { PostgresMessageStore } from './postgres-message-store.js';
import { migratePostgresSchema, postgresMigrations, readPostgresSchemaVersion } from './postgres-migrations.js';
import { PostgresSearchStore } from './postgres-search-store.js';
import { PostgresStoreTransfer } from './postgres-store-transfer.js';
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
export class PostgresStore extends ComposedStore {
  readonly #search: PostgresSearchStore;

  /** Wraps a pool whose schema is already migrated (see {@link createPostgresStore}); the store owns the pool and ends it on `close`. */
  constructor(
    pool: PostgresPool,
    options: { readonly schema?: string; readonly pgvector?: boolean; readonly readonly?: boolean } = {},
  ) {
    const tables = postgresTables(options.schema ?? defaultPostgresSchema);
    const messages = new PostgresMessageStore(pool, tables);
    const knowledge = new PostgresKnowledgeStore(pool, tables);
    const files = new PostgresFileStore(pool, tables);
    const search = new PostgresSearchStore(pool, tables, { usePgvector: options.pgvector ?? true });
    const erasure = new PostgresMessageErasure(pool, tables);
    super({
      messages,
      usage: messages,
      summaries: new PostgresSummaryStore(pool, tables),
      jobs: new PostgresJobStore(pool, tables),
      search,
      knowledge,
      files,
      transfer: new PostgresStoreTransfer(pool, tables),
      erasure: {
        deleteConversation: (scope) => messages.deleteConversation(scope),
        deleteUser: (user) =>
          runInTransaction(pool, async (client) => {
            const erased = await messages.deleteUser(client, user);
            await knowledge.deleteUser(client, user);
            await files.deleteUser(client, user);
            return erased;
          }),
        eraseMessages: (user, selection, options) => erasure.erase(user, selection, options),
        listErasures: (filter) => erasure.list(filter),
      },
      toError: toPostgresError,
      checkReadiness: () => checkPostgresReadiness(pool, tables.conversations, options.readonly === true),
      // Waits for calls in flight.
      closeConnection: async () => {
        try {
          await search.close();
          await pool.end();
        } catch (error) {
          throw toPostgresError(error, 'closing the connection pool');
        }
      },
    });
    this.#search = search;
  }

  /**
   * Loads the user's keyword index in this process now: a user with more than a couple of thousand
   * messages is otherwise answered by SQL while the copy loads in the background after their first search.
   */
  warmKeywordIndex(user: UserScope): Promise<void> {
    return this.#search.warmKeywordIndex(user);
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
  const { connectionString, schema, poolMax, statementTimeoutMs, connectionTimeoutMs, readonly, pgvector } =
    resolvePostgresStoreOptions(options);
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
  return new PostgresStore(pool, { schema, pgvector, readonly });
}

function resolvePostgresStoreOptions(options: PostgresStoreOptions): Required<PostgresStoreOptions> {
  const { connectionString } = options;
  if (typeof connectionString !== 'string' || connectionString.trim().length === 0) {
    throw new MemoryError(
      'invalid_input',
      'connectionString must be a PostgreSQL URL such as postgres://user:password@host/database',
      {
        details: { field: 'connectionString' },
      },
    );
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
    if (typeof resolved[field] !== 'boolean')
      throw new MemoryError('invalid_input', `${field} must be a boolean`, { details: { field } });
  }
  if (!Number.isSafeInteger(resolved.poolMax) || resolved.poolMax < 1) {
    throw new MemoryError('invalid_input', 'poolMax must be a positive integer', { details: { field: 'poolMax' } });
  }
  for (const field of ['statementTimeoutMs', 'connectionTimeoutMs'] as const) {
    if (!Number.isSafeInteger(resolved[field]) || resolved[field] < 0) {
      throw new MemoryError('invalid_input', `${field} must be a non-negative integer of milliseconds`, {
        details: { field },
      });
    }
  }
  return Object.freeze(resolved);
}

/**
 * The readiness of a PostgreSQL store: one read of its conversations, and whether the server takes
 * writes (not a standby in recovery, not `default_transaction_read_only`), in one statement.
 */
async function checkPostgresReadiness(
  pool: PostgresPool,
  conversations: string,
  readonly: boolean,
): Promise<StoreReadiness> {
  try {
    const { rows } = await pool.query<{ recovery: boolean; read_only: string }>(
      `SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only, (SELECT count(*) FROM (SELECT 1 FROM ${conversations} LIMIT 1) AS one) AS probe`,
    );
    const row = rows[0]!;
    const checks: ReadinessCheck[] = [{ name: 'read', ok: true }];
    if (!readonly) {
      const writable = !row.recovery && row.read_only !== 'on';
      checks.push(
        writable
          ? { name: 'write', ok: true }
          : {
              name: 'write',
              ok: false,
              message: row.recovery
                ? 'the PostgreSQL server is a standby in recovery: it takes no writes'
                : 'the PostgreSQL session is read-only (default_transaction_read_only)',
            },
      );
    }
    return { ready: checks.every((check) => check.ok), checks };
  } catch (error) {
    return {
      ready: false,
      checks: [{ name: 'read', ok: false, message: toPostgresError(error, 'checking readiness').message }],
    };
  }
}

// A read-only store can neither create nor migrate its schema: it opens only one this code reads as it is.
async function checkCurrentSchema(pool: PostgresPool, schema: string): Promise<void> {
  const version = await readPostgresSchemaVersion(pool, schema);
  const latest = postgresMigrations.length;
  if (version === 0) {
    throw new MemoryError(
      'not_found',
      `schema "${schema}" holds no mnemo store (run mnemo migrate, or open it writable once)`,
      {
        details: { field: 'schema', schema },
      },
    );
  }
  if (version !== latest) {
    const advice =
      version < latest
        ? 'which a read-only store cannot migrate; open it writable once (or run mnemo migrate)'
        : 'upgrade mnemo to open it';
    throw new MemoryError(
      'storage_failed',
      `schema "${schema}" has version ${version}, this @mnemo/postgres reads version ${latest}, ${advice}`,
      {
        details: { schema, schemaVersion: version, supportedVersion: latest },
      },
    );
  }
}
