/**
 * What an upstream said its prompt cost, from the `usage` of a chat completion (streamed: the last chunk
 * that carries one). Providers name the cached share differently: OpenAI
 * `usage.prompt_tokens_details.cached_tokens`, DeepSeek `prompt_cache_hit_tokens`, OpenRouter and
 * Anthropic-style gateways `cache_read_input_tokens` and `cache_creation_input_tokens` (the prefix written
 * to the cache, billed above the base price). Counted, never guessed: an upstream that reports none gives
 * `undefined` fields, not zeros.
 */
export interface UpstreamCacheUsage {
  readonly promptTokens?: number;
  /** Prompt tokens the provider read from its cache (billed at its cached price). */
  readonly cachedTokens?: number;
  /** Prompt tokens the provider wrote to its cache (Anthropic-style cache writes). */
  readonly cacheWriteTokens?: number;
}

/** Reads {@link UpstreamCacheUsage} from a `usage` object of any of the shapes above; `undefined` when there is no usage. */
export function readUpstreamCacheUsage(usage: unknown): UpstreamCacheUsage | undefined {
  const record = asRecord(usage);
  if (record === undefined) return undefined;
  const details = asRecord(record.prompt_tokens_details);
  const cachedTokens = count(details?.cached_tokens) ?? count(record.prompt_cache_hit_tokens) ?? count(record.cache_read_input_tokens);
  const cacheWriteTokens = count(record.cache_creation_input_tokens);
  // Anthropic-style usage counts only the uncached input in input_tokens; the prompt is all three.
  const anthropicInput = count(record.input_tokens);
  const promptTokens =
    count(record.prompt_tokens) ?? (anthropicInput === undefined ? undefined : anthropicInput + (count(record.cache_read_input_tokens) ?? 0) + (cacheWriteTokens ?? 0));
  return {
    ...(promptTokens === undefined ? {} : { promptTokens }),
    ...(cachedTokens === undefined ? {} : { cachedTokens }),
    ...(cacheWriteTokens === undefined ? {} : { cacheWriteTokens }),
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
