import {
  contextPolicies,
  maxContextTokens,
  MemoryError,
  namedUserOf,
  recallModes,
  type ContextOptions,
  type ContextPolicy,
  type MessageInput,
  type RecallMode,
  type Scope,
} from '@mnemo/core';
import { z } from 'zod';
import { headerText } from '../app/header-text.js';
import type { ServerContext } from '../app/server-deps.js';
import { conversationScope, userHeader } from '../resource-api/request-scope.js';

/** Header naming the conversation; without it, the end user's one conversation (named after the body's `user`). */
export const conversationHeader = 'X-Mnemo-Conversation';
/** Header choosing the context policy of one request (`full`, `window`, `token-window`, `summary`). */
export const proxyPolicyHeader = 'X-Mnemo-Policy';
/** Header choosing the token budget of one request's context. */
export const maxTokensHeader = 'X-Mnemo-Max-Tokens';
/** Header choosing when one request's hybrid context recalls (`when-asked`, `every-turn`). */
export const proxyRecallHeader = 'X-Mnemo-Recall';

/** The request headers every proxy route reads, as its OpenAPI entry lists them; `userField` says where the end user comes from without `X-Mnemo-User`. */
export function proxyHeaderDocs(userField: string): Record<string, string> {
  return {
    [conversationHeader]: "the conversation id (else the end user's one conversation, named after them)",
    [userHeader]: `the end user (or ${userField}: the two must name the same user), else the conversation's own user`,
    [proxyPolicyHeader]: 'context policy of this request: full, window, token-window, summary or hybrid',
    [maxTokensHeader]: "token budget of this request's context",
    [proxyRecallHeader]: 'when the hybrid context recalls: when-asked (a turn that asks something) or every-turn',
  };
}

const textPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

/** One message as an OpenAI client sends it (unknown fields are kept and ignored). */
export const clientMessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(textPartSchema)]).nullish(),
  name: z.string().optional(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string(),
        type: z.literal('function').optional(),
        function: z.looseObject({ name: z.string(), arguments: z.string() }),
      }),
    )
    .optional(),
  tool_call_id: z.string().optional(),
});

/** A client's message, as validated by {@link clientMessageSchema}. */
export type ClientMessage = z.output<typeof clientMessageSchema>;

/**
 * The body of `POST /v1/chat/completions` as mnemo reads it: `messages` (replaced before forwarding),
 * `user` (may name the conversation), `stream`, `model`; every other field passes through untouched.
 */
export const chatCompletionBodySchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(clientMessageSchema),
  user: z.string().optional(),
  stream: z.boolean().nullish(),
});

/** A chat-completions request body, as validated by {@link chatCompletionBodySchema}. */
export type ChatCompletionBody = z.output<typeof chatCompletionBodySchema>;

/** What a client request means to mnemo: whose conversation, the system prompt, the turns it carries and how to build the context. */
export interface ProxyRequest {
  readonly scope: Scope;
  /** The client's system (and developer) messages, joined; never stored. */
  readonly system: string | undefined;
  /** The client's other messages, converted and validated, in order. */
  readonly turns: readonly MessageInput[];
  readonly context: Pick<ContextOptions, 'policy' | 'maxTokens'>;
}

/**
 * Reads a validated body and the request headers. The end user (mnemo's `userId`, the scope of facts,
 * recall and summaries) is `X-Mnemo-User` or the body's `user` (as OpenAI defines that field; two
 * different ids are refused), else the conversation's own user; the conversation is `X-Mnemo-Conversation`, else the one conversation
 * named after that user. Neither named: `invalid_input`. The tenant comes from the API key, the policy
 * and budget from `X-Mnemo-Policy` and `X-Mnemo-Max-Tokens`.
 * Throws `invalid_input` for a message mnemo cannot store (a non-text content part).
 */
export function readProxyRequest(c: ServerContext, body: ChatCompletionBody): ProxyRequest {
  const scope = readProxyScope(c, body.user);
  const systemParts: string[] = [];
  const turns: MessageInput[] = [];
  body.messages.forEach((message, index) => {
    if (message.role === 'system' || message.role === 'developer') systemParts.push(textOf(message, index));
    else turns.push(toMessageInput(message, index));
  });
  return {
    scope,
    system: systemParts.length === 0 ? undefined : systemParts.join('\n\n'),
    turns,
    context: readContextHeaders(c),
  };
}

/**
 * The scope of a proxied request, the same for every protocol: the end user is `X-Mnemo-User` or
 * `bodyUser` (the protocol's own end-user field; the two naming different users is `invalid_input`, the
 * rule of every edge), else the conversation's own user; the conversation is
 * `X-Mnemo-Conversation`, else the one conversation named after that user. Neither named:
 * `invalid_input` naming `userField`. The tenant comes from the API key.
 */
export function readProxyScope(c: ServerContext, bodyUser: string | undefined, userField = 'user'): Scope {
  const userId = namedUserOf([
    { where: `the ${userHeader} header`, userId: headerText(c, userHeader) },
    { where: `the body's ${JSON.stringify(userField)}`, userId: bodyUser },
  ]);
  const conversationId = nonEmpty(headerText(c, conversationHeader)) ?? userId;
  if (conversationId === undefined) {
    throw new MemoryError(
      'invalid_input',
      `name the end user or the conversation: send the body's ${JSON.stringify(userField)} field, or the ${userHeader} or ${conversationHeader} header`,
      {
        details: { field: userField },
      },
    );
  }
  return conversationScope(c.get('tenantId'), conversationId, userId);
}

/**
 * The context policy, budget and recall of one request, from `X-Mnemo-Policy`, `X-Mnemo-Max-Tokens` and
 * `X-Mnemo-Recall`; `invalid_input` for a value outside their range.
 */
export function readContextHeaders(c: ServerContext): Pick<ContextOptions, 'policy' | 'maxTokens' | 'recall'> {
  const policy = nonEmpty(c.req.header(proxyPolicyHeader));
  if (policy !== undefined && !(contextPolicies as readonly string[]).includes(policy)) {
    throw new MemoryError(
      'invalid_input',
      `${proxyPolicyHeader} must be one of ${contextPolicies.join(', ')} (got ${JSON.stringify(policy)})`,
      {
        details: { field: proxyPolicyHeader, allowed: contextPolicies },
      },
    );
  }
  const budget = nonEmpty(c.req.header(maxTokensHeader));
  const maxTokens = budget === undefined ? undefined : Number(budget);
  if (maxTokens !== undefined && (!/^\d+$/.test(budget!) || maxTokens < 1 || maxTokens > maxContextTokens)) {
    throw new MemoryError(
      'invalid_input',
      `${maxTokensHeader} must be an integer from 1 to ${maxContextTokens} (got ${JSON.stringify(budget)})`,
      {
        details: { field: maxTokensHeader },
      },
    );
  }
  const recall = nonEmpty(c.req.header(proxyRecallHeader));
  if (recall !== undefined && !(recallModes as readonly string[]).includes(recall)) {
    throw new MemoryError(
      'invalid_input',
      `${proxyRecallHeader} must be one of ${recallModes.join(', ')} (got ${JSON.stringify(recall)})`,
      { details: { field: proxyRecallHeader, allowed: recallModes } },
    );
  }
  return {
    ...(policy === undefined ? {} : { policy: policy as ContextPolicy }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(recall === undefined ? {} : { recall: recall as RecallMode }),
  };
}

function toMessageInput(message: ClientMessage, index: number): MessageInput {
  const toolCalls = message.tool_calls?.map((call) => ({
    id: call.id,
    type: 'function' as const,
    function: { name: call.function.name, arguments: call.function.arguments },
  }));
  return {
    role: message.role as MessageInput['role'],
    content: textOf(message, index),
    ...(message.name === undefined ? {} : { name: message.name }),
    ...(toolCalls === undefined || toolCalls.length === 0 ? {} : { toolCalls }),
    ...(message.tool_call_id === undefined ? {} : { toolCallId: message.tool_call_id }),
  };
}

// mnemo stores text: text parts are joined line by line; anything else (images, audio) is refused, not dropped silently.
function textOf(message: ClientMessage, index: number): string {
  const { content } = message;
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, partIndex) => {
      if (part.type === 'text' && typeof part.text === 'string') return part.text;
      throw new MemoryError(
        'invalid_input',
        `body.messages[${index}].content[${partIndex}]: mnemo stores text only; "${part.type}" parts are not supported`,
        {
          details: { field: `body.messages[${index}].content[${partIndex}]` },
        },
      );
    })
    .join('\n');
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
