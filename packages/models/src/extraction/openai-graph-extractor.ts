import type { Entity, ExtractedGraph, GraphExtractor, SummarySourceMessage } from '@mnemo/core';
import { buildGraphExtractionPrompt } from './graph-extraction-prompt.js';
import { graphExtractionSchema, graphExtractionSchemaName, readExtractedGraph } from './graph-extraction-schema.js';
import {
  createExtractionRequest,
  resolveExtractorOptions,
  type OpenAiExtractorOptions,
} from './resolve-extractor-options.js';

/**
 * The LLM {@link GraphExtractor} for any OpenAI-compatible endpoint: sends {@link buildGraphExtractionPrompt}
 * with {@link graphExtractionSchema} as a strict `response_format` (or only the prompt's instructions, see
 * `structuredOutput`), and returns what {@link readExtractedGraph} accepts — entities (person, place,
 * organization, device, event, other) with aliases and descriptions, and relations with snake_case
 * predicates between `user`, the reply's entities and the known ones, citing seqs of the input.
 *
 * Invalid replies are handled as {@link OpenAiFactExtractor} does: reported to `onInvalidOutput`, asked
 * for again with the problems fed back `maxInvalidRetries` times, then `model_failed` with
 * `details.problems` and `details.output`. Endpoint errors are `unauthorized` or `model_failed` with the
 * SDK error as `cause`. No messages means no request and an empty graph.
 */
export class OpenAiGraphExtractor implements GraphExtractor {
  readonly id: string;
  readonly #request: ReturnType<typeof createExtractionRequest>;

  /** Checks the options; throws `invalid_input` naming a bad base URL, model, limit, retry count or temperature. */
  constructor(options: OpenAiExtractorOptions) {
    const settings = resolveExtractorOptions(options);
    this.id = settings.id;
    this.#request = createExtractionRequest(settings);
  }

  async extract(input: {
    messages: readonly SummarySourceMessage[];
    knownEntities: readonly Entity[];
    signal?: AbortSignal;
  }): Promise<ExtractedGraph> {
    if (input.messages.length === 0) return { entities: [], relations: [] };
    const context = {
      shownSeqs: new Set(input.messages.map((message) => message.seq)),
      knownEntities: input.knownEntities,
    };
    return this.#request({
      prompt: buildGraphExtractionPrompt(input),
      schemaName: graphExtractionSchemaName,
      schema: graphExtractionSchema,
      validate: (value) => readExtractedGraph(value, context),
      signal: input.signal,
    });
  }
}
