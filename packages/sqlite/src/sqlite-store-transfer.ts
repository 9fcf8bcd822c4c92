import {
  checkRecords,
  resolveExportPageSize,
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
import type { SqliteDatabase, SqliteStatement } from './sqlite-driver.js';
import type { SqliteSearchStore } from './sqlite-search-store.js';
import { toEpochMs, toIsoTime } from './sqlite-values.js';

type Row = Record<string, unknown>;

/**
 * A SQLite store as records (`Store.exportRecords` / `importRecords`), on the store's own connection: an
 * export reads every page inside one read transaction (one WAL snapshot, whatever other processes write),
 * an import writes inside one `BEGIN IMMEDIATE` transaction. Either holds the connection's transaction
 * while the caller iterates, so nothing else is written through the same store meanwhile.
 */
export class SqliteStoreTransfer implements StorePart<TransferPort> {
  readonly #database: SqliteDatabase;
  readonly #search: Pick<SqliteSearchStore, 'deleteVectorsOf' | 'forgetUsers'>;
  readonly #inserts = new Map<string, SqliteStatement>();

  constructor(database: SqliteDatabase, search: Pick<SqliteSearchStore, 'deleteVectorsOf' | 'forgetUsers'>) {
    this.#database = database;
    this.#search = search;
  }

  async *exportRecords(options: ExportRecordsOptions = {}): AsyncIterable<StoreRecord[]> {
    const pageSize = resolveExportPageSize(options.pageSize);
    this.#database.exec('BEGIN DEFERRED');
    try {
      for (const table of recordTables) {
        const keys = table.order === 'position' ? ['rowid'] : [...table.order];
        const columns = table.columns.map((column) => column.name);
        const first = this.#database.prepare(
          `SELECT ${selectList(columns, keys)} FROM ${table.name} ORDER BY ${keys.join(', ')} LIMIT ?`,
        );
        const next = this.#database.prepare(
          `SELECT ${selectList(columns, keys)} FROM ${table.name} WHERE (${keys.join(', ')}) > (${keys.map(() => '?').join(', ')}) ORDER BY ${keys.join(', ')} LIMIT ?`,
        );
        let after: unknown[] | undefined;
        do {
          const rows = (after === undefined ? first.all(pageSize) : next.all(...after, pageSize)) as Row[];
          const records = rows.map((row) => table.fromRow(row, toIsoTime));
          if (records.length > 0) yield table.kind === 'entity' ? this.#withNames(records) : records;
          const last = rows[rows.length - 1];
          after =
            rows.length < pageSize || last === undefined ? undefined : keys.map((_, index) => last[`key_${index}`]);
        } while (after !== undefined);
      }
    } finally {
      this.#database.exec('COMMIT');
    }
  }

  async importRecords(
    records: AsyncIterable<readonly StoreRecord[]> | Iterable<readonly StoreRecord[]>,
    options: ImportRecordsOptions = {},
  ): Promise<StoreRecordCounts> {
    const replace = options.replace === true;
    this.#database.exec('BEGIN IMMEDIATE');
    try {
      const present = storeRecordTables.reduce((sum, table) => sum + this.#count(table), 0);
      if (present > 0 && !replace) throw storeNotEmpty(present);
      if (replace) this.#clear();
      for await (const page of records) {
        checkRecords(page);
        for (const record of page) {
          const table = recordTableOf(record)!;
          this.#insert(table.name, table.columns, table.toValues(record));
          if (record.kind === 'entity')
            for (const values of entityNameValues(record)) this.#insert('entity_names', entityNameColumns, values);
        }
      }
      const counts = emptyRecordCounts();
      for (const table of storeRecordTables) counts[table] = this.#count(table);
      this.#database.exec('COMMIT');
      return counts;
    } catch (error) {
      this.#database.exec('ROLLBACK');
      throw error;
    }
  }

  #withNames(records: StoreRecord[]): StoreRecord[] {
    const ids = entityIdsOf(records);
    const rows = this.#database
      .prepare(
        `SELECT tenant_id, user_id, entity_id, name FROM entity_names WHERE entity_id IN (${ids.map(() => '?').join(', ')}) ORDER BY name`,
      )
      .all(...ids);
    return withEntityNames(records, rows as EntityNameRow[]);
  }

  #insert(table: string, columns: readonly RecordColumn[], values: readonly RecordValue[]): void {
    let insert = this.#inserts.get(table);
    if (insert === undefined) {
      // Prepared once per table and connection: an import runs one INSERT per row.
      insert = this.#database.prepare(
        `INSERT INTO ${table} (${columns.map((column) => column.name).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      );
      this.#inserts.set(table, insert);
    }
    insert.run(...values.map((value, index) => toSqlite(columns[index]!, value)));
  }

  #count(table: string): number {
    return Number((this.#database.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
  }

  // Everything, vectors and jobs included; children first (messages, usage and summaries refer to
  // conversations). The vectors go the way the search store erases them, whatever its index; the model
  // registry stays, as its vector tables do (PostgreSQL keeps its registry the same way).
  #clear(): void {
    this.#search.deleteVectorsOf('1 = 1', []);
    for (const table of [
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
    ]) {
      this.#database.exec(`DELETE FROM ${table}`);
    }
    this.#search.forgetUsers('1 = 1', []);
  }
}

function selectList(columns: readonly string[], keys: readonly string[]): string {
  return [...columns, ...keys.map((key, index) => `${key} AS key_${index}`)].join(', ');
}

function toSqlite(column: RecordColumn, value: RecordValue): RecordValue {
  return column.kind === 'time' && value !== null ? toEpochMs(column.name, String(value)) : value;
}
