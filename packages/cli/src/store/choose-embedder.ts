import { HashedEmbedder, MemoryError, type Embedder } from '@mnemo/core';
import { OpenAiEmbedder, UseLiteEmbedder } from '@mnemo/models';
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
