import {
  compactionSettingsForBudget,
  resolveCompactionSettings,
  type CompactionSettings,
} from '../compaction/compaction-settings.js';
import { ExtractiveSummarizer } from '../compaction/extractive-summarizer.js';
import type { Summarizer } from '../compaction/summarizer.js';
import { resolveContextDefaults, type ContextDefaults } from '../context/context-options.js';
import { MemoryError } from '../errors/memory-error.js';
import type { FactExtractor } from '../facts/fact-extractor.js';
import { HeuristicFactExtractor } from '../facts/heuristic-fact-extractor.js';
import type { MemoryToolLimits } from '../files/memory-tool.js';
import type { GraphExtractor } from '../graph/graph-extractor.js';
import { HeuristicGraphExtractor } from '../graph/heuristic-graph-extractor.js';
import { defaultMessageLimits, type MessageLimits } from '../messages/validate-message.js';
import type { Embedder } from '../recall/embedder.js';
import type { Store } from '../store/store.js';
import { createGptTokenCounter } from '../tokens/gpt-token-counter.js';
import type { TokenCounter } from '../tokens/token-counter.js';

/** Options of {@link createMemory}. Only `store` is required. */
export interface MemoryOptions {
  readonly store: Store;
  /** Default: gpt-tokenizer with `o200k_base`. */
  readonly tokenCounter?: TokenCounter;
  /** Limits on appended messages; missing fields take {@link defaultMessageLimits}. */
  readonly limits?: Partial<MessageLimits>;
  /** Context defaults; missing fields take the built-in ones (policy `token-window`, 2,000 tokens, 4 turns). */
  readonly context?: Partial<ContextDefaults>;
  /** Clock for message and ledger times, in epoch ms; default `Date.now`. */
  readonly now?: () => number;
  /**
   * Background compaction; `false` turns it off. Default: the offline {@link ExtractiveSummarizer} with
   * `compactionSettingsForBudget(context.maxTokens)`; `settings` overrides single fields of those.
   */
  readonly compaction?: false | { readonly summarizer?: Summarizer; readonly settings?: Partial<CompactionSettings> };
  /** Embeds messages in the background for vector recall (e.g. `UseLiteEmbedder` from `@mnemo/models`); without one, recall is keyword-only. */
  readonly embedder?: Embedder;
  /**
   * A slower, better model beside `embedder` (decision 0045; e.g. `UseLiteThreadEmbedder` beside the static
   * table): a `refine` job adds its vectors while `idle()` says the machine has cores to spare (default:
   * always), and recall ranks in its space where those vectors are there and it can embed the query in
   * time, in the `embedder`'s otherwise. Needs `embedder`; `invalid_input` without one.
   */
  readonly refiner?: { readonly embedder: Embedder; readonly idle?: () => boolean };
  /**
   * Deadline of the hybrid context's query embedding, in ms (default: the embedder's `queryTimeoutMs`, else
   * {@link defaultQueryEmbeddingTimeoutMs});
   * past it the context recalls keyword-only and its report says `embedding_deadline`. `false`: wait for it.
   * Only an embedder off the event loop (a worker thread, a remote endpoint) can be cut off in time.
   */
  readonly queryEmbeddingTimeoutMs?: number | false;
  /**
   * Called with the error of a hybrid context's query embedding that failed (an embedding endpoint down
   * or rejecting its key, a model thread that died): the context recalls keyword-only and its report says
   * `embedder_failed` (the refiner's failure ranks in the embedder's space); the context never fails for it.
   * Default: none (then only the report shows it). `memory.recall` throws such an error instead.
   */
  readonly onQueryEmbeddingError?: (error: unknown) => void;
  /**
   * Background extraction of durable facts and the entity graph from new messages; `false` turns it off.
   * Default: the offline `HeuristicFactExtractor` and `HeuristicGraphExtractor`; `graphExtractor: false` skips the graph;
   * `consolidate: false` skips the consolidation pass (duplicates merged, contradictions settled) after each run that stored facts.
   */
  readonly knowledge?:
    | false
    | {
        readonly factExtractor?: FactExtractor;
        readonly graphExtractor?: GraphExtractor | false;
        readonly consolidate?: boolean;
      };
  /** Caps of each user's `/memories` directory (the memory tool); missing fields take `defaultMemoryToolLimits`. */
  readonly memoryToolLimits?: Partial<MemoryToolLimits>;
  /**
   * The in-process job worker. `autoStart: false` leaves jobs queued until `runPendingJobs()` (or another
   * process's worker); `concurrency` job loops run side by side (default 1); `attemptTimeoutMs` is the
   * deadline of one job attempt (default 45,000 ms, below the 60,000 ms lease).
   */
  readonly worker?: {
    readonly autoStart?: boolean;
    readonly workerId?: string;
    readonly leaseMs?: number;
    readonly pollIntervalMs?: number;
    readonly attemptTimeoutMs?: number;
    readonly concurrency?: number;
    readonly onError?: (error: unknown) => void;
    /** Called when a job finished degraded, e.g. a summary written by the fallback summarizer. */
    readonly onWarning?: (warning: string) => void;
  };
  /**
   * Called when a write done after its call answered failed: the usage ledger entry of a context build,
   * which the build does not wait for (a read never waits on a write). Default: none (such a failure is
   * then only seen as a missing ledger entry).
   */
  readonly onDeferredWriteError?: (error: unknown) => void;
}

/** Default deadline of the hybrid context's query embedding: 30 ms, about three USE-lite sentences on 2 cores. */
export const defaultQueryEmbeddingTimeoutMs = 30;

/** {@link MemoryOptions} with every default filled in and every value checked: what `createMemory` wires. */
export interface ResolvedMemoryOptions {
  readonly store: Store;
  readonly tokenCounter: TokenCounter;
  readonly limits: MessageLimits;
  readonly contextDefaults: ContextDefaults;
  readonly now: () => number;
  /** `false`: compaction is off. */
  readonly compaction: false | { readonly summarizer: Summarizer; readonly settings: CompactionSettings };
  /** `false`: extraction is off. No `graphExtractor`: the graph is skipped. */
  readonly knowledge:
    | false
    | {
        readonly factExtractor: FactExtractor;
        readonly graphExtractor?: GraphExtractor;
        readonly consolidate?: boolean;
      };
  readonly embedder?: Embedder;
  readonly refiner?: MemoryOptions['refiner'];
  readonly queryEmbeddingTimeoutMs: number | false;
  readonly onQueryEmbeddingError?: (error: unknown) => void;
  readonly memoryToolLimits?: Partial<MemoryToolLimits>;
  readonly worker?: MemoryOptions['worker'];
  readonly onDeferredWriteError: (error: unknown) => void;
}

/**
 * Fills the defaults of {@link MemoryOptions} and checks its values; `invalid_input` for a value out of
 * range. The compaction defaults follow the memory's default budget, so a bot that sends 1,000-token
 * contexts compacts for 1,000 tokens without saying so twice.
 */
export function resolveMemoryOptions(options: MemoryOptions): ResolvedMemoryOptions {
  const tokenCounter = options.tokenCounter ?? createGptTokenCounter();
  const contextDefaults = resolveContextDefaults(options.context);
  const queryEmbeddingTimeoutMs =
    options.queryEmbeddingTimeoutMs ?? options.embedder?.queryTimeoutMs ?? defaultQueryEmbeddingTimeoutMs;
  if (
    queryEmbeddingTimeoutMs !== false &&
    (!Number.isInteger(queryEmbeddingTimeoutMs) || queryEmbeddingTimeoutMs < 1)
  ) {
    throw new MemoryError(
      'invalid_input',
      `queryEmbeddingTimeoutMs must be a positive integer or false (got ${String(queryEmbeddingTimeoutMs)})`,
      {
        details: { field: 'queryEmbeddingTimeoutMs' },
      },
    );
  }
  const { compaction, knowledge, refiner } = options;
  if (refiner !== undefined && options.embedder === undefined)
    throw new MemoryError('invalid_input', 'a refiner needs an embedder beside it', { details: { field: 'refiner' } });
  if (refiner !== undefined && refiner.embedder.model === options.embedder?.model)
    throw new MemoryError('invalid_input', `the refiner's model is the embedder's (${refiner.embedder.model})`, {
      details: { field: 'refiner' },
    });
  return {
    store: options.store,
    tokenCounter,
    limits: Object.freeze({ ...defaultMessageLimits, ...options.limits }),
    contextDefaults,
    now: options.now ?? Date.now,
    compaction:
      compaction === false
        ? false
        : {
            summarizer: compaction?.summarizer ?? new ExtractiveSummarizer({ tokenCounter }),
            settings: resolveCompactionSettings(
              compaction?.settings,
              compactionSettingsForBudget(contextDefaults.maxTokens),
            ),
          },
    knowledge:
      knowledge === false
        ? false
        : {
            factExtractor: knowledge?.factExtractor ?? new HeuristicFactExtractor(),
            ...(knowledge?.graphExtractor === false
              ? {}
              : { graphExtractor: knowledge?.graphExtractor ?? new HeuristicGraphExtractor() }),
            ...(knowledge?.consolidate === undefined ? {} : { consolidate: knowledge.consolidate }),
          },
    ...(options.embedder === undefined ? {} : { embedder: options.embedder }),
    ...(refiner === undefined ? {} : { refiner }),
    queryEmbeddingTimeoutMs,
    ...(options.onQueryEmbeddingError === undefined ? {} : { onQueryEmbeddingError: options.onQueryEmbeddingError }),
    ...(options.memoryToolLimits === undefined ? {} : { memoryToolLimits: options.memoryToolLimits }),
    ...(options.worker === undefined ? {} : { worker: options.worker }),
    onDeferredWriteError: options.onDeferredWriteError ?? (() => undefined),
  };
}
