import { MemoryError } from '@mnemo/core';
import { Agent, fetch as undiciFetch } from 'undici';
import type { UpstreamLlmConfig } from '../app/server-deps.js';

/**
 * Upstream timeouts when `llm` names none, in ms: 10 s to connect, 120 s for the response headers (a
 * non-streamed reply is generated in full before they come), 60 s of silence between two pieces of the body.
 */
export const defaultUpstreamTimeouts: UpstreamTimeouts = Object.freeze({
  connectTimeoutMs: 10_000,
  firstByteTimeoutMs: 120_000,
  idleTimeoutMs: 60_000,
});

/** The three upstream timeouts, in ms (see {@link UpstreamLlmConfig}). */
export interface UpstreamTimeouts {
  readonly connectTimeoutMs: number;
  readonly firstByteTimeoutMs: number;
  readonly idleTimeoutMs: number;
}

/** Which upstream timeout fired: the connection, the response headers, or the silence between two pieces of the body. */
export type UpstreamTimeoutPhase = 'connect' | 'first_byte' | 'idle';

/**
 * The upstream did not answer in time (code `model_failed`, `details.timeout` the phase). The proxy
 * answers it with 504 `upstream_timeout`; other callers may treat it as any model failure.
 */
export class UpstreamTimeoutError extends MemoryError {
  readonly phase: UpstreamTimeoutPhase;
  readonly timeoutMs: number;

  constructor(phase: UpstreamTimeoutPhase, timeoutMs: number, url: string, cause: unknown) {
    const what = { connect: 'to connect', first_byte: 'to start its answer', idle: 'between two pieces of its answer' }[
      phase
    ];
    super('model_failed', `the upstream ${url} took longer than ${timeoutMs} ms ${what}`, {
      cause,
      details: { upstream: url, timeout: phase, timeoutMs },
    });
    this.phase = phase;
    this.timeoutMs = timeoutMs;
  }
}

const timeoutPhaseByUndiciCode: Readonly<Record<string, UpstreamTimeoutPhase>> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  UND_ERR_HEADERS_TIMEOUT: 'first_byte',
  UND_ERR_BODY_TIMEOUT: 'idle',
};

// One connection pool per upstream config, so keep-alive connections are reused across requests.
const agents = new WeakMap<UpstreamLlmConfig, { agent: Agent; timeouts: UpstreamTimeouts }>();

function upstreamAgent(llm: UpstreamLlmConfig): { agent: Agent; timeouts: UpstreamTimeouts } {
  const known = agents.get(llm);
  if (known !== undefined) return known;
  const timeouts = Object.freeze({
    connectTimeoutMs: llm.connectTimeoutMs ?? defaultUpstreamTimeouts.connectTimeoutMs,
    firstByteTimeoutMs: llm.firstByteTimeoutMs ?? defaultUpstreamTimeouts.firstByteTimeoutMs,
    idleTimeoutMs: llm.idleTimeoutMs ?? defaultUpstreamTimeouts.idleTimeoutMs,
  });
  const agent = new Agent({
    connect: { timeout: timeouts.connectTimeoutMs },
    headersTimeout: timeouts.firstByteTimeoutMs,
    bodyTimeout: timeouts.idleTimeoutMs,
  });
  const entry = { agent, timeouts };
  agents.set(llm, entry);
  return entry;
}

/**
 * What a failure talking to the upstream at `url` means to a client: an {@link UpstreamTimeoutError}
 * when one of the timeouts fired, else `model_failed` naming `what` failed and the socket's reason
 * (e.g. "other side closed"). A MemoryError passes through unchanged.
 */
export function toUpstreamError(error: unknown, llm: UpstreamLlmConfig, url: string, what: string): MemoryError {
  if (error instanceof MemoryError) return error;
  const timeouts = upstreamAgent(llm).timeouts;
  let reason = error instanceof Error ? error.message : String(error);
  for (let link: unknown = error; link instanceof Error; link = link.cause) {
    const code = (link as { code?: unknown }).code;
    const phase = typeof code === 'string' ? timeoutPhaseByUndiciCode[code] : undefined;
    if (phase !== undefined) {
      const timeoutMs = {
        connect: timeouts.connectTimeoutMs,
        first_byte: timeouts.firstByteTimeoutMs,
        idle: timeouts.idleTimeoutMs,
      }[phase];
      return new UpstreamTimeoutError(phase, timeoutMs, url, error);
    }
    // undici's own wrappers ("fetch failed", "terminated") say less than the error they wrap.
    if (link !== error && link.message !== '') reason = link.message;
  }
  return new MemoryError('model_failed', `${what} ${url} failed: ${reason}`, {
    cause: error,
    details: { upstream: url },
  });
}

/** Reads an upstream response's whole body; a body cut off or stalled past the idle timeout throws as {@link toUpstreamError} says. */
export async function readUpstreamText(response: Response, llm: UpstreamLlmConfig, url: string): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    throw toUpstreamError(error, llm, url, 'reading the answer of the upstream');
  }
}

/** Client headers forwarded upstream as they are (OpenAI's account and beta selectors, Anthropic's version and beta selectors). */
const forwardedRequestHeaders = [
  'openai-organization',
  'openai-project',
  'openai-beta',
  'anthropic-version',
  'anthropic-beta',
];
/** Upstream response headers relayed to the client: the body's type, and what clients read to back off or to report. */
const relayedResponseHeader =
  /^(content-type|retry-after|retry-after-ms|x-ratelimit-.*|openai-.*|anthropic-.*|request-id|x-should-retry)$/i;

/** Client header carrying the client's own provider key, passed upstream only with `llm.passClientKey`. */
export const upstreamAuthorizationHeader = 'X-Mnemo-Upstream-Authorization';

/** Throws `unavailable` (before anything is stored) when the proxy has no upstream to forward to; `setting` names what to configure. */
export function requireUpstream(
  llm: UpstreamLlmConfig,
  setting = 'the OpenAI-compatible base URL (llm.baseUrl, MNEMO_LLM_BASE_URL)',
): void {
  if (llm.baseUrl === undefined || llm.baseUrl.trim() === '') {
    throw new MemoryError('unavailable', `the proxy has no upstream: configure ${setting} to forward to`, {
      details: { field: setting.includes('anthropic') ? 'anthropic.baseUrl' : 'llm.baseUrl' },
    });
  }
}

/**
 * The `Authorization` to send upstream: the configured key; else, with `passClientKey`, the client's
 * `X-Mnemo-Upstream-Authorization` or (when it is no mnemo key) its `Authorization`; else none.
 * mnemo's own API keys never leave mnemo.
 */
export function upstreamAuthorization(
  llm: UpstreamLlmConfig,
  clientHeaders: Headers,
  authenticatedByKey: boolean,
): string | undefined {
  if (llm.apiKey !== undefined && llm.apiKey !== '') return `Bearer ${llm.apiKey}`;
  if (llm.passClientKey !== true) return undefined;
  return (
    clientHeaders.get(upstreamAuthorizationHeader) ??
    (authenticatedByKey ? undefined : (clientHeaders.get('authorization') ?? undefined))
  );
}

/**
 * Calls the upstream OpenAI-compatible endpoint at `path` (e.g. `/chat/completions`) under the
 * configured base URL, with `request.authorization` (see {@link upstreamAuthorization}) and `request.headers`, under the
 * configured connect, first-byte and idle timeouts. Never aborts with the client: a reply keeps being
 * read after a hang-up. Returns the response with its `url` for error messages.
 * Throws `unavailable` without a configured base URL, {@link UpstreamTimeoutError} when the upstream
 * does not connect or start answering in time, `model_failed` when it cannot be reached.
 */
export async function callUpstream(
  llm: UpstreamLlmConfig,
  path: string,
  request: {
    method: 'GET' | 'POST';
    clientHeaders: Headers;
    authorization: string | undefined;
    body?: string;
    headers?: Readonly<Record<string, string>>;
  },
): Promise<{ response: Response; url: string }> {
  requireUpstream(llm);
  const url = `${llm.baseUrl!.replace(/\/+$/, '')}${path}`;
  const headers = new Headers({ accept: request.clientHeaders.get('accept') ?? 'application/json' });
  if (request.body !== undefined) headers.set('content-type', 'application/json');
  if (request.authorization !== undefined) headers.set('authorization', request.authorization);
  for (const name of forwardedRequestHeaders) {
    const value = request.clientHeaders.get(name);
    if (value !== null) headers.set(name, value);
  }
  for (const [name, value] of Object.entries(request.headers ?? {})) headers.set(name, value);
  try {
    const init = {
      method: request.method,
      headers: Object.fromEntries(headers),
      dispatcher: upstreamAgent(llm).agent,
      ...(request.body === undefined ? {} : { body: request.body }),
    };
    // undici's Response is the WHATWG one the global fetch returns (Node bundles undici); only its types are declared apart.
    return { response: (await undiciFetch(url, init)) as unknown as Response, url };
  } catch (error) {
    throw toUpstreamError(error, llm, url, 'reaching the upstream');
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
