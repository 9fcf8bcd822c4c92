import type { ExtractedFact, FactExtractionInput, FactExtractor } from '@mnemo/core';
import { buildFactExtractionPrompt } from './fact-extraction-prompt.js';
import { factExtractionSchema, factExtractionSchemaName, readExtractedFacts } from './fact-extraction-schema.js';
import {
  createExtractionRequest,
  resolveExtractorOptions,
  type OpenAiExtractorOptions,
} from './resolve-extractor-options.js';

/**
 * The LLM {@link FactExtractor} for any OpenAI-compatible endpoint: sends {@link buildFactExtractionPrompt}
 * with {@link factExtractionSchema} as a strict `response_format` (or only the prompt's instructions, see
 * `structuredOutput`), and returns the facts {@link readExtractedFacts} accepts — durable facts about
 * the user in the user's words and language, snake_case attributes, `negate` for facts that ended,
 * sourceSeqs among the input's messages.
 *
 * A reply that is empty, not JSON (a ```json fence is fine), of the wrong shape or citing seqs that were
 * not shown is never dropped silently: it goes to `onInvalidOutput` and is asked for again with the
 * problems fed back, `maxInvalidRetries` times; then `model_failed` is thrown with `details.problems`
 * and `details.output`, for the caller (a background job) to retry later or fall back. Endpoint errors
 * are `unauthorized` (401/403) or `model_failed` (after the SDK's retries, timeouts, aborts), with the
 * SDK error as `cause`. No messages means no request and no facts.
 */
export class OpenAiFactExtractor implements FactExtractor {
  readonly id: string;
  readonly #request: ReturnType<typeof createExtractionRequest>;

  /** Checks the options; throws `invalid_input` naming a bad base URL, model, limit, retry count or temperature. */
  constructor(options: OpenAiExtractorOptions) {
    const settings = resolveExtractorOptions(options);
    this.id = settings.id;
    this.#request = createExtractionRequest(settings);
  }

  async extract(input: FactExtractionInput): Promise<ExtractedFact[]> {
    if (input.messages.length === 0) return [];
    const shownSeqs = new Set(input.messages.map((message) => message.seq));
    return this.#request({
      prompt: buildFactExtractionPrompt(input),
      schemaName: factExtractionSchemaName,
      schema: factExtractionSchema,
      validate: (value) => readExtractedFacts(value, shownSeqs),
      signal: input.signal,
    });
  }
}
