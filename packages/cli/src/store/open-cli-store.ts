import { existsSync } from 'node:fs';
import { isMemoryError, MemoryError, type Store } from '@mnemo/core';
import { createPostgresStore, readPostgresSchemaVersion, toPostgresError } from '@mnemo/postgres';
import { createSqliteStore } from '@mnemo/sqlite';
import pg from 'pg';
import { isPostgresUrl } from '../config/cli-config.js';

/** Options of {@link openCliStore}. */
export interface OpenCliStoreOptions {
  /**
   * Read only: SQLite opens an existing, current file read-only; PostgreSQL opens an existing, current
   * schema without migrating it, in read-only transactions. A missing store is `not_found`. Default false.
   */
  readonly readonly?: boolean;
  /** A store that does not exist yet is `not_found` instead of being created (a typo in `--db` must not leave an empty store behind). Default false. */
  readonly mustExist?: boolean;
  /** Most PostgreSQL connections the store opens; default the store's (10). */
  readonly poolMax?: number;
}

/** Where a PostgreSQL `--db` URL points: the URL for `pg` (without mnemo's own `schema` parameter) and the schema. */
export interface PostgresDatabase {
  readonly connectionString: string;
  /** From `?schema=name`; `undefined` means the store's default, `mnemo`. */
  readonly schema?: string;
}

/**
 * Splits a PostgreSQL URL into what `pg` connects with and the store's schema: `?schema=name` is mnemo's
 * parameter (the store qualifies its tables with it; it never touches `search_path`), every other
 * parameter (`sslmode`, `host` of a socket, …) is left for `pg`.
 */
export function parsePostgresDatabase(db: string): PostgresDatabase {
  let url: URL;
  try {
    url = new URL(db);
  } catch (error) {
    throw new MemoryError('invalid_input', `${describeDatabase(db)} is not a valid PostgreSQL URL`, {
      cause: error,
      details: { field: 'db' },
    });
  }
  const schema = url.searchParams.get('schema') ?? undefined;
  if (schema === undefined) return { connectionString: db };
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), schema };
}

/**
 * A database as the CLI prints it: a SQLite path as it is, a PostgreSQL URL with its password replaced by
 * `***`, so that messages, logs and JSON output never carry credentials.
 */
export function describeDatabase(db: string): string {
  if (!isPostgresUrl(db)) return db;
  try {
    const url = new URL(db);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return db.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

/**
 * Opens the store every command works on: PostgreSQL for a `postgres://` or `postgresql://` URL (the
 * schema migrated on open unless read-only), otherwise the SQLite file (or `:memory:`). Throws
 * `not_found` for a missing store with `readonly` or `mustExist`, `unavailable` when PostgreSQL cannot
 * be reached, and the stores' own errors otherwise.
 */
export async function openCliStore(db: string, options: OpenCliStoreOptions = {}): Promise<Store> {
  const readonly = options.readonly === true;
  if (!isPostgresUrl(db)) {
    if (options.mustExist === true && !readonly && db !== ':memory:' && !existsSync(db)) {
      throw new MemoryError('not_found', `cannot open SQLite database ${db}: the file does not exist`, {
        details: { field: 'db', path: db },
      });
    }
    return createSqliteStore({ path: db, ...(readonly ? { readonly: true } : {}) });
  }
  const { connectionString, schema } = parsePostgresDatabase(db);
  if (options.mustExist === true && !readonly) await requirePostgresStore(connectionString, schema, db);
  return createPostgresStore({
    connectionString,
    ...(schema === undefined ? {} : { schema }),
    ...(readonly ? { readonly: true } : {}),
    ...(options.poolMax === undefined ? {} : { poolMax: options.poolMax }),
  });
}

// A read-only open checks this itself; a writable one would create the schema.
async function requirePostgresStore(connectionString: string, schema: string | undefined, db: string): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: 'mnemo' });
  let version: number;
  try {
    await client.connect();
    version =
      schema === undefined ? await readPostgresSchemaVersion(client) : await readPostgresSchemaVersion(client, schema);
  } catch (error) {
    throw toPostgresError(error, `reading the schema version of ${describeDatabase(db)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
  if (version === 0) {
    throw new MemoryError(
      'not_found',
      `${describeDatabase(db)} holds no mnemo store in schema "${schema ?? 'mnemo'}" (mnemo migrate creates one)`,
      {
        details: { field: 'db' },
      },
    );
  }
}
/** How long a worker or an HTTP process waits for a PostgreSQL store that is restarting or unreachable when it starts. */
const storeWaitMs = 60_000;

/**
 * Opens a serving process's store ({@link openCliStore}); a PostgreSQL server that is restarting or not
 * reachable yet (`unavailable`) is tried again with backoff (0.1 s doubling to 2 s) for up to a minute,
 * logged once, as its clients do: a worker or HTTP process started (or restarted by `serve`) while the
 * database restarts must not exit for it. So is a SQLite file whose write lock another process held past
 * the busy timeout while this one prepared it (a worker busy on the file while `serve` restarts after a
 * crash). Anything else fails at once: a full disk or an unwritable file is not waited for.
 */
export async function openStoreWhenAvailable(
  db: string,
  logger: { warn(details: object, message: string): void },
): Promise<Store> {
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await openCliStore(db);
    } catch (error) {
      if (!isPassing(db, error) || Date.now() - started > storeWaitMs) throw error;
      if (attempt === 0)
        logger.warn({ err: error }, `the store is unavailable; trying again for up to ${storeWaitMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
    }
  }
}

/** Whether opening `db` failed for a while only: PostgreSQL `unavailable`, or a SQLite lock held elsewhere. */
function isPassing(db: string, error: unknown): boolean {
  if (!isMemoryError(error, 'unavailable')) return false;
  if (isPostgresUrl(db)) return true;
  const code = error.details?.['sqliteCode'];
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}
