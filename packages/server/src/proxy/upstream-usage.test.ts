import { describe, expect, it } from 'vitest';
import { mergeUpstreamUsage, readUpstreamUsage } from './upstream-usage.js';

describe('readUpstreamUsage', () => {
  it('reads chat completions, Responses and Anthropic usage into one shape, counting cached tokens as input', () => {
    expect(
      readUpstreamUsage({ prompt_tokens: 100, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 64 } }),
    ).toEqual({
      inputTokens: 100,
      outputTokens: 9,
      cachedInputTokens: 64,
      cacheWriteInputTokens: 0,
    });
    expect(
      readUpstreamUsage({ input_tokens: 80, output_tokens: 5, input_tokens_details: { cached_tokens: 16 } }),
    ).toEqual({
      inputTokens: 80,
      outputTokens: 5,
      cachedInputTokens: 16,
      cacheWriteInputTokens: 0,
    });
    // Anthropic's input_tokens is the uncached rest.
    expect(
      readUpstreamUsage({
        input_tokens: 10,
        cache_read_input_tokens: 300,
        cache_creation_input_tokens: 40,
        output_tokens: 7,
      }),
    ).toEqual({ inputTokens: 350, outputTokens: 7, cachedInputTokens: 300, cacheWriteInputTokens: 40 });
  });

  it("answers undefined for no usage at all, and merges a stream's partial reports", () => {
    expect(readUpstreamUsage(null)).toBeUndefined();
    expect(readUpstreamUsage({ total_tokens: 3 })).toBeUndefined();
    const start = readUpstreamUsage({
      input_tokens: 10,
      cache_read_input_tokens: 20,
      cache_creation_input_tokens: 0,
      output_tokens: 1,
    });
    expect(mergeUpstreamUsage(start, readUpstreamUsage({ output_tokens: 12 }))).toEqual({
      inputTokens: 30,
      outputTokens: 12,
      cachedInputTokens: 20,
      cacheWriteInputTokens: 0,
    });
  });
});
