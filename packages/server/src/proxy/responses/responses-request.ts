import { MemoryError, type Message, type Scope } from '@mnemo/core';
import { z } from 'zod';
import type { ServerContext } from '../../app/server-deps.js';
import { readContextHeaders, readProxyScope, type ProxyRequest } from '../proxy-request.js';
import { readResponsesItems } from './responses-items.js';

/**
 * The body of `POST /v1/responses` as mnemo reads it: `input` (a string or items; replaced before
 * forwarding), `instructions`, `previous_response_id` (checked against the conversation, never
 * forwarded), `store`, the end user (`user`, else `safety_identifier`), `stream`, `model`, `tools`;
 * every other field is forwarded, or translated for a chat-completions upstream.
 */
export const responsesBodySchema = z.looseObject({
  model: z.string().optional(),
  input: z.union([z.string(), z.array(z.unknown())]).optional(),
  instructions: z.string().nullish(),
  previous_response_id: z.string().nullish(),
  store: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  user: z.string().optional(),
  safety_identifier: z.string().optional(),
  tools: z.array(z.looseObject({ type: z.string() })).optional(),
  tool_choice: z.unknown().optional(),
  max_output_tokens: z.number().int().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  reasoning: z.looseObject({ effort: z.string().nullish() }).nullish(),
  text: z.looseObject({ format: z.looseObject({ type: z.string() }).optional() }).optional(),
  metadata: z.record(z.string(), z.string()).nullish(),
});

/** A Responses request body, as validated by {@link responsesBodySchema}. */
export type ResponsesBody = z.output<typeof responsesBodySchema>;

/** Ids the tail's stored replies go by (`metadata.proxy.ids`: the response's and its items'), to resolve references and `previous_response_id`. */
export function storedReplyIds(tail: readonly Message[]): Map<string, Message> {
  const byId = new Map<string, Message>();
  for (const message of tail) {
    const ids = (message.metadata?.proxy as { ids?: unknown } | undefined)?.ids;
    if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') byId.set(id, message);
  }
  return byId;
}

/** True when a request refers to stored replies: `previous_response_id`, or an `item_reference` in its input. */
export function namesStoredReplies(body: ResponsesBody): boolean {
  if (typeof body.previous_response_id === 'string') return true;
  return (
    Array.isArray(body.input) &&
    body.input.some(
      (item) => typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'item_reference',
    )
  );
}

/** How many items of a request may be references, so the stored tail read to resolve them covers them all. */
export function inputLength(body: ResponsesBody): number {
  return typeof body.input === 'string' ? 1 : (body.input?.length ?? 0);
}

/**
 * The scope of a Responses request: the end user is `X-Mnemo-User`, else `user`, else
 * `safety_identifier`; the conversation `X-Mnemo-Conversation`, else that user's one conversation (as
 * on the chat route). Neither named: `invalid_input`.
 */
export function readResponsesScope(c: ServerContext, body: ResponsesBody): Scope {
  return readProxyScope(c, body.user ?? body.safety_identifier, 'user');
}

/**
 * What a Responses request of `scope` means to mnemo. `instructions` and system/developer items are the system prompt, never stored;
 * `item_reference`s become the stored turns they name (`storedById`, from {@link storedReplyIds}).
 * `previous_response_id` must name a reply of this conversation (`not_found` otherwise): mnemo holds
 * the conversation, so the input after it is only the new turns.
 */
export function readResponsesRequest(
  c: ServerContext,
  body: ResponsesBody,
  scope: Scope,
  storedById: ReadonlyMap<string, Message>,
): ProxyRequest {
  const previous = body.previous_response_id;
  if (previous !== undefined && previous !== null && !storedById.has(previous)) {
    throw new MemoryError(
      'not_found',
      `previous_response_id ${JSON.stringify(previous)} is no reply of conversation ${JSON.stringify(scope.conversationId)} that mnemo holds`,
      {
        details: { field: 'previous_response_id' },
      },
    );
  }
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
  const { system, turns } = readResponsesItems(items, 'input', (id) => storedById.get(id));
  const systemParts = [
    ...(body.instructions === undefined || body.instructions === null || body.instructions === ''
      ? []
      : [body.instructions]),
    ...system,
  ];
  return {
    scope,
    system: systemParts.length === 0 ? undefined : systemParts.join('\n\n'),
    turns,
    context: readContextHeaders(c),
  };
}
