import { MemoryError } from '@mnemo/core';
import { createSqliteStore, readSqliteSchemaVersion, sqliteMigrations } from '@mnemo/sqlite';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import type { CopyEndpoint, CopyPage, CopyTable, CopyValue } from './copy-tables.js';

type SqliteValue = string | number | bigint | Buffer | null;

/** Options of {@link openSqliteCopyEndpoint}. */
export interface SqliteCopyEndpointOptions {
  readonly path: string;
  /** `source`: the file must exist and is only read; `target`: created and migrated when missing. */
  readonly role: 'source' | 'target';
}

/**
 * One SQLite store as a side of `mnemo copy`, on its own connection to the file (with sqlite-vec loaded,
 * so that `--force` can clear the vector tables too). Refuses a file whose schema version is not the one
 * this mnemo writes (`storage_failed`): its tables are read and written by name.
 */
export async function openSqliteCopyEndpoint(options: SqliteCopyEndpointOptions): Promise<CopyEndpoint> {
  const { path, role } = options;
  if (path === ':memory:') throw new MemoryError('invalid_input', 'mnemo copy needs a database file or URL, not :memory:', { details: { field: role === 'source' ? 'from' : 'to' } });
  // Opening the store creates and migrates a target (and refuses a missing source: read-only needs the file).
  await createSqliteStore({ path, ...(role === 'source' ? { readonly: true } : {}) }).close();
  const database = new Database(path, { readonly: role === 'source', fileMustExist: true, timeout: 5000 });
  sqliteVec.load(database);
  const version = readSqliteSchemaVersion(database);
  if (version !== sqliteMigrations.length) {
    database.close();
    throw new MemoryError('storage_failed', `${path} has schema version ${version}; mnemo copy reads and writes version ${sqliteMigrations.length}: run mnemo migrate --db ${path} first`);
  }
  return new SqliteCopyEndpoint(database, path);
}

class SqliteCopyEndpoint implements CopyEndpoint {
  readonly description: string;
  readonly #database: Database.Database;
  #inTransaction = false;

  constructor(database: Database.Database, path: string) {
    this.#database = database;
    this.description = path;
  }

  async beginRead(): Promise<void> {
    // One read transaction: every page comes from the same WAL snapshot, whatever other processes write.
    this.#database.exec('BEGIN DEFERRED');
    this.#inTransaction = true;
  }

  async beginWrite(): Promise<void> {
    this.#database.exec('BEGIN IMMEDIATE');
    this.#inTransaction = true;
  }

  async count(table: CopyTable): Promise<number> {
    return Number((this.#database.prepare(`SELECT count(*) AS n FROM ${table.name}`).get() as { n: number }).n);
  }

  async readPage(table: CopyTable, after: readonly CopyValue[] | undefined, limit: number): Promise<CopyPage> {
    const keys = table.order === 'position' ? ['rowid'] : [...table.order];
    const columns = table.columns.map((column) => column.name);
    const where = after === undefined ? '' : `WHERE (${keys.join(', ')}) > (${keys.map(() => '?').join(', ')})`;
    const rows = this.#database
      .prepare(`SELECT ${[...columns, ...keys.map((key, index) => `${key} AS key_${index}`)].join(', ')} FROM ${table.name} ${where} ORDER BY ${keys.join(', ')} LIMIT ?`)
      .all(...(after ?? []), limit) as Record<string, SqliteValue>[];
    const values = rows.map((row) => columns.map((name) => fromSqlite(row[name] ?? null)));
    const last = rows[rows.length - 1];
    return rows.length < limit || last === undefined ? { rows: values } : { rows: values, nextAfter: keys.map((_, index) => fromSqlite(last[`key_${index}`] ?? null)) };
  }

  async clear(): Promise<void> {
    const models = this.#database.prepare('SELECT id FROM embedding_models').all() as { id: number }[];
    // Children first: messages, usage and summaries refer to conversations.
    const tables = [
      ...models.map(({ id }) => `vector_codes_${Number(id)}`),
      'message_embeddings',
      'embedding_models',
      'usage',
      'summaries',
      'jobs',
      'cursors',
      'messages',
      'conversations',
      'facts',
      'entity_names',
      'entities',
      'relations',
      'memory_files',
    ];
    for (const table of tables) this.#database.exec(`DELETE FROM ${table}`);
  }

  async write(table: CopyTable, rows: readonly (readonly CopyValue[])[]): Promise<void> {
    const columns = table.columns.map((column) => column.name);
    const insert = this.#database.prepare(`INSERT INTO ${table.name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    for (const row of rows) insert.run(...row);
  }

  async commit(): Promise<void> {
    this.#database.exec('COMMIT');
    this.#inTransaction = false;
  }

  async end(): Promise<void> {
    if (this.#inTransaction) this.#database.exec('ROLLBACK');
    this.#inTransaction = false;
    this.#database.close();
  }
}

// SQLite's values are already the neutral form (times in epoch ms, JSON as text); integers past 2^53 would
// come back as bigint only with safeIntegers, which this connection does not turn on.
function fromSqlite(value: SqliteValue): CopyValue {
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return value.toString('utf8');
}
