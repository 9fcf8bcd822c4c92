import {
  createGptTokenCounter,
  createMemory,
  type Embedder,
  type Memory,
  type Summarizer,
  type TokenCounter,
} from '@mnemo/core';
import { compactionSettingsFor, type CliPolicy } from '../config/cli-policies.js';
import { openCliStore } from './open-cli-store.js';

/** How compaction jobs run: on the engine's background worker, only when the caller drains them, or not at all. */
export type CompactionMode = 'background' | 'manual' | 'off';

/** Options of {@link openMemory}. */
export interface OpenMemoryOptions {
  /** SQLite file, `:memory:`, or a `postgres://` URL (see `openCliStore`). */
  readonly db: string;
  /** Model the contexts are built for; picks the tokenizer encoding (default `o200k_base`). */
  readonly model?: string;
  /** Open an existing store for reading only (`not_found` when it is missing); implies compaction `off`. Default false. */
  readonly readonly?: boolean;
  /** A missing store is `not_found` instead of being created. Default false. */
  readonly mustExist?: boolean;
  /** Default `background`. */
  readonly compaction?: CompactionMode;
  /** Budget of the contexts the commands build, in tokens: compaction thresholds scale with it. */
  readonly maxTokens?: number;
  /** The policy the command runs; `meshai` selects core's `meshai` compaction preset instead of the budget-scaled thresholds. */
  readonly policy?: CliPolicy;
  /** Builds the summarizer on the engine's token counter; default core's offline `ExtractiveSummarizer`. */
  readonly createSummarizer?: (tokenCounter: TokenCounter) => Summarizer;
  /** Embeds messages for vector recall (hybrid policy); default none: keyword-only recall. */
  readonly embedder?: Embedder;
  /** A refiner beside `embedder` (`chooseRefiner`). */
  readonly refiner?: { readonly embedder: Embedder; readonly idle: () => boolean };
  /** Deadline of a hybrid context's query embedding (`oneUserQueryDeadline`); default `false`: waited for. */
  readonly queryEmbeddingTimeoutMs?: number | false;
  /** Where a failed query embedding's error goes (the context recalls keyword-only); default: thrown. */
  readonly onQueryEmbeddingError?: (error: unknown) => void;
  /** Where background job failures go (they never stop the command). */
  readonly onJobError?: (error: unknown) => void;
}

/** Opens the command's store (`openCliStore`) and wires the memory engine every command works through. */
export async function openMemory(options: OpenMemoryOptions): Promise<Memory> {
  const store = await openCliStore(options.db, {
    ...(options.readonly === true ? { readonly: true } : {}),
    ...(options.mustExist === true ? { mustExist: true } : {}),
  });
  const mode = options.readonly === true ? 'off' : (options.compaction ?? 'background');
  const tokenCounter = createGptTokenCounter(options.model === undefined ? {} : { model: options.model });
  return createMemory({
    store,
    tokenCounter,
    ...(options.embedder === undefined ? {} : { embedder: options.embedder }),
    ...(options.refiner === undefined || options.embedder === undefined ? {} : { refiner: options.refiner }),
    queryEmbeddingTimeoutMs: options.queryEmbeddingTimeoutMs ?? false,
    ...(options.onQueryEmbeddingError === undefined ? {} : { onQueryEmbeddingError: options.onQueryEmbeddingError }),
    compaction:
      mode === 'off'
        ? false
        : {
            settings: compactionSettingsFor(options.policy, options.maxTokens),
            ...(options.createSummarizer === undefined ? {} : { summarizer: options.createSummarizer(tokenCounter) }),
          },
    worker: {
      autoStart: mode === 'background',
      ...(options.onJobError === undefined ? {} : { onError: options.onJobError }),
    },
  });
}
