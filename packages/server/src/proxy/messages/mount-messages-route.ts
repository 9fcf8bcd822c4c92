import type { ServerApp, ServerDeps, UpstreamLlmConfig } from '../../app/server-deps.js';
import { registerRoute } from '../../openapi/route-spec.js';
import { userHeader } from '../../resource-api/request-scope.js';
import type { KeyedLock } from '@mnemo/core/internals';
import { conversationHeader, proxyHeaderDocs } from '../proxy-request.js';
import { prepareProxyTurn, relayAnswer, relayedAsItCame, upstreamFailure, usageHeaderDocs } from '../proxy-turn.js';
import { callUpstream, requireUpstream, upstreamAuthorizationHeader } from '../upstream.js';
import { messagesBodySchema, readMessagesRequest, type MessagesBody } from './messages-request.js';
import { messagesStreamProtocol, replyFromMessage } from './messages-reply.js';
import { toAnthropicContext } from './to-anthropic-messages.js';

/** The Messages protocol version sent when the client names none. */
export const defaultAnthropicVersion = '2023-06-01';

/**
 * Mounts `POST /v1/messages` (the Anthropic Messages API) on the proxy, forwarding to `deps.anthropic`
 * with the chat route's lock, storage, dedup, regenerate and usage machinery, and `cache_control`
 * breakpoints on the system prompt and at the end of the context's stable part.
 */
export function mountMessagesRoute(app: ServerApp, deps: ServerDeps, lock: KeyedLock): void {
  const upstreamConfig = deps.anthropic;
  registerRoute(
    app,
    deps.routes,
    {
      method: 'post',
      path: '/v1/messages',
      summary:
        'Anthropic Messages through mnemo: the conversation is stored and the model gets a context under a budget',
      description:
        `Send the usual Messages request (system, tool use and tool results, streamed or not). The end user is ${userHeader}, else ` +
        `\`metadata.user_id\`; ${conversationHeader} names another conversation of theirs. Turns already stored are recognized, a ` +
        'regenerate stores nothing. The upstream (anthropic.baseUrl) gets the context with cache_control breakpoints on the system ' +
        'prompt and at the end of its stable part; its answer is relayed as it came.',
      tags: ['Anthropic-compatible proxy'],
      body: messagesBodySchema,
      headers: proxyHeaderDocs('`metadata.user_id`'),
      responses: {
        200: {
          description:
            "the upstream's `message` (application/json), or its event stream when `stream` is true, unchanged",
          headers: usageHeaderDocs,
        },
        400: { description: 'no conversation named, or a block mnemo cannot store' },
      },
    },
    async (c, { body }) => {
      requireUpstream(upstreamConfig, 'the Anthropic base URL (anthropic.baseUrl, MNEMO_ANTHROPIC_BASE_URL)');
      const request = readMessagesRequest(c, body);
      const turn = await prepareProxyTurn(deps, lock, request);
      const { system, messages } = toAnthropicContext(turn.built, clientBreakpoints(body));
      const model = body.model ?? upstreamConfig.model;
      try {
        const upstream = await callUpstream(upstreamConfig, '/v1/messages', {
          method: 'POST',
          clientHeaders: c.req.raw.headers,
          authorization: undefined,
          headers: anthropicHeaders(upstreamConfig, c.req.raw.headers, c.get('authenticatedByKey')),
          body: JSON.stringify({
            ...body,
            ...(model === undefined ? {} : { model }),
            ...(system.length === 0 ? { system: undefined } : { system }),
            messages,
          }),
        });
        return await relayAnswer(c, deps, upstreamConfig, turn, upstream, {
          what: 'Messages message',
          readBody: relayedAsItCame((body) => replyFromMessage(body)),
          ...(body.stream === true ? { stream: { protocol: messagesStreamProtocol } } : {}),
        });
      } catch (error) {
        return upstreamFailure(c, deps, error, { conversationId: request.scope.conversationId });
      }
    },
  );
}

/**
 * The Messages upstream's credentials: `x-api-key` is the configured key; else, with `passClientKey`,
 * the client's `X-Mnemo-Upstream-Authorization` (a bare key or `Bearer …`) or its own `x-api-key`
 * (never the mnemo key it authenticated with); else none. `anthropic-version` defaults to
 * {@link defaultAnthropicVersion}.
 */
export function anthropicHeaders(
  upstreamConfig: UpstreamLlmConfig,
  clientHeaders: Headers,
  authenticatedByKey: boolean,
): Record<string, string> {
  const headers: Record<string, string> = {
    'anthropic-version': clientHeaders.get('anthropic-version') ?? defaultAnthropicVersion,
  };
  const key = upstreamKey(upstreamConfig, clientHeaders, authenticatedByKey);
  if (key !== undefined) headers['x-api-key'] = key;
  return headers;
}

function upstreamKey(
  upstreamConfig: UpstreamLlmConfig,
  clientHeaders: Headers,
  authenticatedByKey: boolean,
): string | undefined {
  if (upstreamConfig.apiKey !== undefined && upstreamConfig.apiKey !== '') return upstreamConfig.apiKey;
  if (upstreamConfig.passClientKey !== true) return undefined;
  const passed = clientHeaders.get(upstreamAuthorizationHeader);
  if (passed !== null) return passed.replace(/^Bearer\s+/i, '');
  const own = clientHeaders.get('x-api-key');
  const presented = clientHeaders.get('authorization')?.replace(/^Bearer\s+/i, '');
  // A client may send its mnemo key in both headers; that one stays with mnemo.
  return own === null || (authenticatedByKey && own === presented) ? undefined : own;
}

function clientBreakpoints(body: MessagesBody): number {
  return (body.tools ?? []).filter((tool) => tool.cache_control !== undefined && tool.cache_control !== null).length;
}
