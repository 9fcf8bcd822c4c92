import { toOpenAiMessages } from '@mnemo/core';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { registerRoute } from '../openapi/route-spec.js';
import { userHeader } from '../resource-api/request-scope.js';
import { replyFromCompletion } from './assistant-reply.js';
import { createKeyedLock } from '@mnemo/core/internals';
import { mountMessagesRoute } from './messages/mount-messages-route.js';
import { chatCompletionBodySchema, conversationHeader, proxyHeaderDocs, readProxyRequest } from './proxy-request.js';
import {
  prepareProxyTurn,
  promptCacheKeyOf,
  relayAnswer,
  tokensFullHeader,
  tokensSavedHeader,
  tokensSentHeader,
  relayedAsItCame,
  upstreamFailure,
  usageHeaderDocs,
} from './proxy-turn.js';
import { chatStreamProtocol } from './relay-stream.js';
import { mountResponsesRoute } from './responses/mount-responses-route.js';
import { callUpstream, readUpstreamText, relayedHeaders, requireUpstream, upstreamAuthorization } from './upstream.js';

export { tokensFullHeader, tokensSavedHeader, tokensSentHeader };

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
        "Send the usual OpenAI request, with the whole history or only the new turn. The body's `user` field names the end user (the scope " +
        `of facts, recall and summaries; ${userHeader} overrides it) and their one conversation; ${conversationHeader} names another conversation ` +
        '(a conversation named without a user is its own user). Turns already stored are recognized and not stored again; a request whose ' +
        'turns are all stored, ending at the newest user turn, is a regenerate: nothing is stored, the context is built as of that turn and ' +
        'the new reply supersedes the old (both are kept). ' +
        'system messages are used as the system prompt and never stored. Every other field is forwarded unchanged, and the answer ' +
        '(JSON or server-sent events) is relayed as the upstream sent it, errors included.',
      tags,
      body: chatCompletionBodySchema,
      headers: proxyHeaderDocs("the body's `user`"),
      responses: {
        200: {
          description:
            "the upstream's answer, unchanged (application/json, or text/event-stream when `stream` is true)",
          headers: usageHeaderDocs,
        },
        400: { description: 'no conversation named, or a message mnemo cannot store' },
      },
    },
    async (c, { body }) => {
      const request = readProxyRequest(c, body);
      // Refused before anything is stored: a turn without an upstream would wait for a reply that never comes.
      requireUpstream(deps.llm);
      const turn = await prepareProxyTurn(deps, lock, request);
      const model = body.model ?? deps.llm.model;
      try {
        const upstream = await callUpstream(deps.llm, '/chat/completions', {
          method: 'POST',
          clientHeaders: c.req.raw.headers,
          authorization: upstreamAuthorization(deps.llm, c.req.raw.headers, c.get('authenticatedByKey')),
          body: JSON.stringify({
            ...body,
            ...(model === undefined ? {} : { model }),
            ...promptCacheKeyOf(deps, body, request),
            messages: toOpenAiMessages(turn.built.messages),
          }),
        });
        return await relayAnswer(c, deps, deps.llm, turn, upstream, {
          what: 'chat completion',
          readBody: relayedAsItCame(replyFromCompletion),
          ...(body.stream === true ? { stream: { protocol: chatStreamProtocol } } : {}),
        });
      } catch (error) {
        return upstreamFailure(c, deps, error, { conversationId: request.scope.conversationId });
      }
    },
  );
  mountResponsesRoute(app, deps, lock);
  mountMessagesRoute(app, deps, lock);

  registerRoute(
    app,
    deps.routes,
    {
      method: 'get',
      path: '/v1/models',
      summary: "The upstream's model list, relayed",
      tags,
      responses: { 200: { description: "the upstream's answer, unchanged" } },
    },
    async (c) => {
      try {
        const { response: upstream, url } = await callUpstream(deps.llm, '/models', {
          method: 'GET',
          clientHeaders: c.req.raw.headers,
          authorization: upstreamAuthorization(deps.llm, c.req.raw.headers, c.get('authenticatedByKey')),
        });
        return new Response(await readUpstreamText(upstream, deps.llm, url), {
          status: upstream.status,
          headers: relayedHeaders(upstream.headers),
        });
      } catch (error) {
        return upstreamFailure(c, deps, error, {});
      }
    },
  );
}
