import type { MessageInput } from '@mnemo/core';
import { z } from 'zod';
import type { ServerContext } from '../../app/server-deps.js';
import { readContextHeaders, readProxyScope, type ProxyRequest } from '../proxy-request.js';
import { readAnthropicMessages } from './messages-blocks.js';

/**
 * The body of `POST /v1/messages` (Anthropic Messages) as mnemo reads it: `messages` and `system`
 * (replaced by the context before forwarding), `metadata.user_id` (the end user), `stream`, `model`,
 * `tools`; every other field (`max_tokens`, `tool_choice`, `thinking`, sampling…) is forwarded as it is.
 */
export const messagesBodySchema = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.union([z.string(), z.array(z.unknown())]) })),
  system: z.union([z.string(), z.array(z.looseObject({ type: z.literal('text'), text: z.string() }))]).optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  stream: z.boolean().nullish(),
  tools: z.array(z.looseObject({})).optional(),
});

/** A Messages request body, as validated by {@link messagesBodySchema}. */
export type MessagesBody = z.output<typeof messagesBodySchema>;

/**
 * What a Messages request means to mnemo: the end user is `X-Mnemo-User`, else `metadata.user_id`,
 * else the conversation's own user; the conversation `X-Mnemo-Conversation`, else that user's one
 * conversation (as on the chat route). `system` (its text blocks joined) is the system prompt, never
 * stored. Throws `invalid_input` as `readAnthropicMessages` does (the schema refuses system blocks that are no text).
 */
export function readMessagesRequest(c: ServerContext, body: MessagesBody): ProxyRequest {
  const scope = readProxyScope(c, body.metadata?.user_id ?? undefined, 'metadata.user_id');
  const turns: MessageInput[] = readAnthropicMessages(body.messages, 'messages');
  return { scope, system: systemText(body.system), turns, context: readContextHeaders(c) };
}

function systemText(system: MessagesBody['system']): string | undefined {
  if (system === undefined) return undefined;
  const text =
    typeof system === 'string'
      ? system
      : system
          .map((block) => block.text)
          .filter((part) => part !== '')
          .join('\n\n');
  return text === '' ? undefined : text;
}
