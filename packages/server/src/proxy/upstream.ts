import { MemoryError } from '@mnemo/core';
import type { UpstreamLlmConfig } from '../app/server-deps.js';

/** Client headers forwarded upstream as they are (OpenAI's account and beta selectors). */
const forwardedRequestHeaders = ['openai-organization', 'openai-project', 'openai-beta'];
/** Upstream response headers relayed to the client: the body's type, and what clients read to back off or to report. */
const relayedResponseHeader = /^(content-type|retry-after|retry-after-ms|x-ratelimit-.*|openai-.*|x-should-retry)$/i;

/** Client header carrying the client's own provider key, passed upstream only with `llm.passClientKey`. */
export const upstreamAuthorizationHeader = 'X-Mnemo-Upstream-Authorization';

/** Throws `unavailable` (before anything is stored) when the proxy has no upstream to forward to. */
export function requireUpstream(llm: UpstreamLlmConfig): void {
  if (llm.baseUrl === undefined || llm.baseUrl.trim() === '') {
    throw new MemoryError('unavailable', 'the proxy has no upstream: configure the OpenAI-compatible base URL (llm.baseUrl, MNEMO_LLM_BASE_URL) to forward to', {
      details: { field: 'llm.baseUrl' },
    });
  }
}

/**
 * The `Authorization` to send upstream: the configured key; else, with `passClientKey`, the client's
 * `X-Mnemo-Upstream-Authorization` or (when it is no mnemo key) its `Authorization`; else none.
 * mnemo's own API keys never leave mnemo.
 */
export function upstreamAuthorization(llm: UpstreamLlmConfig, clientHeaders: Headers, authenticatedByKey: boolean): string | undefined {
  if (llm.apiKey !== undefined && llm.apiKey !== '') return `Bearer ${llm.apiKey}`;
  if (llm.passClientKey !== true) return undefined;
  return clientHeaders.get(upstreamAuthorizationHeader) ?? (authenticatedByKey ? undefined : (clientHeaders.get('authorization') ?? undefined));
}

/**
 * Calls the upstream OpenAI-compatible endpoint at `path` (e.g. `/chat/completions`) under the
 * configured base URL, with `request.authorization` (see {@link upstreamAuthorization}). Never aborts
 * with the client: a reply keeps being read after a hang-up.
 * Throws `unavailable` without a configured base URL, `model_failed` when the upstream cannot be reached.
 */
export async function callUpstream(
  llm: UpstreamLlmConfig,
  path: string,
  request: { method: 'GET' | 'POST'; clientHeaders: Headers; authorization: string | undefined; body?: string },
): Promise<Response> {
  requireUpstream(llm);
  const url = `${llm.baseUrl!.replace(/\/+$/, '')}${path}`;
  const headers = new Headers({ accept: request.clientHeaders.get('accept') ?? 'application/json' });
  if (request.body !== undefined) headers.set('content-type', 'application/json');
  if (request.authorization !== undefined) headers.set('authorization', request.authorization);
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
