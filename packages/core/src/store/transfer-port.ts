import type { PortCalls } from './port.js';
import type { ExportRecordsOptions, ImportRecordsOptions, StoreRecord, StoreRecordCounts } from './store-records.js';

/** A whole store as records: export and import. Part of the `Store` port; an adapter implements it as a `StorePart<TransferPort>`. */
export interface TransferPort {
  /**
   * Every row of the store, all tenants, as pages of {@link StoreRecord}s in dependency order (conversations,
   * messages, usage, summaries, cursors, facts, entities, relations, memory files), each table in the order
   * written, all read from one consistent snapshot that stays open until the iteration ends. Jobs and
   * vectors are not exported. On SQLite the snapshot is a read transaction on the store's connection: do not
   * write through the same store while iterating.
   */
  exportRecords(options?: ExportRecordsOptions): AsyncIterable<StoreRecord[]>;
  /**
   * Writes exported records into this store in one transaction, keeping ids, seqs, times and links, and
   * returns the rows per table the store holds afterwards; all or nothing. A store that holds rows is
   * refused (`invalid_input`, field `replace`) unless `replace`, which first deletes everything (jobs and
   * vectors too) in the same transaction. Derived search data is rebuilt from the messages.
   */
  importRecords(
    records: AsyncIterable<readonly StoreRecord[]> | Iterable<readonly StoreRecord[]>,
    options?: ImportRecordsOptions,
  ): Promise<StoreRecordCounts>;
}

/** What each method of {@link TransferPort} does, in the words of an error, and the index of its call options. */
export const transferPortCalls: PortCalls<TransferPort> = {
  exportRecords: ['exporting records', 0, 'stream'],
  importRecords: ['importing records', 1],
};
