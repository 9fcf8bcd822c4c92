import { embedBatchSize, HashedEmbedder, MemoryError, type Embedder } from '@mnemo/core';
import { OpenAiEmbedder, UseLiteEmbedder, UseLiteThreadEmbedder, type UseLiteThreadEmbedderOptions } from '@mnemo/models';
import type { CliConfig } from '../config/cli-config.js';

/**
 * The embedder of `serve`, `chat` and `mcp` from the config: the offline USE-lite model by default, an
 * OpenAI-compatible `/embeddings` endpoint, core's `HashedEmbedder` (`hashed`: for tests and benchmarks;
 * `dimensions` default 256), or none (keyword-only recall). `invalid_input` when `openai` lacks a base
 * URL or a model.
 */
export function chooseEmbedder(config: CliConfig): Embedder | undefined {
  const { kind, model, baseUrl, apiKey, dimensions } = config.embedder;
  if (kind === 'none') return undefined;
  if (kind === 'use-lite') return new UseLiteEmbedder();
  if (kind === 'hashed') return new HashedEmbedder(dimensions === undefined ? {} : { dimensions });
  if (baseUrl === undefined || model === undefined) {
    throw new MemoryError('invalid_input', 'MNEMO_EMBEDDER=openai needs MNEMO_EMBEDDING_MODEL and a base URL (MNEMO_EMBEDDING_BASE_URL or MNEMO_LLM_BASE_URL)', {
      details: { field: 'embedder' },
    });
  }
  return new OpenAiEmbedder({ baseUrl, model, ...(apiKey === undefined ? {} : { apiKey }), ...(dimensions === undefined ? {} : { dimensions }) });
}

/** An embedder with what its process must do at start and at the end: load the model (in its thread), and end the thread. */
export interface ProcessEmbedder {
  readonly embedder?: Embedder;
  readonly load: () => Promise<void>;
  readonly close: () => Promise<void>;
}

/**
 * The embedder of `serve`'s own requests (the query embeddings of hybrid contexts): as {@link chooseEmbedder},
 * but USE-lite runs on a worker thread, so a query embedding never blocks the event loop and its deadline
 * can cut it off. `load` loads the model in its thread, `close` ends the thread (both no-ops for the others).
 */
export function chooseQueryEmbedder(config: CliConfig): ProcessEmbedder {
  // Past the deadline the context goes keyword-only anyway: a query that cannot make it leaves the core to serving.
  return chooseThreadEmbedder(config, { callerDeadlineMs: config.embedder.queryTimeoutMs });
}

/**
 * The embedder of `mnemo worker`'s embed jobs: as {@link chooseEmbedder}, but USE-lite runs on a worker
 * thread, one job batch per forward pass. The process's event loop stays free for the store and for
 * signals: a forward pass on its own thread held it for seconds, so a SIGTERM waited past `serve`'s
 * stop timeout and the worker was killed instead of stopped.
 */
export function chooseWorkerEmbedder(config: CliConfig): ProcessEmbedder {
  return chooseThreadEmbedder(config, { maxBatchTexts: embedBatchSize });
}

function chooseThreadEmbedder(config: CliConfig, options: UseLiteThreadEmbedderOptions): ProcessEmbedder {
  if (config.embedder.kind === 'use-lite') {
    const embedder = new UseLiteThreadEmbedder(options);
    return { embedder, load: () => embedder.load(), close: () => embedder.close() };
  }
  const embedder = chooseEmbedder(config);
  return { ...(embedder === undefined ? {} : { embedder }), load: async () => undefined, close: async () => undefined };
}
