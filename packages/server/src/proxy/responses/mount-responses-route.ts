import { withoutSuperseded } from '@mnemo/core/internals';
import type { ServerApp, ServerContext, ServerDeps, UpstreamLlmConfig } from '../../app/server-deps.js';
import { registerRoute } from '../../openapi/route-spec.js';
import { userHeader } from '../../resource-api/request-scope.js';
import type { KeyedLock } from '@mnemo/core/internals';
import { conversationHeader, proxyHeaderDocs } from '../proxy-request.js';
import {
  prepareProxyTurn,
  relayAnswer,
  relayedAsItCame,
  upstreamFailure,
  usageHeaderDocs,
  type AnswerReading,
  type ProxyTurn,
} from '../proxy-turn.js';
import { parseJson } from '../read-json.js';
import { dedupSlackMessages } from '../select-new-turns.js';
import { callUpstream, requireUpstream, upstreamAuthorization } from '../upstream.js';
import { checkTranslatable, responseFromCompletion, toChatCompletionRequest } from './chat-translation.js';
import { toResponsesInput } from './responses-items.js';
import { replyFromResponse, responsesStreamProtocol } from './responses-reply.js';
import {
  inputLength,
  namesStoredReplies,
  readResponsesRequest,
  readResponsesScope,
  responsesBodySchema,
  storedReplyIds,
  type ResponsesBody,
} from './responses-request.js';
import { translateChatStream } from './translate-chat-stream.js';

/** How the proxy serves `POST /v1/responses`: forwarded to an upstream that speaks Responses, or translated to chat completions. */
export type ResponsesUpstreamMode = 'forward' | 'translate';

/**
 * What `llm.responsesApi` means for an upstream: `forward` and `translate` as they say; `auto` (the
 * default) forwards to OpenAI's own API (`api.openai.com`), the one well-known upstream that speaks
 * Responses, and translates for every other (Ollama, vLLM, llama.cpp, LiteLLM: chat completions).
 */
export function responsesUpstreamMode(llm: UpstreamLlmConfig): ResponsesUpstreamMode {
  const setting = llm.responsesApi ?? 'auto';
  if (setting !== 'auto') return setting;
  try {
    return new URL(llm.baseUrl ?? '').hostname === 'api.openai.com' ? 'forward' : 'translate';
  } catch {
    return 'translate';
  }
}

/**
 * Mounts `POST /v1/responses` (the OpenAI Responses API) on the proxy, with the chat route's lock,
 * storage, dedup, regenerate and usage machinery; `lock` is the chat route's, so both routes of one
 * conversation take turns.
 */
export function mountResponsesRoute(app: ServerApp, deps: ServerDeps, lock: KeyedLock): void {
  registerRoute(
    app,
    deps.routes,
    {
      method: 'post',
      path: '/v1/responses',
      summary: 'OpenAI Responses through mnemo: the conversation is stored and the model gets a context under a budget',
      description:
        'Send the usual Responses request (text or items, instructions, function tools and their outputs, streamed or not). The end user is ' +
        `${userHeader}, else \`user\`, else \`safety_identifier\`; ${conversationHeader} names another conversation of theirs. Turns already ` +
        'stored are recognized (item references resolve to the stored replies), a regenerate stores nothing, and `previous_response_id` ' +
        'needs no resent history: mnemo builds the context from what it holds. The upstream gets Responses (llm.responsesApi forward) or ' +
        'the same request as chat completions, its answer translated back (translate; the default for every upstream but api.openai.com).',
      tags: ['OpenAI-compatible proxy'],
      body: responsesBodySchema,
      headers: proxyHeaderDocs("the body's `user`, else `safety_identifier`"),
      responses: {
        200: {
          description: 'a Responses `response` (application/json), or its event stream when `stream` is true',
          headers: usageHeaderDocs,
        },
        400: {
          description:
            'no conversation named, an item mnemo cannot store, or a tool a chat-completions upstream cannot run',
        },
        404: { description: '`previous_response_id` or an item reference that is not in the conversation' },
      },
    },
    async (c, { body }) => {
      requireUpstream(deps.llm);
      const mode = responsesUpstreamMode(deps.llm);
      if (mode === 'translate') checkTranslatable(body);
      const scope = readResponsesScope(c, body);
      // Only a request that names stored replies needs them read before its turns are.
      const tail = namesStoredReplies(body)
        ? withoutSuperseded(
            await deps.memory.listMessages(scope, { order: 'desc', limit: inputLength(body) + dedupSlackMessages }),
          )
        : [];
      const request = readResponsesRequest(c, body, scope, storedReplyIds(tail));
      const turn = await prepareProxyTurn(deps, lock, request);
      try {
        return await (mode === 'forward' ? forward(c, deps, turn, body) : translate(c, deps, turn, body));
      } catch (error) {
        return upstreamFailure(c, deps, error, { conversationId: scope.conversationId });
      }
    },
  );
}

// Responses to a Responses upstream: the context replaces `input` (and `instructions`, which it holds);
// `previous_response_id` stays with mnemo, or the upstream would add the history it keeps on top.
async function forward(c: ServerContext, deps: ServerDeps, turn: ProxyTurn, body: ResponsesBody): Promise<Response> {
  const { previous_response_id: _previous, instructions: _instructions, conversation: _conversation, ...rest } = body;
  const model = body.model ?? deps.llm.model;
  const upstream = await callUpstream(deps.llm, '/responses', {
    method: 'POST',
    clientHeaders: c.req.raw.headers,
    authorization: upstreamAuthorization(deps.llm, c.req.raw.headers, c.get('authenticatedByKey')),
    body: JSON.stringify({
      ...rest,
      ...(model === undefined ? {} : { model }),
      input: toResponsesInput(turn.built.messages),
    }),
  });
  const reading: AnswerReading = {
    what: 'Responses response',
    readBody: relayedAsItCame(replyFromResponse),
    ...(body.stream === true ? { stream: { protocol: responsesStreamProtocol } } : {}),
  };
  return relayAnswer(c, deps, deps.llm, turn, upstream, reading);
}

// Responses to a chat-completions upstream: the request translated, the answer translated back.
async function translate(c: ServerContext, deps: ServerDeps, turn: ProxyTurn, body: ResponsesBody): Promise<Response> {
  const upstream = await callUpstream(deps.llm, '/chat/completions', {
    method: 'POST',
    clientHeaders: c.req.raw.headers,
    authorization: upstreamAuthorization(deps.llm, c.req.raw.headers, c.get('authenticatedByKey')),
    body: JSON.stringify(toChatCompletionRequest(body, turn.built.messages, body.model ?? deps.llm.model)),
  });
  const reading: AnswerReading = {
    what: 'chat completion',
    readBody: (text) => {
      const response = responseFromCompletion(parseJson(text), body);
      const reply = response === undefined ? undefined : replyFromResponse(response);
      return response === undefined || reply === undefined ? undefined : { reply, text: JSON.stringify(response) };
    },
    ...(body.stream === true
      ? {
          stream: {
            protocol: responsesStreamProtocol,
            translate: (stream: ReadableStream<Uint8Array>) => translateChatStream(stream, body),
          },
        }
      : {}),
  };
  return relayAnswer(c, deps, deps.llm, turn, upstream, reading);
}
