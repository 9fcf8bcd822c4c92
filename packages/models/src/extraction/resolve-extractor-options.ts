import { MemoryError } from '@mnemo/core';
import { createOpenAiChatModel, type OpenAiChatModel } from '../chat/openai-chat-model.js';
import {
  requestValidatedJson,
  type InvalidOutputEvent,
  type StructuredOutput,
  type ValidatedJsonRequest,
} from './request-validated-json.js';

/** Options of the LLM extractors, `OpenAiFactExtractor` and `OpenAiGraphExtractor`. */
export interface OpenAiExtractorOptions {
  /** Base URL including the version path: `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), … */
  readonly baseUrl: string;
  /** Sent as a bearer token; omit for local servers that need none. */
  readonly apiKey?: string;
  /** Model id sent with every request; the extractor's id is `openai:<model>`. */
  readonly model: string;
  /** Limit of one attempt, in milliseconds; default 60,000. */
  readonly timeoutMs?: number;
  /** Retries (with the SDK's back-off) after a timeout, a connection error, a 408/409/429 or a 5xx; default 2. */
  readonly maxRetries?: number;
  /** Replies asked for again, with the problems fed back, after one that is not valid JSON of the right shape; default 2. */
  readonly maxInvalidRetries?: number;
  /** Called for every rejected reply (before it is retried, or before `model_failed` is thrown), e.g. to log it. */
  readonly onInvalidOutput?: (event: InvalidOutputEvent) => void;
  /** How to ask for JSON; default `json_schema` (strict structured outputs), which falls back to `none` on a server that refuses it. */
  readonly structuredOutput?: StructuredOutput;
  /** Sent as `max_tokens`; default 2,000. */
  readonly maxOutputTokens?: number;
  /** Sampling temperature, 0 to 2; default 0. */
  readonly temperature?: number;
}

/** The checked settings both extractors share. */
export interface ExtractorSettings {
  readonly model: OpenAiChatModel;
  readonly id: string;
  readonly maxAttempts: number;
  readonly maxOutputTokens: number;
  readonly temperature: number;
  readonly structuredOutput: StructuredOutput;
  readonly onInvalidOutput: ((event: InvalidOutputEvent) => void) | undefined;
}

/** Checks the options both extractors take and creates their chat model; throws `invalid_input`. */
export function resolveExtractorOptions(options: OpenAiExtractorOptions): ExtractorSettings {
  const fail = (field: string, problem: string): never => {
    throw new MemoryError('invalid_input', `${field} ${problem}`, { details: { field } });
  };
  const maxInvalidRetries = options.maxInvalidRetries ?? 2;
  if (!Number.isInteger(maxInvalidRetries) || maxInvalidRetries < 0 || maxInvalidRetries > 10) {
    fail('maxInvalidRetries', `must be an integer from 0 to 10 (got ${String(maxInvalidRetries)})`);
  }
  const maxOutputTokens = options.maxOutputTokens ?? 2_000;
  if (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1)
    fail('maxOutputTokens', `must be a positive integer (got ${String(maxOutputTokens)})`);
  const temperature = options.temperature ?? 0;
  if (typeof temperature !== 'number' || !(temperature >= 0 && temperature <= 2))
    fail('temperature', `must be a number from 0 to 2 (got ${String(temperature)})`);
  const structuredOutput = options.structuredOutput ?? 'json_schema';
  if (!['json_schema', 'json_object', 'none'].includes(structuredOutput)) {
    fail('structuredOutput', `must be json_schema, json_object or none (got ${JSON.stringify(structuredOutput)})`);
  }
  const model = createOpenAiChatModel({
    baseUrl: options.baseUrl,
    model: options.model,
    timeoutMs: options.timeoutMs ?? 60_000,
    maxRetries: options.maxRetries ?? 2,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
  });
  return Object.freeze({
    model,
    id: `openai:${model.model}`,
    maxAttempts: maxInvalidRetries + 1,
    maxOutputTokens,
    temperature,
    structuredOutput,
    onInvalidOutput: options.onInvalidOutput,
  });
}

/** One extraction an extractor asks its model for: the prompt, the reply's schema, and what a valid reply is. */
export interface ExtractionAsk<T> {
  readonly prompt: ValidatedJsonRequest<T>['prompt'];
  readonly schemaName: string;
  readonly schema: Readonly<Record<string, unknown>>;
  readonly validate: ValidatedJsonRequest<T>['validate'];
  readonly signal?: AbortSignal | undefined;
}

/**
 * The request both LLM extractors make, over their checked settings: the validated JSON request with
 * their model, limits and retries. A server that refused `response_format` once is not asked with it again.
 */
export function createExtractionRequest(settings: ExtractorSettings): <T>(ask: ExtractionAsk<T>) => Promise<T> {
  let structuredOutput = settings.structuredOutput;
  return async <T>(ask: ExtractionAsk<T>): Promise<T> => {
    const result = await requestValidatedJson({
      model: settings.model,
      extractorId: settings.id,
      prompt: ask.prompt,
      schemaName: ask.schemaName,
      schema: ask.schema,
      structuredOutput,
      validate: ask.validate,
      maxAttempts: settings.maxAttempts,
      maxTokens: settings.maxOutputTokens,
      temperature: settings.temperature,
      onInvalidOutput: settings.onInvalidOutput,
      signal: ask.signal,
    });
    structuredOutput = result.structuredOutput;
    return result.value;
  };
}
