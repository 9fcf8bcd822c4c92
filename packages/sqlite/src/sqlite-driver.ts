/**
 * The subset of better-sqlite3's API that the SQLite store uses, described structurally so that tests
 * can pass a fake and nothing outside `createSqliteStore` depends on the driver package itself.
 */

/** What `run` reports: rows changed by the statement (not counting cascades or triggers). */
export interface SqliteRunResult {
  readonly changes: number;
  /** Rowid of the last row an INSERT added. */
  readonly lastInsertRowid: number | bigint;
}

/** A prepared statement bound with positional `?` parameters; rows come back as plain objects. */
export interface SqliteStatement {
  run(...parameters: unknown[]): SqliteRunResult;
  /** The first row, or `undefined` when there is none. */
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
  /** With `true`, rows come back as arrays of column values in select order (no object per row); returns the statement. */
  raw(toggle?: boolean): SqliteStatement;
}

/** A function wrapped by {@link SqliteDatabase.transaction}: calling `immediate()` runs it in `BEGIN IMMEDIATE`. */
export interface SqliteTransaction<T> {
  (): T;
  /** Takes the write lock before the first read, so concurrent writers queue on `busy_timeout` instead of deadlocking. */
  immediate(): T;
}

/** An open SQLite connection: better-sqlite3's `Database` satisfies this type. */
export interface SqliteDatabase {
  /** False once `close()` has run. */
  readonly open: boolean;
  /** Compiles SQL once; throws the driver's error (with a `code` such as `SQLITE_BUSY`) on failure. */
  prepare(sql: string): SqliteStatement;
  /** Runs one or more statements without results (schema changes). */
  exec(sql: string): unknown;
  /** Runs `PRAGMA source`; with `{ simple: true }` returns the first column of the first row. */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  /** Wraps `fn` so it runs in a transaction that commits on return and rolls back on throw. */
  transaction<T>(fn: () => T): SqliteTransaction<T>;
  close(): unknown;
}
