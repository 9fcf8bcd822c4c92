import { createGptTokenCounter, createMemory, type Memory } from '@mnemo/core';
import { openSqliteStore } from '@mnemo/sqlite';

/** Options of {@link openMemory}. */
export interface OpenMemoryOptions {
  /** SQLite file or `:memory:`. */
  readonly db: string;
  /** Model the contexts are built for; picks the tokenizer encoding (default `o200k_base`). */
  readonly model?: string;
  /** Open an existing file for reading only (`not_found` when it is missing). Default false. */
  readonly readonly?: boolean;
}

/** Opens the SQLite store and wires the memory engine every command works through. */
export function openMemory(options: OpenMemoryOptions): Memory {
  const store = openSqliteStore({ path: options.db, ...(options.readonly === true ? { readonly: true } : {}) });
  return createMemory({ store, tokenCounter: createGptTokenCounter(options.model === undefined ? {} : { model: options.model }) });
}
