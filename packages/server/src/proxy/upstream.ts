import { MemoryError } from '@mnemo/core';
import type { UpstreamLlmConfig } from '../app/server-deps.js';

/** Client headers forwarded upstream as they are (OpenAI's account and beta selectors). */
const forwardedRequestHeaders = ['openai-organization', 'openai-project', 'openai-beta'];
/** Upstream response headers relayed to the client: the body's type, and what clients read to back off or to report. */
const relayedResponseHeader = /^(content-type|retry-after|retry-after-ms|x-ratelimit-.*|openai-.*|x-should-retry)$/i;

/**
 * Calls the upstream OpenAI-compatible endpoint at `path` (e.g. `/chat/completions`) under the
 * configured base URL, with the configured API key or, when none is configured, the client's own
 * `Authorization` header. Never aborts with the client: a reply keeps being read after a hang-up.
 * Throws `unavailable` without a configured base URL, `model_failed` when the upstream cannot be reached.
 */
export async function callUpstream(
  llm: UpstreamLlmConfig,
  path: string,
  request: { method: 'GET' | 'POST'; clientHeaders: Headers; body?: string },
): Promise<Response> {
  if (llm.baseUrl === undefined || llm.baseUrl.trim() === '') {
    throw new MemoryError('unavailable', 'the proxy has no upstream: configure the OpenAI-compatible base URL (llm.baseUrl) to forward to', {
      details: { field: 'llm.baseUrl' },
    });
  }
  const url = `${llm.baseUrl.replace(/\/+$/, '')}${path}`;
  const headers = new Headers({ accept: request.clientHeaders.get('accept') ?? 'application/json' });
  if (request.body !== undefined) headers.set('content-type', 'application/json');
  const authorization = llm.apiKey === undefined || llm.apiKey === '' ? request.clientHeaders.get('authorization') : `Bearer ${llm.apiKey}`;
  if (authorization !== null) headers.set('authorization', authorization);
  for (const name of forwardedRequestHeaders) {
    const value = request.clientHeaders.get(name);
    if (value !== null) headers.set(name, value);
  }
  try {
    return await fetch(url, { method: request.method, headers, ...(request.body === undefined ? {} : { body: request.body }) });
  } catch (error) {
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    throw new MemoryError('model_failed', `the upstream ${url} could not be reached: ${reason}`, { cause: error, details: { upstream: url } });
  }
}

/** The upstream response headers worth relaying (content type, rate-limit and retry hints, provider ids), on a fresh mutable `Headers`. */
export function relayedHeaders(upstream: Headers): Headers {
  const headers = new Headers();
  upstream.forEach((value, name) => {
    if (relayedResponseHeader.test(name)) headers.set(name, value);
  });
  return headers;
}
