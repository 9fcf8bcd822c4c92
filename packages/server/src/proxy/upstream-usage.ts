/**
 * What an upstream said a call cost, in one shape whatever protocol it spoke. `inputTokens` counts every
 * prompt token, cached or not (Anthropic reports the uncached rest apart; it is added up here), so
 * `cachedInputTokens / inputTokens` is the share the provider's prompt cache served.
 */
export interface UpstreamUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Prompt tokens read from the provider's cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  readonly cachedInputTokens: number;
  /** Prompt tokens written to the cache (Anthropic `cache_creation_input_tokens`; 0 where the protocol has no such figure). */
  readonly cacheWriteInputTokens: number;
}

/**
 * Reads a `usage` object of any protocol mnemo speaks: chat completions (`prompt_tokens`,
 * `completion_tokens`, `prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`), Responses (`input_tokens`, `output_tokens`,
 * `input_tokens_details.cached_tokens`) or Anthropic Messages (`input_tokens` without the cached part,
 * `cache_read_input_tokens`, `cache_creation_input_tokens`, `output_tokens`). `undefined` when it holds
 * no token count at all.
 */
export function readUpstreamUsage(usage: unknown): UpstreamUsage | undefined {
  const fields = asRecord(usage);
  if (fields === undefined) return undefined;
  const cacheRead = count(fields.cache_read_input_tokens);
  const cacheWrite = count(fields.cache_creation_input_tokens);
  const anthropic = cacheRead !== undefined || cacheWrite !== undefined;
  const input = count(fields.prompt_tokens) ?? count(fields.input_tokens);
  const output = count(fields.completion_tokens) ?? count(fields.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const details = asRecord(fields.prompt_tokens_details) ?? asRecord(fields.input_tokens_details);
  // DeepSeek names the cached share prompt_cache_hit_tokens; OpenAI and Responses, details.cached_tokens.
  const cached = anthropic
    ? (cacheRead ?? 0)
    : (count(details?.cached_tokens) ?? count(fields.prompt_cache_hit_tokens) ?? 0);
  return {
    inputTokens: (input ?? 0) + (anthropic ? (cacheRead ?? 0) + (cacheWrite ?? 0) : 0),
    outputTokens: output ?? 0,
    cachedInputTokens: cached,
    cacheWriteInputTokens: cacheWrite ?? 0,
  };
}

/** Merges two partial reports of one call (Anthropic streams input counts first and output counts last): later non-zero figures win. */
export function mergeUpstreamUsage(
  earlier: UpstreamUsage | undefined,
  later: UpstreamUsage | undefined,
): UpstreamUsage | undefined {
  if (earlier === undefined || later === undefined) return later ?? earlier;
  return {
    inputTokens: later.inputTokens || earlier.inputTokens,
    outputTokens: later.outputTokens || earlier.outputTokens,
    cachedInputTokens: later.cachedInputTokens || earlier.cachedInputTokens,
    cacheWriteInputTokens: later.cacheWriteInputTokens || earlier.cacheWriteInputTokens,
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
