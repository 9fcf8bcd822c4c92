import { createGptTokenCounter, createMemory, type CompactionSettings, type Memory } from '@mnemo/core';
import { openSqliteStore } from '@mnemo/sqlite';

/** How compaction jobs run: on the engine's background worker, only when the caller drains them, or not at all. */
export type CompactionMode = 'background' | 'manual' | 'off';

/** Options of {@link openMemory}. */
export interface OpenMemoryOptions {
  /** SQLite file or `:memory:`. */
  readonly db: string;
  /** Model the contexts are built for; picks the tokenizer encoding (default `o200k_base`). */
  readonly model?: string;
  /** Open an existing file for reading only (`not_found` when it is missing); implies compaction `off`. Default false. */
  readonly readonly?: boolean;
  /** Default `background`. */
  readonly compaction?: CompactionMode;
  /** Budget of the contexts the commands build, in tokens: compaction thresholds scale with it. */
  readonly maxTokens?: number;
  /** Where background job failures go (they never stop the command). */
  readonly onJobError?: (error: unknown) => void;
}

/**
 * Compaction thresholds for a context budget, in the proportions of the core defaults for 2,000 tokens:
 * compact at 60 % of the budget in raw turns, keep 30 % raw, bound the summary at 20 %.
 */
export function compactionSettingsForBudget(maxTokens: number): Partial<CompactionSettings> {
  return {
    triggerTokens: Math.round(maxTokens * 0.6),
    keepRecentTokens: Math.round(maxTokens * 0.3),
    maxSummaryTokens: Math.max(16, Math.round(maxTokens * 0.2)),
  };
}

/** Opens the SQLite store and wires the memory engine every command works through. */
export function openMemory(options: OpenMemoryOptions): Memory {
  const store = openSqliteStore({ path: options.db, ...(options.readonly === true ? { readonly: true } : {}) });
  const mode = options.readonly === true ? 'off' : (options.compaction ?? 'background');
  return createMemory({
    store,
    tokenCounter: createGptTokenCounter(options.model === undefined ? {} : { model: options.model }),
    compaction: mode === 'off' ? false : { settings: options.maxTokens === undefined ? {} : compactionSettingsForBudget(options.maxTokens) },
    worker: { autoStart: mode === 'background', ...(options.onJobError === undefined ? {} : { onError: options.onJobError }) },
  });
}
