import {
  ExtractiveSummarizer,
  isMemoryError,
  MemoryError,
  type OpenAiChatMessage,
  type SummarizeInput,
  type SummarizeResult,
  type Summarizer,
  type TokenCounter,
} from '@mnemo/core';
import { buildSummarizePrompt } from '@mnemo/core/internals';
import { APIConnectionTimeoutError } from 'openai';
import { createOpenAiChatModel, type ChatCompletion, type OpenAiChatModel } from './openai-chat-model.js';

/** Options of {@link OpenAiSummarizer}. */
export interface OpenAiSummarizerOptions {
  /** Base URL including the version path: `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), … */
  readonly baseUrl: string;
  /** Sent as a bearer token; omit for local servers that need none. */
  readonly apiKey?: string;
  /** Model id sent with every request; the summarizer's id is `openai:<model>`. */
  readonly model: string;
  /** The engine's counter: it checks the summary bound and counts tokens the provider did not report. */
  readonly tokenCounter: TokenCounter;
  /** Limit of one attempt, in milliseconds; default 30,000. */
  readonly timeoutMs?: number;
  /** Retries (with the SDK's back-off) after a timeout, a connection error, a 408/409/429 or a 5xx; default 2. */
  readonly maxRetries?: number;
  /** Writes the summary when the model fails; default an {@link ExtractiveSummarizer} on `tokenCounter`. */
  readonly fallback?: Summarizer;
  /** Sampling temperature, 0 to 2; default 0, so the same history gives (nearly) the same summary. */
  readonly temperature?: number;
}

// A reply that opens like this declined the task instead of doing it.
const refusalOpening =
  /^(?:i'?m sorry|i am sorry|sorry[,.!]|i apologi[sz]e|i can(?:no|')t\b|i cannot\b|i'?m (?:not able|unable)|i am (?:not able|unable)|i won'?t\b|as an ai\b)/i;
// C0 controls other than tab and newlines, DEL, and U+FFFD: decoded binary or a broken stream, not prose.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const binaryCharacter = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFD]/u;
// Models often repeat the prompt's last line ("Updated summary:") before the answer; it is not content.
const leadingLabel = /^(?:updated\s+)?summary\s*:\s*/i;
const maxReasonLength = 500;

/**
 * The LLM summarizer for any OpenAI-compatible endpoint (OpenAI, LiteLLM, Ollama, vLLM, llama.cpp
 * server): it sends core's {@link buildSummarizePrompt} (previous summary always included) with
 * `max_tokens` = `maxSummaryTokens` and the configured temperature, and returns the reply when it is
 * usable. It never throws for a model failure: an error status or unreachable endpoint after the SDK's
 * retries, a timeout, a body that is not a completion, and a reply that is empty, cut off at
 * `max_tokens`, over `maxSummaryTokens` (counted with `tokenCounter`), not text, a refusal, or an echo
 * of the prompt's instructions all hand the input to the fallback, whose summary is returned with
 * `fallbackReason` saying why (e.g. `overlong output: 812 > 400 tokens`). An aborted `signal` throws
 * (`model_failed` with `details.aborted`), since the caller asked to stop. A fallback's own error is thrown.
 *
 * Accounting: `inputTokens` is the prompt sent to the model, from the response's `usage` when the
 * endpoint answered and otherwise counted with `tokenCounter` (once, however many attempts were made);
 * `outputTokens` is the reply's `usage` or its counted tokens. On fallback, `inputTokens` stays the
 * failed call's prompt and is not added to the fallback's own `inputTokens`, because the default
 * extractive fallback reports that same prompt (what it would have sent), so a sum would count it twice;
 * `outputTokens` is the fallback's (the tokens of the stored text). A rejected reply's completion tokens
 * are not in the counts; the reason names them when they are the problem.
 */
export class OpenAiSummarizer implements Summarizer {
  readonly id: string;
  readonly #model: OpenAiChatModel;
  readonly #counter: TokenCounter;
  readonly #fallback: Summarizer;
  readonly #temperature: number;
  readonly #timeoutMs: number;

  /** Checks the options; throws `invalid_input` naming a bad base URL, model, limit or temperature. */
  constructor(options: OpenAiSummarizerOptions) {
    if (options.tokenCounter === undefined)
      throw new MemoryError('invalid_input', 'tokenCounter is required', { details: { field: 'tokenCounter' } });
    const temperature = options.temperature ?? 0;
    if (typeof temperature !== 'number' || !(temperature >= 0 && temperature <= 2)) {
      throw new MemoryError('invalid_input', `temperature must be a number from 0 to 2 (got ${String(temperature)})`, {
        details: { field: 'temperature' },
      });
    }
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#model = createOpenAiChatModel({
      baseUrl: options.baseUrl,
      model: options.model,
      timeoutMs: this.#timeoutMs,
      maxRetries: options.maxRetries ?? 2,
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    });
    this.id = `openai:${this.#model.model}`;
    this.#counter = options.tokenCounter;
    this.#fallback = options.fallback ?? new ExtractiveSummarizer({ tokenCounter: options.tokenCounter });
    this.#temperature = temperature;
  }

  async summarize(input: SummarizeInput): Promise<SummarizeResult> {
    const prompt = buildSummarizePrompt(input);
    const countedPromptTokens = prompt.reduce(
      (sum, message) => sum + this.#counter.countMessage({ role: message.role, content: message.content ?? '' }),
      this.#counter.requestOverheadTokens,
    );
    let completion: ChatCompletion;
    try {
      completion = await this.#model.complete(prompt, {
        maxTokens: input.maxSummaryTokens,
        temperature: this.#temperature,
        ...(input.signal === undefined ? {} : { signal: input.signal }),
      });
    } catch (error) {
      // Stopping is the caller's decision, not a model failure: no fallback summary may be written.
      if (input.signal?.aborted) throw error;
      return this.#fallBack(input, countedPromptTokens, this.#describeFailure(error));
    }
    const inputTokens = completion.usage?.promptTokens ?? countedPromptTokens;
    const content = completion.content.trim().replace(leadingLabel, '').trim();
    const rejection = this.#reject(content, completion, input, prompt);
    if (rejection !== undefined) return this.#fallBack(input, inputTokens, rejection);
    return {
      content,
      summarizer: this.id,
      inputTokens,
      outputTokens: completion.usage?.completionTokens ?? this.#counter.countText(content),
    };
  }

  /** Why a reply that arrived cannot be the summary, or `undefined` when it can. */
  #reject(
    content: string,
    completion: ChatCompletion,
    input: SummarizeInput,
    prompt: readonly OpenAiChatMessage[],
  ): string | undefined {
    if (content.length === 0) return 'empty output';
    if (binaryCharacter.test(content) || !/[\p{L}\p{N}]/u.test(content)) return `output is not text: ${quote(content)}`;
    if (refusalOpening.test(content.replace(/\u2019/g, "'"))) return `refusal: ${quote(content)}`;
    if (echoesPrompt(content, prompt, input.maxSummaryTokens)) return `output echoes the prompt: ${quote(content)}`;
    const tokens = this.#counter.countText(content);
    if (tokens > input.maxSummaryTokens) return `overlong output: ${tokens} > ${input.maxSummaryTokens} tokens`;
    // A summary cut off mid-sentence lost its newest facts; the fallback keeps them.
    if (completion.finishReason === 'length') return `output cut off at max_tokens ${input.maxSummaryTokens}`;
    return undefined;
  }

  #describeFailure(error: unknown): string {
    if (isMemoryError(error)) {
      if (error.cause instanceof APIConnectionTimeoutError) {
        const attempts = error.details?.attempts;
        return `timeout after ${this.#timeoutMs} ms${typeof attempts === 'number' ? ` (${attempts === 1 ? '1 attempt' : `${attempts} attempts`})` : ''}`;
      }
      if (error.details?.reply === 'empty') return 'empty output';
      if (error.details?.reply === 'not_text') return 'output is not text';
      return clip(`${error.code}: ${error.message}`);
    }
    return clip(`model_failed: ${error instanceof Error ? error.message : String(error)}`);
  }

  async #fallBack(input: SummarizeInput, inputTokens: number, reason: string): Promise<SummarizeResult> {
    const result = await this.#fallback.summarize(input);
    const fallbackReason =
      result.fallbackReason === undefined ? reason : clip(`${reason}; then ${result.fallbackReason}`);
    return { ...result, inputTokens, fallbackReason };
  }
}

/**
 * True when the reply repeats the prompt instead of answering it: one of the instruction sentences, or a
 * section header of the prompt's template (`Existing summary:`, `New messages:`), appears in it.
 */
function echoesPrompt(content: string, prompt: readonly OpenAiChatMessage[], maxSummaryTokens: number): boolean {
  const text = content.toLowerCase();
  const instructions = prompt.find((message) => message.role === 'system')?.content ?? '';
  const sentences = instructions.split(/(?<=[.:])\s+/).filter((sentence) => sentence.length >= 40);
  if (sentences.some((sentence) => text.includes(sentence.toLowerCase()))) return true;
  // Headers come from the template rendered without any history, so no user text can become one.
  const template =
    buildSummarizePrompt({ messages: [], maxSummaryTokens }).find((message) => message.role === 'user')?.content ?? '';
  const headers = template.split('\n').filter((line) => /^[A-Z][\w ]*:$/.test(line));
  return headers.some((header) => text.includes(header.toLowerCase()));
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return JSON.stringify(flat.length > 80 ? `${flat.slice(0, 80)}…` : flat);
}

function clip(reason: string): string {
  return reason.length > maxReasonLength ? `${reason.slice(0, maxReasonLength - 1)}…` : reason;
}
