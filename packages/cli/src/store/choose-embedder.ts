import { HashedEmbedder, MemoryError, type Embedder } from '@mnemo/core';
import { OpenAiEmbedder, StaticEmbedder, UseLiteEmbedder, UseLiteThreadEmbedder } from '@mnemo/models';
import type { CliConfig } from '../config/cli-config.js';
import { watchIdleCores } from './idle-cores.js';

/**
 * The embedder of `serve`, `chat` and `mcp` from the config: the static table distilled from USE-lite by
 * default (microseconds a text, on the caller's thread), the USE-lite model itself (`use-lite`), an
 * OpenAI-compatible `/embeddings` endpoint, core's `HashedEmbedder` (`hashed`: for tests and benchmarks;
 * `dimensions` default 256), or none (keyword-only recall). `invalid_input` when `openai` lacks a base
 * URL or a model.
 */
export function chooseEmbedder(config: CliConfig): Embedder | undefined {
  const { kind, model, baseUrl, apiKey, dimensions } = config.embedder;
  if (kind === 'none') return undefined;
  if (kind === 'static') return new StaticEmbedder();
  if (kind === 'use-lite') return new UseLiteEmbedder();
  if (kind === 'hashed') return new HashedEmbedder(dimensions === undefined ? {} : { dimensions });
  if (baseUrl === undefined || model === undefined) {
    throw new MemoryError(
      'invalid_input',
      'MNEMO_EMBEDDER=openai needs MNEMO_EMBEDDING_MODEL and a base URL (MNEMO_EMBEDDING_BASE_URL or MNEMO_LLM_BASE_URL)',
      {
        details: { field: 'embedder' },
      },
    );
  }
  return new OpenAiEmbedder({
    baseUrl,
    model,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(dimensions === undefined ? {} : { dimensions }),
  });
}

/**
 * The query embedding deadline of a command that serves one user in its own process (`chat`, `mcp`):
 * the config's where a query embedding can be cut off (beside a refiner, whose thread can; an `openai`
 * endpoint, which can also stall), else `false`, waited for (an in-process model cannot be cut off).
 */
export function oneUserQueryDeadline(config: CliConfig, hasRefiner: boolean): number | false {
  return hasRefiner || config.embedder.kind === 'openai' ? config.embedder.queryTimeoutMs : false;
}

/** An embedder with the means to load it ahead of use and to end its threads. */
export interface ThreadedEmbedder {
  readonly embedder?: Embedder;
  /** Loads the model in its threads now (a no-op for embedders without threads). */
  load(): Promise<void>;
  /** Ends the threads (a no-op for embedders without threads). */
  close(): Promise<void>;
}

/**
 * The embedder of `serve`'s own requests (the query embeddings of hybrid contexts): as {@link chooseEmbedder},
 * but USE-lite runs on a worker thread, so a query embedding never blocks the event loop and its deadline
 * can cut it off.
 */
export function chooseQueryEmbedder(config: CliConfig): ThreadedEmbedder {
  // Past the deadline the context goes keyword-only anyway: a query that cannot make it leaves the core to serving.
  return chooseThreadedEmbedder(config, { callerDeadlineMs: config.embedder.queryTimeoutMs });
}

/**
 * The embedder of `mnemo worker`'s embed jobs: as {@link chooseEmbedder}, but USE-lite runs on `threads`
 * worker threads (1 to 16), so a backlog is embedded on that many cores at once while the job loops go on
 * reading and writing the store and extracting on the main thread.
 */
export function chooseWorkerEmbedder(config: CliConfig, threads: number): ThreadedEmbedder {
  return chooseThreadedEmbedder(config, { threads });
}

function chooseThreadedEmbedder(
  config: CliConfig,
  options: { callerDeadlineMs?: number; threads?: number },
): ThreadedEmbedder {
  if (config.embedder.kind === 'use-lite') {
    const embedder = new UseLiteThreadEmbedder(options);
    return { embedder, load: () => embedder.load(), close: () => embedder.close() };
  }
  const embedder = chooseEmbedder(config);
  return { ...(embedder === undefined ? {} : { embedder }), load: async () => undefined, close: async () => undefined };
}

/** The model id of the config's refiner, without loading it; `undefined` for none. */
export function refinerModelOf(config: CliConfig): string | undefined {
  return config.embedder.refiner === 'none' ? undefined : useLiteModel;
}

const useLiteModel = new UseLiteEmbedder().model;

/** A process's refiner (decision 0045), with the means to load its model ahead of use and to end it. */
export interface ChosenRefiner {
  readonly refiner?: { readonly embedder: Embedder; readonly idle: () => boolean };
  /** Loads the model in its thread now (a no-op without a refiner). */
  load(): Promise<void>;
  /** Ends its thread and its idle readings (a no-op without a refiner). */
  close(): Promise<void>;
}

/**
 * The refiner of the config (`embedder.refiner`): USE-lite on one worker thread beside the static table,
 * refining while the machine's other work leaves its cores idle (`watchIdleCores`), or none. `serve`'s HTTP
 * processes only embed queries with it (`callerDeadlineMs`: their deadline) and run no jobs, so they watch nothing.
 */
export function chooseRefiner(
  config: CliConfig,
  options: { callerDeadlineMs?: number; runsJobs: boolean },
): ChosenRefiner {
  if (config.embedder.refiner === 'none') return { load: async () => undefined, close: async () => undefined };
  const embedder = new UseLiteThreadEmbedder(
    options.callerDeadlineMs === undefined ? {} : { callerDeadlineMs: options.callerDeadlineMs },
  );
  const cores = options.runsJobs ? watchIdleCores({ maxOthersShare: config.embedder.refinerIdleShare }) : undefined;
  return {
    refiner: { embedder, idle: cores === undefined ? () => false : () => cores.idle() },
    load: () => embedder.load(),
    async close() {
      cores?.stop();
      await embedder.close();
    },
  };
}
