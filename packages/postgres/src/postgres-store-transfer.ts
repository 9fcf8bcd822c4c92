import {
  resolveExportPageSize,
  checkRecords,
  entityIdsOf,
  emptyRecordCounts,
  entityNameColumns,
  entityNameValues,
  recordTableOf,
  recordTables,
  storeNotEmpty,
  storeRecordTables,
  withEntityNames,
  type EntityNameRow,
  type RecordColumn,
  type RecordValue,
  type StoreRecord,
  type StoreRecordCounts,
  type ExportRecordsOptions,
  type ImportRecordsOptions,
  type StorePart,
  type TransferPort,
} from '@mnemo/core/store-kit';
import type { PostgresClient, PostgresPool } from './postgres-driver.js';
import type { PostgresTables } from './postgres-tables.js';
import { checkOutClient, runInTransaction } from './postgres-transaction.js';
import { checkTime, toIsoTime } from './postgres-values.js';

type Row = Record<string, unknown>;

// Values per INSERT stay far below PostgreSQL's 65,535 parameters.
const parametersPerInsert = 30_000;

/**
 * A PostgreSQL store as records (`Store.exportRecords` / `importRecords`): an export reads every page on one
 * connection inside one REPEATABLE READ READ ONLY transaction (one snapshot), an import writes in one
 * transaction and then rebuilds the BM25 corpus statistics the appends keep on each conversation.
 */
export class PostgresStoreTransfer implements StorePart<TransferPort> {
  readonly #pool: PostgresPool;
  readonly #schema: string;
  readonly #tables: PostgresTables;

  constructor(pool: PostgresPool, tables: PostgresTables) {
    this.#pool = pool;
    this.#schema = tables.schema;
    this.#tables = tables;
  }

  async *exportRecords(options: ExportRecordsOptions = {}): AsyncIterable<StoreRecord[]> {
    const pageSize = resolveExportPageSize(options.pageSize);
    const held = await checkOutClient(this.#pool);
    const { client } = held;
    let open = false;
    let broken: Error | undefined;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      open = true;
      for (const table of recordTables) {
        const keys = table.order === 'position' ? ['position'] : [...table.order];
        const selected = [
          ...table.columns.map(readExpression),
          ...keys.map((key, index) => `${key} AS key_${index}`),
        ].join(', ');
        let after: unknown[] | undefined;
        do {
          const where =
            after === undefined
              ? ''
              : `WHERE (${keys.join(', ')}) > (${keys.map((_, index) => `$${index + 2}`).join(', ')})`;
          const result = await client.query<Row>(
            `SELECT ${selected} FROM ${this.#table(table.name)} ${where} ORDER BY ${keys.join(', ')} LIMIT $1`,
            [pageSize, ...(after ?? [])],
          );
          const records = result.rows.map((row) => table.fromRow(row, toIsoTime));
          if (records.length > 0) yield table.kind === 'entity' ? await this.#withNames(client, records) : records;
          const last = result.rows[result.rows.length - 1];
          // Keys go back to this same database as they came (bigint positions as text).
          after =
            result.rows.length < pageSize || last === undefined
              ? undefined
              : keys.map((_, index) => last[`key_${index}`]);
        } while (after !== undefined);
      }
      await client.query('COMMIT');
      open = false;
    } finally {
      // A failed read, or an iteration the consumer abandoned part-way, ends its snapshot here; a
      // connection that cannot roll back is discarded by the pool.
      if (open) {
        await client.query('ROLLBACK').catch((error: unknown) => {
          broken = error instanceof Error ? error : new Error(String(error));
        });
      }
      held.release(broken);
    }
  }

  async importRecords(
    records: AsyncIterable<readonly StoreRecord[]> | Iterable<readonly StoreRecord[]>,
    options: ImportRecordsOptions = {},
  ): Promise<StoreRecordCounts> {
    const replace = options.replace === true;
    return runInTransaction(this.#pool, async (client) => {
      const present = (await this.#counts(client)).total;
      if (present > 0 && !replace) throw storeNotEmpty(present);
      if (replace) await this.#clear(client);
      for await (const page of records) {
        checkRecords(page);
        await this.#insertPage(client, page);
      }
      // BM25's corpus statistics, which appends keep on the conversation row, from the imported messages.
      const t = this.#tables;
      await client.query(`UPDATE ${t.conversations} c SET search_length = s.total
        FROM (SELECT tenant_id, user_id, conversation_id, sum(length(search_vector)) AS total FROM ${t.messages} GROUP BY 1, 2, 3) s
        WHERE c.tenant_id = s.tenant_id AND c.user_id = s.user_id AND c.conversation_id = s.conversation_id`);
      return (await this.#counts(client)).counts;
    });
  }

  // Consecutive records of one table go in multi-row INSERTs.
  async #insertPage(client: PostgresClient, page: readonly StoreRecord[]): Promise<void> {
    let start = 0;
    while (start < page.length) {
      const table = recordTableOf(page[start]!)!;
      let end = start + 1;
      while (end < page.length && page[end]!.kind === table.kind) end += 1;
      const run = page.slice(start, end);
      await this.#insert(
        client,
        table.name,
        table.columns,
        run.map((record) => table.toValues(record)),
      );
      if (table.kind === 'entity') {
        await this.#insert(
          client,
          'entity_names',
          entityNameColumns,
          run.flatMap((record) => (record.kind === 'entity' ? entityNameValues(record) : [])),
        );
      }
      start = end;
    }
  }

  async #insert(
    client: PostgresClient,
    table: string,
    columns: readonly RecordColumn[],
    rows: readonly (readonly RecordValue[])[],
  ): Promise<void> {
    const perInsert = Math.max(1, Math.floor(parametersPerInsert / columns.length));
    for (let offset = 0; offset < rows.length; offset += perInsert) {
      const batch = rows.slice(offset, offset + perInsert);
      const values = batch.map(
        (_, row) =>
          `(${columns.map((column, index) => `$${row * columns.length + index + 1}::${castOf(column)}`).join(', ')})`,
      );
      const parameters = batch.flatMap((row) => row.map((value, index) => toPostgres(columns[index]!, value)));
      await client.query(
        `INSERT INTO ${this.#table(table)} (${columns.map((column) => column.name).join(', ')}) VALUES ${values.join(', ')}`,
        parameters,
      );
    }
  }

  async #withNames(client: PostgresClient, records: StoreRecord[]): Promise<StoreRecord[]> {
    const result = await client.query<EntityNameRow>(
      `SELECT tenant_id, user_id, entity_id, name FROM ${this.#tables.entityNames} WHERE entity_id = ANY($1::text[]) ORDER BY name`,
      [entityIdsOf(records)],
    );
    return withEntityNames(records, result.rows);
  }

  async #counts(client: PostgresClient): Promise<{ counts: StoreRecordCounts; total: number }> {
    const counts = emptyRecordCounts();
    let total = 0;
    for (const table of storeRecordTables) {
      const result = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.#table(table)}`);
      counts[table] = Number(result.rows[0]?.n ?? 0);
      total += counts[table];
    }
    return { counts, total };
  }

  // Every table of the store's schema but its migration record and its registry of vector tables (the
  // pgvector tables themselves are emptied): TRUNCATE takes them all at once, foreign keys included.
  async #clear(client: PostgresClient): Promise<void> {
    const result = await client.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename NOT IN ('mnemo_migrations', 'vector_tables')",
      [this.#schema],
    );
    if (result.rows.length === 0) return;
    await client.query(`TRUNCATE ${result.rows.map((row) => this.#table(row.name)).join(', ')} RESTART IDENTITY`);
  }

  #table(name: string): string {
    return `"${this.#schema}"."${name}"`;
  }
}

// JSON is read as its stored text, so it arrives byte for byte; times as Date (millisecond precision, as written).
function readExpression(column: RecordColumn): string {
  return column.kind === 'json' ? `${column.name}::text AS ${column.name}` : column.name;
}

function castOf(column: RecordColumn): string {
  return { text: 'text', integer: 'bigint', real: 'float8', time: 'timestamptz', json: 'json' }[column.kind];
}

function toPostgres(column: RecordColumn, value: RecordValue): RecordValue {
  return column.kind === 'time' && value !== null ? checkTime(column.name, String(value)) : value;
}
