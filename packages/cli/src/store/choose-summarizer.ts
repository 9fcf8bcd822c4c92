import type { Summarizer, TokenCounter } from '@mnemo/core';
import { OpenAiSummarizer } from '@mnemo/models';
import type { CliConfig } from '../config/cli-config.js';

/** The summarizer a command compacts with, and how to describe it to the user. */
export interface SummarizerChoice {
  /** `undefined`: core's offline extractive summarizer (the engine's default). */
  readonly create?: (tokenCounter: TokenCounter) => Summarizer;
  /** E.g. `openai:llama3.2 at http://localhost:11434/v1 (falls back to extractive@1)`. */
  readonly description: string;
}

/**
 * Chooses the summarizer of `chat` and `compact`: `OpenAiSummarizer` on the configured endpoint when
 * both `llm.baseUrl` and `llm.model` are set (it falls back to the offline one and records why when
 * the model fails), otherwise the offline `ExtractiveSummarizer`. `replay` never calls this: a replay
 * always summarizes offline, so it is deterministic and needs no network.
 */
export function chooseSummarizer(config: CliConfig): SummarizerChoice {
  const { baseUrl, model, apiKey, timeoutMs } = config.llm;
  if (baseUrl === undefined || model === undefined) {
    return {
      description: 'extractive@1 (offline; set MNEMO_LLM_BASE_URL and MNEMO_LLM_MODEL to summarize with an LLM)',
    };
  }
  return {
    create: (tokenCounter) =>
      new OpenAiSummarizer({ baseUrl, model, tokenCounter, timeoutMs, ...(apiKey === undefined ? {} : { apiKey }) }),
    description: `openai:${model} at ${baseUrl} (falls back to extractive@1 when the model fails)`,
  };
}
