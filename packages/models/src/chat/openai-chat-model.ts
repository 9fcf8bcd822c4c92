import { MemoryError, type OpenAiChatMessage } from '@mnemo/core';
import OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { createOpenAiClient } from './create-openai-client.js';
import { toModelError } from './to-model-error.js';

/** Options of {@link createOpenAiChatModel}. */
export interface OpenAiChatModelOptions {
  /** Base URL including the version path: `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), … */
  readonly baseUrl: string;
  /** Sent as a bearer token; omit for local servers that need none. */
  readonly apiKey?: string;
  /** Model id sent with every request. */
  readonly model: string;
  /** Limit of one attempt, in milliseconds; default 60,000. */
  readonly timeoutMs?: number;
  /** Retries after a timeout, a connection error, a 408/409/429 or a 5xx, with back-off; default 2. */
  readonly maxRetries?: number;
}

/** Token counts the provider reported for one completion. */
export interface ChatUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** The assistant's reply to one chat request. */
export interface ChatCompletion {
  readonly content: string;
  /** Present when the provider reported usage. */
  readonly usage?: ChatUsage;
  /** Why the model stopped (`stop`, `length`, …), when the provider said so. */
  readonly finishReason?: string;
}

/** Per-call options of {@link OpenAiChatModel.complete}; unset fields are not sent, so the server's defaults apply. */
export interface ChatCallOptions {
  readonly signal?: AbortSignal;
  /** Sent as `max_tokens`: the most tokens the reply may have, in the model's own tokenizer. */
  readonly maxTokens?: number;
  /** Sent as `temperature` (0 to 2). */
  readonly temperature?: number;
  /** Sent as `response_format`: ask for a JSON object, or for JSON matching a schema (structured outputs). */
  readonly responseFormat?: ChatResponseFormat;
}

/** A JSON object of any shape, or one that matches `schema` (`strict` asks the server to enforce it). */
export type ChatResponseFormat =
  | { readonly type: 'json_object' }
  | {
      readonly type: 'json_schema';
      readonly name: string;
      readonly schema: Readonly<Record<string, unknown>>;
      readonly strict?: boolean;
    };

/** A chat model behind an OpenAI-compatible endpoint. */
export interface OpenAiChatModel {
  readonly model: string;
  readonly baseUrl: string;
  /**
   * Sends messages (in the wire shape `toOpenAiMessages` produces) and returns the first choice's text.
   * Throws `unauthorized` (401/403) or `model_failed` (timeout, unreachable, error status after
   * retries, a body that is not JSON, aborted; and no choice, empty content or content that is not
   * text, with `details.reply` set to `no_choice`, `empty` or `not_text`).
   */
  complete(messages: readonly OpenAiChatMessage[], options?: ChatCallOptions): Promise<ChatCompletion>;
}

/**
 * Creates an {@link OpenAiChatModel} on the openai SDK. Reads no environment variable (the SDK's
 * `OPENAI_*` fallbacks are overridden); throws `invalid_input` for a bad base URL, model or limit.
 */
export function createOpenAiChatModel(options: OpenAiChatModelOptions): OpenAiChatModel {
  const { client, baseUrl, model, call } = createOpenAiClient(options, 60_000);

  return Object.freeze({
    model,
    baseUrl,
    async complete(messages: readonly OpenAiChatMessage[], callOptions: ChatCallOptions = {}): Promise<ChatCompletion> {
      let response: OpenAI.Chat.Completions.ChatCompletion;
      try {
        response = await client.chat.completions.create(
          {
            model,
            // Same wire shape: core's type is the protocol's message union, written without the SDK's types.
            messages: messages as unknown as ChatCompletionMessageParam[],
            ...(callOptions.maxTokens === undefined ? {} : { max_tokens: callOptions.maxTokens }),
            ...(callOptions.temperature === undefined ? {} : { temperature: callOptions.temperature }),
            ...(callOptions.responseFormat === undefined
              ? {}
              : { response_format: toWireResponseFormat(callOptions.responseFormat) }),
          },
          { signal: callOptions.signal },
        );
      } catch (error) {
        if (callOptions.signal?.aborted) throw toModelError(new OpenAI.APIUserAbortError(), call);
        throw toModelError(error, call);
      }
      return readCompletion(response, call.model, call.baseUrl);
    },
  });
}

function readCompletion(response: unknown, model: string, baseUrl: string): ChatCompletion {
  const where = `model ${model} at ${baseUrl}`;
  if (typeof response !== 'object' || response === null) {
    throw new MemoryError('model_failed', `${where} answered with something that is not a chat completion`, {
      details: { response },
    });
  }
  const { choices, usage } = response as {
    choices?: unknown;
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  };
  const first = Array.isArray(choices)
    ? (choices[0] as { message?: { content?: unknown }; finish_reason?: unknown } | undefined)
    : undefined;
  const content = first?.message?.content;
  if (typeof content !== 'string' || content.trim().length === 0) {
    const reply =
      first === undefined
        ? 'no_choice'
        : content === undefined || content === null || typeof content === 'string'
          ? 'empty'
          : 'not_text';
    const finish = `finish reason ${JSON.stringify(first?.finish_reason ?? null)}`;
    const reason =
      reply === 'no_choice'
        ? 'no choice'
        : reply === 'empty'
          ? `an empty reply (${finish})`
          : `a reply that is not text (${finish})`;
    throw new MemoryError('model_failed', `${where} returned ${reason}`, {
      details: { finishReason: first?.finish_reason, reply },
    });
  }
  const finishReason = typeof first?.finish_reason === 'string' ? { finishReason: first.finish_reason } : {};
  const promptTokens = usage?.prompt_tokens;
  const completionTokens = usage?.completion_tokens;
  if (typeof promptTokens === 'number' && typeof completionTokens === 'number') {
    return { content, usage: { promptTokens, completionTokens }, ...finishReason };
  }
  return { content, ...finishReason };
}

function toWireResponseFormat(format: ChatResponseFormat): ChatCompletionCreateParamsNonStreaming['response_format'] {
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: { name: format.name, schema: { ...format.schema }, strict: format.strict ?? true },
  };
}
