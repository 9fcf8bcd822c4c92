import { createHash } from 'node:crypto';
import { toOpenAiMessages, withoutSuperseded, type BuiltContext, type MessageInput } from '@mnemo/core';
import type { ServerApp, ServerContext, ServerDeps } from '../app/server-deps.js';
import { errorResponse } from '../error-response.js';
import { registerRoute } from '../openapi/route-spec.js';
import { userHeader } from '../resource-api/request-scope.js';
import { replyFromCompletion, toAssistantMessage, type AssistantReply } from './assistant-reply.js';
import { createKeyedLock } from './conversation-lock.js';
import { chatCompletionBodySchema, conversationHeader, maxTokensHeader, proxyPolicyHeader, readProxyRequest, type ProxyRequest } from './proxy-request.js';
import { relayStream } from './relay-stream.js';
import { dedupSlackMessages, findRegeneratedTurn, selectNewTurns, type RegeneratedTurn } from './select-new-turns.js';
import { callUpstream, readUpstreamText, relayedHeaders, requireUpstream, toUpstreamError, upstreamAuthorization, UpstreamTimeoutError } from './upstream.js';

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
/** Response header (non-streamed replies): prompt tokens the upstream read from its cache, as it reported them. */
export const cachedTokensHeader = 'X-Mnemo-Cached-Tokens';
/** Response header (non-streamed replies): prompt tokens the upstream wrote to its cache (Anthropic-style). */
export const cacheWriteTokensHeader = 'X-Mnemo-Cache-Write-Tokens';
/** Response header (non-streamed replies): prompt tokens the upstream counted. */
export const upstreamPromptTokensHeader = 'X-Mnemo-Upstream-Prompt-Tokens';

const tags = ['OpenAI-compatible proxy'];

/**
 * Mounts the OpenAI-compatible proxy: `POST /v1/chat/completions` stores the request's new turns
 * (deduplicated against the stored conversation), replaces `messages` with the context mnemo builds,
 * forwards everything else unchanged to the configured upstream, relays the answer (streamed or not)
 * with usage headers, and stores the assistant's reply; `GET /v1/models` relays the upstream's list.
 */
export function mountProxyRoutes(app: ServerApp, deps: ServerDeps): void {
  const lock = createKeyedLock();
  registerRoute(
    app,
    deps.routes,
    {
      method: 'post',
      path: '/v1/chat/completions',
      summary: 'Chat completions through mnemo: the conversation is stored and the model gets a context under a budget',
      description:
        'Send the usual OpenAI request, with the whole history or only the new turn. The body\'s `user` field names the end user (the scope ' +
        `of facts, recall and summaries; ${userHeader} overrides it) and their one conversation; ${conversationHeader} names another conversation ` +
        '(a conversation named without a user is its own user). Turns already stored are recognized and not stored again; a request whose ' +
        'turns are all stored, ending at the newest user turn, is a regenerate: nothing is stored, the context is built as of that turn and ' +
        'the new reply supersedes the old (both are kept). ' +
        'system messages are used as the system prompt and never stored. Every other field is forwarded unchanged, and the answer ' +
        '(JSON or server-sent events) is relayed as the upstream sent it, errors included.',
      tags,
      body: chatCompletionBodySchema,
      headers: {
        [conversationHeader]: 'the conversation id (else the end user\'s one conversation, named after them)',
        [userHeader]: 'the end user (else the body\'s `user`, else the conversation\'s own user)',
        [proxyPolicyHeader]: 'context policy of this request: full, window, token-window or summary',
        [maxTokensHeader]: 'token budget of this request\'s context',
      },
      responses: {
        200: {
          description: 'the upstream\'s answer, unchanged (application/json, or text/event-stream when `stream` is true)',
          headers: { [tokensSentHeader]: 'tokens sent upstream', [tokensFullHeader]: 'tokens of the full history', [tokensSavedHeader]: 'full minus sent', [stableMessagesHeader]: 'leading messages of the prompt that stay byte-identical until the next compaction', [stableTokensHeader]: 'their tokens', [cachedTokensHeader]: 'prompt tokens the upstream read from its cache (non-streamed)', [cacheWriteTokensHeader]: 'prompt tokens the upstream wrote to its cache', [upstreamPromptTokensHeader]: 'prompt tokens the upstream counted' },
        },
        400: { description: 'no conversation named, or a message mnemo cannot store' },
      },
    },
    async (c, { body }) => {
      const request = readProxyRequest(c, body);
      // Refused before anything is stored: a turn without an upstream would wait for a reply that never comes.
      requireUpstream(deps.llm);
      const turn = await lock.run(JSON.stringify(request.scope), () => appendNewTurns(deps, request));
      const built = await deps.memory.buildContext(request.scope, {
        ...request.context,
        ...(request.system === undefined ? {} : { system: request.system }),
        ...lastUserQuery(request.turns),
        ...(turn.regenerated === undefined ? {} : { throughSeq: turn.regenerated.userSeq }),
      });
      deps.metrics.recordContext(built.report);
      const model = body.model ?? deps.llm.model;
      try {
        const { response: upstream, url } = await callUpstream(deps.llm, '/chat/completions', {
          method: 'POST',
          clientHeaders: c.req.raw.headers,
          authorization: upstreamAuthorization(deps.llm, c.req.raw.headers, c.get('authenticatedByKey')),
          body: JSON.stringify({ ...body, ...(model === undefined ? {} : { model }), ...promptCacheKeyOf(deps, body, request), messages: toOpenAiMessages(built.messages) }),
        });
        const headers = withUsageHeaders(relayedHeaders(upstream.headers), built);
        if (!upstream.ok || upstream.body === null) return new Response(await readUpstreamText(upstream, deps.llm, url), { status: upstream.status, headers });
        const store = (reply: AssistantReply | undefined) => {
          if (reply?.usage !== undefined) deps.metrics.recordUpstreamCache(reply.model ?? model ?? 'unknown', reply.usage);
          return storeReply(c, deps, request, reply, turn.regenerated?.replyIds ?? []);
        };
        // An event stream is relayed only to a client that asked for one; to a JSON request it is no chat completion (502 below).
        if (body.stream === true && (upstream.headers.get('content-type') ?? '').includes('text/event-stream')) {
          const describeFailure = (error: unknown) => toUpstreamError(error, deps.llm, url, 'reading the stream of the upstream');
          return new Response(relayStream(upstream.body, store, describeFailure), { status: upstream.status, headers });
        }
        const text = await readUpstreamText(upstream, deps.llm, url);
        const reply = replyFromCompletion(parseJson(text));
        if (reply === undefined) return malformedCompletion(c, deps, request, url, upstream.status, text, headers);
        withCacheHeaders(headers, reply);
        await store(reply);
        return new Response(text, { status: upstream.status, headers });
      } catch (error) {
        return upstreamFailure(c, deps, error, { conversationId: request.scope.conversationId });
      }
    },
  );

  registerRoute(
    app,
    deps.routes,
    { method: 'get', path: '/v1/models', summary: 'The upstream\'s model list, relayed', tags, responses: { 200: { description: 'the upstream\'s answer, unchanged' } } },
    async (c) => {
      try {
        const { response: upstream, url } = await callUpstream(deps.llm, '/models', { method: 'GET', clientHeaders: c.req.raw.headers, authorization: upstreamAuthorization(deps.llm, c.req.raw.headers, c.get('authenticatedByKey')) });
        return new Response(await readUpstreamText(upstream, deps.llm, url), { status: upstream.status, headers: relayedHeaders(upstream.headers) });
      } catch (error) {
        return upstreamFailure(c, deps, error, {});
      }
    },
  );
}

/**
 * A 2xx from the upstream that is no chat completion (not JSON, empty, no `choices[0].message`) is an
 * upstream failure: the client gets 502 `model_failed` (with the usage headers) instead of a body its SDK
 * would choke on, nothing is stored as the reply, and the log records the status and the body's start.
 */
function malformedCompletion(c: ServerContext, deps: ServerDeps, request: ProxyRequest, url: string, status: number, text: string, headers: Headers): Response {
  const logger = c.get('logger') ?? deps.logger;
  logger.warn({ conversationId: request.scope.conversationId, upstream: url, status, bodyStart: text.slice(0, 200) }, 'proxy: the upstream answered with no chat completion; nothing stored');
  const what = text.trim() === '' ? 'an empty body' : 'a body that is not a chat completion';
  const response = errorResponse(c, 'model_failed', `the upstream ${url} answered ${status} with ${what}; no reply was stored`, { details: { upstream: url, upstreamStatus: status } });
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
function upstreamFailure(c: ServerContext, deps: ServerDeps, error: unknown, logFields: { conversationId?: string }): Response {
  if (!(error instanceof UpstreamTimeoutError)) throw error;
  (c.get('logger') ?? deps.logger).warn({ err: error, ...logFields }, 'proxy: the upstream timed out');
  return errorResponse(c, 'upstream_timeout', error.message, { ...(error.details === undefined ? {} : { details: error.details }) });
}

/** What appending a request's turns did: with `regenerated`, the request asked again for a reply that is stored. */
interface AppendedTurns {
  readonly regenerated?: RegeneratedTurn;
}

/**
 * Appends the request's turns that the conversation does not hold yet; the caller holds the
 * conversation's lock. A request whose turns are all stored and end at the newest stored user turn,
 * with only its reply after it, is a regenerate (or a retry after a broken reply): nothing is stored.
 */
async function appendNewTurns(deps: ServerDeps, request: ProxyRequest): Promise<AppendedTurns> {
  if (request.turns.length === 0) return {};
  const stored = withoutSuperseded((await deps.memory.listMessages(request.scope, { order: 'desc', limit: request.turns.length + dedupSlackMessages })).reverse());
  const regenerated = findRegeneratedTurn(stored, request.turns);
  if (regenerated !== undefined) return { regenerated };
  const { turns } = selectNewTurns(stored, request.turns);
  if (turns.length > 0) await deps.memory.append(request.scope, turns);
  return {};
}

/** Stores the assistant's reply; a failure is logged, never turned into an error for a client that already has its answer. */
async function storeReply(c: ServerContext, deps: ServerDeps, request: ProxyRequest, reply: AssistantReply | undefined, supersedes: readonly string[]): Promise<void> {
  const logger = c.get('logger') ?? deps.logger;
  const message = reply === undefined ? undefined : toAssistantMessage(reply, supersedes);
  if (message === undefined) {
    logger.warn({ conversationId: request.scope.conversationId }, 'proxy: the upstream reply had no text and no tool calls; nothing stored');
    return;
  }
  try {
    await deps.memory.append(request.scope, message);
  } catch (error) {
    logger.error({ err: error, conversationId: request.scope.conversationId }, 'proxy: storing the assistant reply failed');
  }
}

function withUsageHeaders(headers: Headers, built: BuiltContext): Headers {
  headers.set(tokensSentHeader, String(built.report.sentTokens));
  headers.set(tokensFullHeader, String(built.report.fullHistoryTokens));
  headers.set(tokensSavedHeader, String(built.report.savedTokens));
  headers.set(stableMessagesHeader, String(built.report.stable.messageCount));
  headers.set(stableTokensHeader, String(built.report.stable.tokens));
  headers.set(proxyPolicyHeader, built.report.policy);
  return headers;
}

/** `prompt_cache_key` for a client that sent none: a hash of tenant, end user and conversation (off with `llm.promptCacheKey: false`). */
function promptCacheKeyOf(deps: ServerDeps, body: Record<string, unknown>, request: ProxyRequest): { prompt_cache_key?: string } {
  if (deps.llm.promptCacheKey === false || body.prompt_cache_key !== undefined) return {};
  const { tenantId, userId, conversationId } = request.scope;
  return { prompt_cache_key: `mnemo-${createHash('sha256').update(JSON.stringify([tenantId, userId, conversationId])).digest('hex').slice(0, 32)}` };
}

/** The upstream's own cache figures, when it reported them (a streamed reply's usage comes after the headers). */
function withCacheHeaders(headers: Headers, reply: AssistantReply): void {
  const usage = reply.usage;
  if (usage?.promptTokens !== undefined) headers.set(upstreamPromptTokensHeader, String(usage.promptTokens));
  if (usage?.cachedTokens !== undefined) headers.set(cachedTokensHeader, String(usage.cachedTokens));
  if (usage?.cacheWriteTokens !== undefined) headers.set(cacheWriteTokensHeader, String(usage.cacheWriteTokens));
}

function lastUserQuery(turns: readonly MessageInput[]): { query?: string } {
  const last = turns.findLast((turn) => turn.role === 'user');
  return last === undefined ? {} : { query: last.content };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
