import { MemoryError } from '@mnemo/core';
import OpenAI from 'openai';
import type { ModelCallDescription } from './to-model-error.js';

/** Connection options every OpenAI-compatible model of this package takes. */
export interface OpenAiConnectionOptions {
  /** Base URL including the version path: `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), … */
  readonly baseUrl: string;
  /** Sent as a bearer token; omit for local servers that need none. */
  readonly apiKey?: string;
  /** Model id sent with every request. */
  readonly model: string;
  /** Limit of one attempt, in milliseconds. */
  readonly timeoutMs?: number;
  /** Retries after a timeout, a connection error, a 408/409/429 or a 5xx, with back-off; default 2. */
  readonly maxRetries?: number;
}

/** A configured SDK client and the checked settings it was made from. */
export interface OpenAiConnection {
  readonly client: OpenAI;
  /** Base URL without a trailing slash. */
  readonly baseUrl: string;
  readonly model: string;
  /** What {@link toModelError} needs to describe a failed call. */
  readonly call: ModelCallDescription;
}

// Local OpenAI-compatible servers (Ollama, llama.cpp, vLLM) ignore the key, but the SDK requires one.
const placeholderApiKey = 'no-key';

/**
 * Checks the options and creates an openai SDK client that reads no environment variable (the SDK's
 * `OPENAI_*` fallbacks are overridden); `timeoutMs` defaults to `defaultTimeoutMs`. Throws
 * `invalid_input` naming a bad base URL, model, timeout or retry count.
 */
export function createOpenAiClient(options: OpenAiConnectionOptions, defaultTimeoutMs: number): OpenAiConnection {
  const fail = (field: string, problem: string): never => {
    throw new MemoryError('invalid_input', `${field} ${problem}`, { details: { field } });
  };
  let url: URL | undefined;
  try {
    url = new URL(options.baseUrl);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    fail('baseUrl', `must be an http(s) URL (got ${JSON.stringify(options.baseUrl)})`);
  }
  if (typeof options.model !== 'string' || options.model.trim().length === 0)
    fail('model', 'must be a non-empty string');
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) fail('timeoutMs', `must be a positive integer (got ${timeoutMs})`);
  const maxRetries = options.maxRetries ?? 2;
  if (!Number.isInteger(maxRetries) || maxRetries < 0 || maxRetries > 10)
    fail('maxRetries', `must be an integer from 0 to 10 (got ${maxRetries})`);
  const apiKey = options.apiKey === undefined || options.apiKey === '' ? undefined : options.apiKey;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const client = new OpenAI({
    baseURL: baseUrl,
    apiKey: apiKey ?? placeholderApiKey,
    organization: null,
    project: null,
    webhookSecret: null,
    timeout: timeoutMs,
    maxRetries,
    logLevel: 'off',
  });
  return {
    client,
    baseUrl,
    model: options.model,
    call: { baseUrl, model: options.model, timeoutMs, attempts: maxRetries + 1 },
  };
}
