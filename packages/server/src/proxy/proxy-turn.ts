import { createHash } from 'node:crypto';
import { type BuiltContext, type MessageInput } from '@mnemo/core';
import { withoutSuperseded } from '@mnemo/core/internals';
import type { ServerContext, ServerDeps, UpstreamLlmConfig } from '../app/server-deps.js';
import { errorResponse } from '../error-response.js';
import { toAssistantMessage, type AssistantReply } from './assistant-reply.js';
import type { KeyedLock } from '@mnemo/core/internals';
import { proxyPolicyHeader, type ProxyRequest } from './proxy-request.js';
import { parseJson } from './read-json.js';
import { relayStream, type StreamProtocol } from './relay-stream.js';
import { findRegeneratedTurn, type RegeneratedTurn } from './find-regenerated-turn.js';
import { dedupSlackMessages, selectNewTurns } from './select-new-turns.js';
import { readUpstreamText, relayedHeaders, toUpstreamError, UpstreamTimeoutError } from './upstream.js';

/** Response header: tokens of the context mnemo sent upstream. */
export const tokensSentHeader = 'X-Mnemo-Tokens-Sent';
/** Response header: tokens the same request would have cost with the whole stored history. */
export const tokensFullHeader = 'X-Mnemo-Tokens-Full';
/** Response header: full minus sent. */
export const tokensSavedHeader = 'X-Mnemo-Tokens-Saved';
/** Response header: how many leading messages of the upstream prompt form the stable prefix (report.stable), e.g. for cache breakpoints. */
export const stableMessagesHeader = 'X-Mnemo-Stable-Messages';
/** Response header: tokens of that stable prefix. */
export const stableTokensHeader = 'X-Mnemo-Stable-Tokens';
/** Response header: how the hybrid context recalled, `mode` or `mode/reason` (`hybrid`, `keyword-only/embedding_deadline`, `keyword-only/embedder_failed`, `skipped/not_asked`). */
export const recallModeHeader = 'X-Mnemo-Recall-Mode';
/** Response header (non-streamed replies): prompt tokens the upstream read from its cache, as it reported them. */
export const cachedTokensHeader = 'X-Mnemo-Cached-Tokens';
/** Response header (non-streamed replies): prompt tokens the upstream wrote to its cache (Anthropic-style). */
export const cacheWriteTokensHeader = 'X-Mnemo-Cache-Write-Tokens';
/** Response header (non-streamed replies): prompt tokens the upstream counted, cached ones included. */
export const upstreamPromptTokensHeader = 'X-Mnemo-Upstream-Prompt-Tokens';

/** The usage headers on every proxy answer, as the routes' OpenAPI entries list them. */
export const usageHeaderDocs: Readonly<Record<string, string>> = Object.freeze({
  [tokensSentHeader]: 'tokens sent upstream',
  [tokensFullHeader]: 'tokens of the full history',
  [tokensSavedHeader]: 'full minus sent',
  [stableMessagesHeader]: 'leading messages of the prompt that stay byte-identical until the next compaction',
  [stableTokensHeader]: 'tokens of those messages',
  [recallModeHeader]:
    'how the hybrid context recalled: hybrid, keyword-only/<reason>, or skipped/not_asked for a turn that asked nothing',
  [upstreamPromptTokensHeader]: 'prompt tokens the upstream counted (non-streamed replies, when it reports usage)',
  [cachedTokensHeader]: 'prompt tokens the upstream read from its cache (non-streamed replies, when it reports them)',
  [cacheWriteTokensHeader]:
    'prompt tokens the upstream wrote to its cache (non-streamed replies, when it reports them)',
});

/**
 * `prompt_cache_key` for a request whose client sent none: a hash of tenant, end user and conversation,
 * so a provider that routes by it keeps one conversation's prefix on one cache (off with
 * `llm.promptCacheKey: false`). A client's own key, and any other cache option, is passed through.
 */
export function promptCacheKeyOf(
  deps: ServerDeps,
  body: Readonly<Record<string, unknown>>,
  request: ProxyRequest,
): { prompt_cache_key?: string } {
  if (deps.llm.promptCacheKey === false || body.prompt_cache_key !== undefined) return {};
  const { tenantId, userId, conversationId } = request.scope;
  return {
    prompt_cache_key: `mnemo-${createHash('sha256')
      .update(JSON.stringify([tenantId, userId, conversationId]))
      .digest('hex')
      .slice(0, 32)}`,
  };
}

/** A request's turns stored and its context built: what every proxy route sends upstream, in its own protocol. */
export interface ProxyTurn {
  readonly request: ProxyRequest;
  readonly built: BuiltContext;
  /** With a regenerate, the stored replies the new one supersedes; else empty. */
  readonly supersedes: readonly string[];
}

/**
 * Stores the request's new turns (deduplicated against the stored tail under the conversation's lock;
 * nothing for a regenerate) and builds the context as of the newest user turn (of the regenerated one
 * for a regenerate), counted in the metrics and the usage ledger.
 */
export async function prepareProxyTurn(deps: ServerDeps, lock: KeyedLock, request: ProxyRequest): Promise<ProxyTurn> {
  const regenerated = await lock.run(JSON.stringify(request.scope), () => appendNewTurns(deps, request));
  const built = await deps.memory.buildContext(request.scope, {
    ...request.context,
    ...(request.system === undefined ? {} : { system: request.system }),
    ...lastUserQuery(request.turns),
    ...(regenerated === undefined ? {} : { throughSeq: regenerated.userSeq }),
  });
  deps.metrics.recordContext(built.report);
  return { request, built, supersedes: regenerated?.replyIds ?? [] };
}

/** How a route reads its protocol's answer, and what it relays to the client. */
export interface AnswerReading {
  /** What the answer is, for errors: e.g. "chat completion". */
  readonly what: string;
  /** The reply in a non-streamed 2xx body and the text to send the client (the body itself, or its translation); `undefined` when the body is no answer. */
  readonly readBody: (text: string) => { reply: AssistantReply; text: string } | undefined;
  /** Set when the client asked for a stream: the protocol of the stream it gets, and how to turn the upstream's stream into it (default: relayed as it is). */
  readonly stream?: {
    readonly protocol: StreamProtocol;
    readonly translate?: (upstream: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>;
  };
}

/** A `readBody` that relays the body as it came, its reply read by `readReply` from the parsed JSON. */
export function relayedAsItCame(readReply: (body: unknown) => AssistantReply | undefined): AnswerReading['readBody'] {
  return (text) => {
    const reply = readReply(parseJson(text));
    return reply === undefined ? undefined : { reply, text };
  };
}

/**
 * Answers the client from the upstream's response: an error status is relayed as it came (nothing
 * stored but the user's turn); an event stream, to a client that asked for one, is relayed (or
 * translated) while its reply is reassembled and stored once it ends; a JSON answer is read, stored and
 * relayed; a 2xx that is no answer is a 502. Usage headers go on every answer.
 */
export async function relayAnswer(
  c: ServerContext,
  deps: ServerDeps,
  upstreamConfig: UpstreamLlmConfig,
  turn: ProxyTurn,
  upstream: { response: Response; url: string },
  reading: AnswerReading,
): Promise<Response> {
  const { response, url } = upstream;
  const headers = withUsageHeaders(relayedHeaders(response.headers), turn.built);
  if (!response.ok || response.body === null)
    return new Response(await readUpstreamText(response, upstreamConfig, url), { status: response.status, headers });
  const store = (reply: AssistantReply | undefined) => storeReply(c, deps, turn, reply);
  // An event stream is relayed only to a client that asked for one; to a JSON request it is no answer (502 below).
  if (reading.stream !== undefined && (response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const describeFailure = (error: unknown) =>
      toUpstreamError(error, upstreamConfig, url, 'reading the stream of the upstream');
    const { translate } = reading.stream;
    if (translate !== undefined) headers.set('content-type', 'text/event-stream; charset=utf-8');
    const body = translate === undefined ? response.body : translate(response.body);
    return new Response(relayStream(body, store, describeFailure, reading.stream.protocol), {
      status: response.status,
      headers,
    });
  }
  const text = await readUpstreamText(response, upstreamConfig, url);
  const answer = reading.readBody(text);
  if (answer === undefined)
    return malformedAnswer(c, deps, turn.request, { url, status: response.status, text, headers, what: reading.what });
  await store(answer.reply);
  withCacheHeaders(headers, answer.reply);
  if (answer.text !== text) headers.set('content-type', 'application/json');
  return new Response(answer.text, { status: response.status, headers });
}

/**
 * A 2xx from the upstream that is no answer of its protocol (not JSON, empty, no reply in it) is an
 * upstream failure: the client gets 502 `model_failed` (with the usage headers) instead of a body its SDK
 * would choke on, nothing is stored as the reply, and the log records the status and the body's start.
 */
function malformedAnswer(
  c: ServerContext,
  deps: ServerDeps,
  request: ProxyRequest,
  answer: { url: string; status: number; text: string; headers: Headers; what: string },
): Response {
  const { url, status, text, headers, what } = answer;
  const logger = c.get('logger') ?? deps.logger;
  logger.warn(
    { conversationId: request.scope.conversationId, upstream: url, status, bodyStart: text.slice(0, 200) },
    `proxy: the upstream answered with no ${what}; nothing stored`,
  );
  const body = text.trim() === '' ? 'an empty body' : `a body that is not a ${what}`;
  const response = errorResponse(
    c,
    'model_failed',
    `the upstream ${url} answered ${status} with ${body}; no reply was stored`,
    {
      details: { upstream: url, upstreamStatus: status },
    },
  );
  headers.forEach((value, name) => {
    if (name.startsWith('x-mnemo-')) response.headers.set(name, value);
  });
  return response;
}

/**
 * The answer to an upstream that failed before the client got anything: 504 `upstream_timeout` when a
 * timeout fired, else what the error says (`model_failed` → 502 for a refused connection or a reply cut
 * off). The user's turn stays stored; a retry of the same request is recognized and not stored again.
 */
export function upstreamFailure(
  c: ServerContext,
  deps: ServerDeps,
  error: unknown,
  logFields: { conversationId?: string },
): Response {
  if (!(error instanceof UpstreamTimeoutError)) throw error;
  (c.get('logger') ?? deps.logger).warn({ err: error, ...logFields }, 'proxy: the upstream timed out');
  return errorResponse(c, 'upstream_timeout', error.message, {
    ...(error.details === undefined ? {} : { details: error.details }),
  });
}

/**
 * Appends the request's turns that the conversation does not hold yet; the caller holds the
 * conversation's lock. A request whose turns are all stored and end at the newest stored user turn,
 * with only its reply after it, is a regenerate (or a retry after a broken reply): nothing is stored.
 */
async function appendNewTurns(deps: ServerDeps, request: ProxyRequest): Promise<RegeneratedTurn | undefined> {
  if (request.turns.length === 0) return undefined;
  const stored = withoutSuperseded(
    (
      await deps.memory.listMessages(request.scope, { order: 'desc', limit: request.turns.length + dedupSlackMessages })
    ).reverse(),
  );
  const regenerated = findRegeneratedTurn(stored, request.turns);
  if (regenerated !== undefined) return regenerated;
  const { turns } = selectNewTurns(stored, request.turns);
  if (turns.length > 0) await deps.memory.append(request.scope, turns);
  return undefined;
}

/** Stores the assistant's reply; a failure is logged, never turned into an error for a client that already has its answer. */
async function storeReply(
  c: ServerContext,
  deps: ServerDeps,
  turn: ProxyTurn,
  reply: AssistantReply | undefined,
): Promise<void> {
  const { request } = turn;
  const logger = c.get('logger') ?? deps.logger;
  if (reply?.usage !== undefined) deps.metrics.recordUpstreamCache(reply.model ?? 'unknown', reply.usage);
  const message = reply === undefined ? undefined : toAssistantMessage(reply, turn.supersedes);
  if (message === undefined) {
    logger.warn(
      { conversationId: request.scope.conversationId },
      'proxy: the upstream reply had no text and no tool calls; nothing stored',
    );
    return;
  }
  try {
    await deps.memory.append(request.scope, message);
  } catch (error) {
    logger.error(
      { err: error, conversationId: request.scope.conversationId },
      'proxy: storing the assistant reply failed',
    );
  }
}

function withUsageHeaders(headers: Headers, built: BuiltContext): Headers {
  headers.set(tokensSentHeader, String(built.report.sentTokens));
  headers.set(tokensFullHeader, String(built.report.fullHistoryTokens));
  headers.set(tokensSavedHeader, String(built.report.savedTokens));
  headers.set(stableMessagesHeader, String(built.report.stable.messageCount));
  headers.set(stableTokensHeader, String(built.report.stable.tokens));
  headers.set(proxyPolicyHeader, built.report.policy);
  const { recall } = built.report;
  if (recall !== undefined)
    headers.set(recallModeHeader, recall.reason === undefined ? recall.mode : `${recall.mode}/${recall.reason}`);
  return headers;
}

/** The upstream's own prompt and cache figures, when it reported them (a streamed reply's usage comes after the headers). */
function withCacheHeaders(headers: Headers, reply: AssistantReply): void {
  const { usage } = reply;
  if (usage === undefined) return;
  headers.set(upstreamPromptTokensHeader, String(usage.inputTokens));
  headers.set(cachedTokensHeader, String(usage.cachedInputTokens));
  headers.set(cacheWriteTokensHeader, String(usage.cacheWriteInputTokens));
}

function lastUserQuery(turns: readonly MessageInput[]): { query?: string } {
  const last = turns.findLast((turn) => turn.role === 'user');
  return last === undefined ? {} : { query: last.content };
}
