import {
  createGptTokenCounter,
  createMemory,
  type Embedder,
  type Memory,
  type Store,
  type Summarizer,
} from '@mnemo/core';
import { createRepeatThrottle, repeatKeyOf } from '@mnemo/server';
import type { Logger } from 'pino';
import type { CliConfig } from '../config/cli-config.js';
import { engineDefaultsOf } from '../config/cli-policies.js';
import { chooseEmbedder } from './choose-embedder.js';
import { chooseSummarizer } from './choose-summarizer.js';

/** Options of {@link createServeMemory}. */
export interface ServeMemoryOptions {
  readonly config: CliConfig;
  readonly store: Store;
  readonly logger: Logger;
  /**
   * Run background jobs in this process (`mnemo worker`), with this many job loops and this lease (an
   * attempt's deadline is 3/4 of it); without it, jobs are only queued.
   */
  readonly jobs?: { readonly concurrency: number; readonly leaseMs: number };
  /** The embedder of this process; default `chooseEmbedder(config)`. */
  readonly embedder?: Embedder;
  /** The refiner of this process (`chooseRefiner`); default none. */
  readonly refiner?: { readonly embedder: Embedder; readonly idle: () => boolean };
}

/** The engine of `mnemo serve` and `mnemo worker`, which must agree on the summarizer, embedder and tokenizer. */
export interface ServeMemory {
  readonly memory: Memory;
  readonly summarizer?: Summarizer;
  readonly embedder?: Embedder;
}

// A failure that repeats (a full disk, a restarting database: every poll and every job meets it) is
// logged in full once per this interval, with the count left out since.
const repeatedFailureLogIntervalMs = 30_000;

// Worker processes cannot be woken by the process that queued a job, so they poll more often than the in-process default.
const workerPollIntervalMs = 100;

/** Wires the memory engine that `serve` (jobs queued, run elsewhere) and `worker` (jobs run here) share. */
export function createServeMemory(options: ServeMemoryOptions): ServeMemory {
  const { config, store, logger, jobs } = options;
  const tokenCounter = createGptTokenCounter(config.llm.model === undefined ? {} : { model: config.llm.model });
  const summarizer = chooseSummarizer(config).create?.(tokenCounter);
  const embedder = options.embedder ?? chooseEmbedder(config);
  const defaults = engineDefaultsOf(config.context);
  const repeats = createRepeatThrottle(repeatedFailureLogIntervalMs);
  const logFailure = (error: unknown, message: string) => {
    const decision = repeats.take(`${message}:${repeatKeyOf(error)}`);
    if (decision.log)
      logger.error(
        { err: error, ...(decision.suppressed > 0 ? { repeatedSinceLastLogged: decision.suppressed } : {}) },
        message,
      );
  };
  const memory = createMemory({
    store,
    ...(embedder === undefined ? {} : { embedder }),
    ...(options.refiner === undefined || embedder === undefined ? {} : { refiner: options.refiner }),
    tokenCounter,
    queryEmbeddingTimeoutMs: config.embedder.queryTimeoutMs,
    // The configured budget, policy and window, with compaction thresholds to match (as `mcp` uses them).
    context: defaults.context,
    compaction: { settings: defaults.compactionSettings, ...(summarizer === undefined ? {} : { summarizer }) },
    onDeferredWriteError: (error) => logFailure(error, 'usage ledger entry of a context build not recorded'),
    onQueryEmbeddingError: (error) => logFailure(error, 'query embedding failed: the context recalled keyword-only'),
    worker:
      jobs === undefined
        ? { autoStart: false }
        : {
            concurrency: jobs.concurrency,
            leaseMs: jobs.leaseMs,
            attemptTimeoutMs: Math.max(1, Math.floor(jobs.leaseMs * 0.75)),
            pollIntervalMs: workerPollIntervalMs,
            onError: (error) => logFailure(error, 'background job failed'),
            onWarning: (warning) => logger.warn({ warning }, 'background job finished degraded'),
          },
  });
  return {
    memory,
    ...(summarizer === undefined ? {} : { summarizer }),
    ...(embedder === undefined ? {} : { embedder }),
  };
}
