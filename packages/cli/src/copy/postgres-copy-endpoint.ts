import { MemoryError } from '@mnemo/core';
import { createPostgresStore, postgresMigrations, postgresTables, readPostgresSchemaVersion, toPostgresError } from '@mnemo/postgres';
import pg from 'pg';
import { describeDatabase, parsePostgresDatabase } from '../store/open-cli-store.js';
import type { CopyColumn, CopyEndpoint, CopyPage, CopyTable, CopyValue } from './copy-tables.js';

/** Options of {@link openPostgresCopyEndpoint}. */
export interface PostgresCopyEndpointOptions {
  /** `postgres://…[?schema=name]`. */
  readonly url: string;
  /** `source`: only read, in one REPEATABLE READ snapshot; `target`: created and migrated when missing, written in one transaction. */
  readonly role: 'source' | 'target';
}

// Rows per INSERT: 500 rows of at most 15 columns stay far below PostgreSQL's 65,535 parameters.
const rowsPerInsert = 500;

/**
 * One PostgreSQL store (a schema) as a side of `mnemo copy`, on one connection of its own. Refuses a
 * schema whose version is not the one this mnemo writes (`storage_failed`; a source without a store is
 * `not_found`): its tables are read and written by name.
 */
export async function openPostgresCopyEndpoint(options: PostgresCopyEndpointOptions): Promise<CopyEndpoint> {
  const { connectionString, schema } = parsePostgresDatabase(options.url);
  const description = describeDatabase(options.url);
  // A target is created and migrated by opening its store; a source is only checked.
  const store = await createPostgresStore({ connectionString, poolMax: 1, ...(schema === undefined ? {} : { schema }), ...(options.role === 'source' ? { readonly: true } : {}) });
  await store.close();
  const client = new pg.Client({ connectionString, application_name: 'mnemo copy' });
  try {
    await client.connect();
    const version = await readPostgresSchemaVersion(client, schema);
    if (version !== postgresMigrations.length) {
      throw new MemoryError('storage_failed', `${description} has schema version ${version}; mnemo copy reads and writes version ${postgresMigrations.length}: run mnemo migrate first`);
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw toPostgresError(error, `opening ${description} for the copy`);
  }
  return new PostgresCopyEndpoint(client, schema ?? 'mnemo', description);
}

class PostgresCopyEndpoint implements CopyEndpoint {
  readonly description: string;
  readonly #client: pg.Client;
  readonly #schema: string;
  readonly #tables: ReturnType<typeof postgresTables>;
  #inTransaction = false;

  constructor(client: pg.Client, schema: string, description: string) {
    this.#client = client;
    this.#schema = schema;
    this.#tables = postgresTables(schema);
    this.description = description;
  }

  async beginRead(): Promise<void> {
    await this.#query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    this.#inTransaction = true;
  }

  async beginWrite(): Promise<void> {
    await this.#query('BEGIN');
    this.#inTransaction = true;
  }

  async count(table: CopyTable): Promise<number> {
    const result = await this.#query<{ n: string }>(`SELECT count(*) AS n FROM ${this.#table(table)}`);
    return Number(result.rows[0]?.n ?? 0);
  }

  async readPage(table: CopyTable, after: readonly CopyValue[] | undefined, limit: number): Promise<CopyPage> {
    const keys = table.order === 'position' ? ['position'] : [...table.order];
    const selected = table.columns.map(readExpression);
    const where = after === undefined ? '' : `WHERE (${keys.join(', ')}) > (${keys.map((_, index) => `$${index + 2}`).join(', ')})`;
    const result = await this.#query<Record<string, unknown>>(
      `SELECT ${[...selected, ...keys.map((key, index) => `${key} AS key_${index}`)].join(', ')} FROM ${this.#table(table)} ${where}
       ORDER BY ${keys.join(', ')} LIMIT $1`,
      [limit, ...(after ?? [])],
    );
    const rows = result.rows.map((row) => table.columns.map((column) => fromPostgres(column, row[column.name])));
    const last = result.rows[result.rows.length - 1];
    if (result.rows.length < limit || last === undefined) return { rows };
    // Keys go back to this same database as they came (bigint positions as text), never to the other store.
    return { rows, nextAfter: keys.map((_, index) => last[`key_${index}`] as CopyValue) };
  }

  async clear(): Promise<void> {
    // Every table of the store's schema but its migration record and its registry of vector tables
    // (the pgvector tables themselves are emptied): TRUNCATE takes them all at once, foreign keys included.
    const result = await this.#query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename NOT IN ('mnemo_migrations', 'vector_tables')",
      [this.#schema],
    );
    if (result.rows.length === 0) return;
    await this.#query(`TRUNCATE ${result.rows.map((row) => `"${this.#schema}"."${row.name}"`).join(', ')} RESTART IDENTITY`);
  }

  async write(table: CopyTable, rows: readonly (readonly CopyValue[])[]): Promise<void> {
    const columns = table.columns;
    for (let offset = 0; offset < rows.length; offset += rowsPerInsert) {
      const batch = rows.slice(offset, offset + rowsPerInsert);
      const values = batch.map((_, row) => `(${columns.map((column, index) => `$${row * columns.length + index + 1}::${castOf(column)}`).join(', ')})`);
      const parameters = batch.flatMap((row) => row.map((value, index) => toPostgres(columns[index]!, value)));
      await this.#query(`INSERT INTO ${this.#table(table)} (${columns.map((column) => column.name).join(', ')}) VALUES ${values.join(', ')}`, parameters);
    }
  }

  async commit(): Promise<void> {
    // BM25's corpus statistics, which appends keep on the conversation row, from the copied messages.
    const t = this.#tables;
    await this.#query(`UPDATE ${t.conversations} c SET search_length = s.total
      FROM (SELECT tenant_id, user_id, conversation_id, sum(length(search_vector)) AS total FROM ${t.messages} GROUP BY 1, 2, 3) s
      WHERE c.tenant_id = s.tenant_id AND c.user_id = s.user_id AND c.conversation_id = s.conversation_id`);
    await this.#query('COMMIT');
    this.#inTransaction = false;
  }

  async end(): Promise<void> {
    try {
      if (this.#inTransaction) await this.#client.query('ROLLBACK');
    } finally {
      this.#inTransaction = false;
      await this.#client.end().catch(() => undefined);
    }
  }

  #table(table: CopyTable): string {
    return `"${this.#schema}"."${table.name}"`;
  }

  async #query<Row extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>> {
    try {
      return await this.#client.query<Row>(text, values);
    } catch (error) {
      throw toPostgresError(error, `copying with ${this.description}`);
    }
  }
}

// JSON is read as its stored text, so it arrives byte for byte; times as Date (millisecond precision, as written).
function readExpression(column: CopyColumn): string {
  return column.kind === 'json' ? `${column.name}::text AS ${column.name}` : column.name;
}

function castOf(column: CopyColumn): string {
  return { text: 'text', integer: 'bigint', real: 'float8', time: 'timestamptz', json: 'json' }[column.kind];
}

function fromPostgres(column: CopyColumn, value: unknown): CopyValue {
  if (value === null || value === undefined) return null;
  if (column.kind === 'time') return value instanceof Date ? value.getTime() : Date.parse(String(value));
  if (column.kind === 'integer' || column.kind === 'real') return Number(value);
  return String(value);
}

function toPostgres(column: CopyColumn, value: CopyValue): string | number | null {
  if (value === null) return null;
  if (column.kind === 'time') return new Date(Number(value)).toISOString();
  return value;
}
