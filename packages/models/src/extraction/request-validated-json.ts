import { isMemoryError, MemoryError, type OpenAiChatMessage } from '@mnemo/core';
import type { ChatCompletion, ChatResponseFormat, OpenAiChatModel } from '../chat/openai-chat-model.js';
import { parseJsonReply } from './parse-json-reply.js';

/**
 * How an extractor asks for JSON: `json_schema` sends its schema as a strict `response_format`
 * (structured outputs), `json_object` asks for any JSON object, `none` relies on the prompt alone.
 * The prompt always describes the JSON, so every mode works with a model that follows instructions.
 */
export type StructuredOutput = 'json_schema' | 'json_object' | 'none';

/** A reply an extractor rejected, as its `onInvalidOutput` callback receives it. */
export interface InvalidOutputEvent {
  /** Id of the extractor, e.g. `openai:gpt-4o-mini`. */
  readonly extractor: string;
  /** 1 for the first reply. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** The reply text (at most 4,000 characters). */
  readonly output: string;
  /** What is wrong with it; these are also sent back to the model when it retries. */
  readonly problems: readonly string[];
  /** False for the last attempt: the call then throws `model_failed`. */
  readonly willRetry: boolean;
}

/** The checked value of a reply, or what is wrong with it. */
export type ValidationResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problems: readonly string[] };

/** One JSON task: the prompt, the schema, how to check a reply, and how often to ask again. */
export interface ValidatedJsonRequest<T> {
  readonly model: OpenAiChatModel;
  readonly extractorId: string;
  readonly prompt: readonly OpenAiChatMessage[];
  readonly schemaName: string;
  readonly schema: Readonly<Record<string, unknown>>;
  readonly structuredOutput: StructuredOutput;
  readonly validate: (value: unknown) => ValidationResult<T>;
  /** Replies to ask for before giving up, at least 1. */
  readonly maxAttempts: number;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly onInvalidOutput?: ((event: InvalidOutputEvent) => void) | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The checked value, and the structured-output mode that worked (`none` after a server refused `response_format`). */
export interface ValidatedJsonResult<T> {
  readonly value: T;
  readonly structuredOutput: StructuredOutput;
}

const maxOutputChars = 4_000;
const maxProblemsShown = 10;

/**
 * Asks the model for JSON and checks it; a reply that is empty, not JSON or fails `validate` is reported
 * to `onInvalidOutput` and asked for again with the problems fed back (the prompt, the bad reply, then
 * the problems), up to `maxAttempts` replies in all; after that it throws `model_failed` with
 * `details.attempts`, `details.problems` and `details.output`. A 400 or 422 to a request that carried
 * `response_format` is sent again once without it (servers that do not support it say so that way).
 * Endpoint errors (`unauthorized`, `model_failed` after the SDK's retries, aborts) are thrown as they are.
 */
export async function requestValidatedJson<T>(request: ValidatedJsonRequest<T>): Promise<ValidatedJsonResult<T>> {
  let structuredOutput = request.structuredOutput;
  let messages: readonly OpenAiChatMessage[] = request.prompt;
  const send = async (): Promise<ChatCompletion> => {
    try {
      return await complete(request, messages, structuredOutput);
    } catch (error) {
      if (structuredOutput === 'none' || request.signal?.aborted || !refusesResponseFormat(error)) throw error;
      const completion = await complete(request, messages, 'none');
      // Remembered only once the plain request worked: a 400 for another reason (too long a prompt) fails again.
      structuredOutput = 'none';
      return completion;
    }
  };

  let output = '';
  let problems: readonly string[] = [];
  for (let attempt = 1; attempt <= request.maxAttempts; attempt += 1) {
    const checked = await readReply(send);
    if (checked.ok) {
      const result = request.validate(checked.value);
      if (result.ok) return { value: result.value, structuredOutput };
      problems = result.problems;
    } else {
      problems = [checked.problem];
    }
    output = checked.output;
    const willRetry = attempt < request.maxAttempts;
    request.onInvalidOutput?.({
      extractor: request.extractorId,
      attempt,
      maxAttempts: request.maxAttempts,
      output: clip(output),
      problems,
      willRetry,
    });
    if (willRetry)
      messages = [
        ...request.prompt,
        { role: 'assistant', content: output },
        { role: 'user', content: feedback(problems) },
      ];
  }
  throw new MemoryError(
    'model_failed',
    `${request.extractorId} gave no valid output in ${request.maxAttempts} attempts: ${listProblems(problems)}`,
    {
      details: { attempts: request.maxAttempts, problems, output: clip(output) },
    },
  );
}

type CheckedReply = { ok: true; value: unknown; output: string } | { ok: false; problem: string; output: string };

async function readReply(send: () => Promise<ChatCompletion>): Promise<CheckedReply> {
  let completion: ChatCompletion;
  try {
    completion = await send();
  } catch (error) {
    // An empty or non-text reply is bad output, worth asking again; every other failure is the endpoint's.
    const reply = isMemoryError(error, 'model_failed') ? error.details?.reply : undefined;
    if (reply === 'empty' || reply === 'not_text' || reply === 'no_choice')
      return { ok: false, problem: `the reply is ${reply === 'not_text' ? 'not text' : 'empty'}`, output: '' };
    throw error;
  }
  const parsed = parseJsonReply(completion.content);
  if (parsed.ok) return { ok: true, value: parsed.value, output: completion.content };
  const cutOff =
    completion.finishReason === 'length' ? ' — it was cut off at the token limit, so keep the answer shorter' : '';
  return { ok: false, problem: `${parsed.problem}${cutOff}`, output: completion.content };
}

function complete(
  request: ValidatedJsonRequest<unknown>,
  messages: readonly OpenAiChatMessage[],
  structuredOutput: StructuredOutput,
): Promise<ChatCompletion> {
  const responseFormat: ChatResponseFormat | undefined =
    structuredOutput === 'json_schema'
      ? { type: 'json_schema', name: request.schemaName, schema: request.schema, strict: true }
      : structuredOutput === 'json_object'
        ? { type: 'json_object' }
        : undefined;
  return request.model.complete(messages, {
    maxTokens: request.maxTokens,
    temperature: request.temperature,
    ...(responseFormat === undefined ? {} : { responseFormat }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  });
}

function refusesResponseFormat(error: unknown): boolean {
  const status = isMemoryError(error, 'model_failed') ? error.details?.status : undefined;
  return status === 400 || status === 422;
}

function feedback(problems: readonly string[]): string {
  return `That reply cannot be used: ${listProblems(problems)}. Answer again with only the corrected JSON object, in the format described above.`;
}

function listProblems(problems: readonly string[]): string {
  const shown = problems.slice(0, maxProblemsShown).join('; ');
  return problems.length > maxProblemsShown ? `${shown}; and ${problems.length - maxProblemsShown} more` : shown;
}

function clip(text: string): string {
  return text.length > maxOutputChars ? `${text.slice(0, maxOutputChars - 1)}…` : text;
}
