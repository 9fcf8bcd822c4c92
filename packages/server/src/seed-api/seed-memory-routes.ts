import {
  messageRoles,
  maxContextTokens,
  toOpenAiMessages,
  type ContextPolicy,
  type Conversation,
  type Memory,
  type Scope,
} from '@mnemo/core';
import { z } from 'zod';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { registerRoute } from '../openapi/route-spec.js';
import { idempotencyHeader, maxIdempotencyKeyChars, readIdempotencyHeader } from '../resource-api/idempotency-key.js';
import { conversationNotFound, requestScope } from '../resource-api/request-scope.js';
import { idSchema, openAiMessageSchema } from '../resource-api/resource-schemas.js';

/**
 * The seed service's memory types and the policy each runs on. `vector` (recalled snippets) and
 * `hybrid` both run mnemo's `hybrid` policy: facts + summary + recent turns + snippets recalled for the
 * query; `vector` recalls for every query, `hybrid` when the turn asks something (the server's `recall`).
 */
export const seedMemoryTypes = Object.freeze({
  buffer: 'full',
  token_buffer: 'token-window',
  summary: 'summary',
  vector: 'hybrid',
  hybrid: 'hybrid',
} as const satisfies Record<string, ContextPolicy>);

/** One of the seed service's memory types. */
export type SeedMemoryType = keyof typeof seedMemoryTypes;

/** The memory type of a context request that names none. */
export const defaultSeedMemoryType: SeedMemoryType = 'buffer';

/** The conversation metadata key where the seed API remembers the `memory_type` last given on add. */
export const seedMemoryTypeKey = 'seedMemoryType';

/** The memory type a conversation was last added with (its metadata), else {@link defaultSeedMemoryType}. */
export function seedMemoryTypeOf(conversation: Pick<Conversation, 'metadata'>): SeedMemoryType {
  const remembered = conversation.metadata?.[seedMemoryTypeKey];
  return typeof remembered === 'string' && Object.hasOwn(seedMemoryTypes, remembered)
    ? (remembered as SeedMemoryType)
    : defaultSeedMemoryType;
}

/** Header of a seed context response naming the policy that built it. */
export const policyHeader = 'X-Mnemo-Policy';

const memoryTypeSchema = z.enum(Object.keys(seedMemoryTypes) as [SeedMemoryType, ...SeedMemoryType[]]);
const tags = ['seed memory API'];

const userIdField = idSchema
  .optional()
  .describe(
    'the end user; several conversations of one user share facts and recall. Default: the conversation is its own user',
  );

/**
 * Mounts the seed-compatible memory API (same paths and snake_case fields as the seed's memory service).
 * Every conversation belongs to the tenant of the API key. A conversation named without `user_id` is its
 * own user (the seed's bot keeps one conversation per end user), so no two conversations share facts,
 * recall or summaries unless a caller groups them under one `user_id` (or the `X-Mnemo-User` header, as
 * on every route; the two naming different users is `invalid_input`).
 */
export function mountSeedMemoryRoutes(app: ServerApp, deps: ServerDeps): void {
  const { memory, routes } = deps;

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/memory/add',
      summary: 'Store one message of a conversation',
      description:
        "Every message is stored the same way, whatever the type; `memory_type` is remembered as the conversation's type, used by later context requests that name none. " +
        `With an \`idempotency_key\` (or an \`${idempotencyHeader}\` header, stored as \`<header>#0\` as the resource API stores a one-message batch), ` +
        'a retried add returns the stored message with its original seq and stores nothing twice (409 `conflict` if role or content differ).',
      tags,
      body: z.object({
        conversation_id: idSchema,
        role: z.enum(messageRoles),
        content: z.string(),
        memory_type: memoryTypeSchema.optional(),
        user_id: userIdField,
        idempotency_key: z
          .string()
          .min(1)
          .max(256)
          .optional()
          .describe('unique within the conversation: a retry returns the stored message; wins over the header'),
      }),
      headers: { [idempotencyHeader]: `a key for this add, at most ${maxIdempotencyKeyChars} characters` },
      responses: {
        200: {
          description: 'the stored message',
          schema: z.object({
            status: z.literal('ok'),
            conversation_id: z.string(),
            message_id: z.string(),
            seq: z.number().int(),
            tokens: z.number().int(),
          }),
        },
      },
    },
    async (c, { body }) => {
      const scope = requestScope(c, body.conversation_id, { body: body.user_id, bodyField: 'user_id' });
      const headerKey = readIdempotencyHeader(c);
      const idempotencyKey = body.idempotency_key ?? (headerKey === undefined ? undefined : `${headerKey}#0`);
      const [stored] = await memory.append(scope, {
        role: body.role,
        content: body.content,
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      });
      if (body.memory_type !== undefined) await rememberMemoryType(memory, scope, body.memory_type);
      return c.json({
        status: 'ok',
        conversation_id: body.conversation_id,
        message_id: stored?.id,
        seq: stored?.seq,
        tokens: stored?.tokens,
      });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/memory/context',
      summary: 'Build the messages to send for a conversation under a token budget',
      description:
        'memory_type → policy: buffer → full (everything that fits), token_buffer → token-window, summary → summary, vector and hybrid → ' +
        `hybrid (facts, summary, recent turns and snippets recalled for \`query\`, default the newest user message: vector for every query, hybrid for one that asks something). The ${policyHeader} header names the policy. ` +
        `Default memory_type: the one last given on add for the conversation, else ${defaultSeedMemoryType}.`,
      tags,
      body: z.object({
        conversation_id: idSchema,
        query: z.string().optional(),
        max_tokens: z.number().int().min(1).max(maxContextTokens),
        memory_type: memoryTypeSchema.optional(),
        system: z.string().optional(),
        user_id: userIdField,
      }),
      responses: {
        200: {
          description: 'the context',
          schema: z.object({
            messages: z.array(openAiMessageSchema),
            total_tokens: z.number().int(),
            memory_type: memoryTypeSchema,
            conversation_found: z
              .boolean()
              .describe(
                'false for a conversation with no stored message (the context then holds only the system prompt)',
              ),
          }),
          headers: { [policyHeader]: 'the policy that built the context, e.g. `hybrid`' },
        },
      },
    },
    async (c, { body }) => {
      const scope = requestScope(c, body.conversation_id, { body: body.user_id, bodyField: 'user_id' });
      const memoryType = body.memory_type ?? (await rememberedMemoryType(memory, scope));
      const policy = seedMemoryTypes[memoryType];
      const built = await memory.buildContext(scope, {
        policy,
        maxTokens: body.max_tokens,
        ...(body.query === undefined ? {} : { query: body.query }),
        ...(body.system === undefined ? {} : { system: body.system }),
        // The seed's vector memory is retrieval by the query, whatever the turn says.
        ...(memoryType === 'vector' ? { recall: 'every-turn' as const } : {}),
      });
      deps.metrics.recordContext(built.report);
      c.header(policyHeader, policy);
      return c.json({
        messages: toOpenAiMessages(built.messages),
        total_tokens: built.report.sentTokens,
        memory_type: memoryType,
        conversation_found: built.report.conversationFound ?? true,
      });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'delete',
      path: '/v1/memory/{conversation_id}',
      summary: 'Erase a conversation (erasing twice is not an error)',
      tags,
      params: z.object({ conversation_id: idSchema }),
      query: z.object({ user_id: userIdField }),
      responses: {
        200: {
          description: 'what was erased',
          schema: z.object({
            status: z.literal('deleted'),
            conversation_id: z.string(),
            messages_deleted: z.number().int(),
          }),
        },
      },
    },
    async (c, { params, query }) => {
      const erased = await memory.erase(requestScope(c, params.conversation_id, { query: query.user_id }));
      return c.json({ status: 'deleted', conversation_id: params.conversation_id, messages_deleted: erased.messages });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/memory/{conversation_id}/stats',
      summary: 'Counters and usage of a conversation',
      tags,
      params: z.object({ conversation_id: idSchema }),
      query: z.object({ user_id: userIdField }),
      responses: {
        200: {
          description: 'the stats',
          schema: z.object({
            conversation_id: z.string(),
            message_count: z.number().int(),
            total_tokens: z.number().int(),
            summarized_through_seq: z.number().int(),
            first_message_at: z.string(),
            last_message_at: z.string(),
            context_requests: z.number().int(),
            sent_tokens: z.number().int(),
            full_history_tokens: z.number().int(),
            saved_tokens: z.number().int(),
            compactions: z.number().int(),
            memory_type: memoryTypeSchema,
            roles: z
              .record(z.string(), z.number().int())
              .describe('stored messages per role, e.g. {"user": 3, "assistant": 2}'),
          }),
        },
        404: { description: 'no such conversation' },
      },
    },
    async (c, { params, query }) => {
      const scope = requestScope(c, params.conversation_id, { query: query.user_id });
      const stats = await memory.stats(scope);
      if (stats === undefined) throw conversationNotFound(scope);
      return c.json({
        conversation_id: stats.conversationId,
        message_count: stats.messageCount,
        total_tokens: stats.totalTokens,
        summarized_through_seq: stats.summarizedThroughSeq,
        first_message_at: stats.firstMessageAt,
        last_message_at: stats.lastMessageAt,
        context_requests: stats.usage.requests,
        sent_tokens: stats.usage.sentTokens,
        full_history_tokens: stats.usage.fullHistoryTokens,
        saved_tokens: stats.usage.savedTokens,
        compactions: stats.usage.compactions,
        memory_type: seedMemoryTypeOf(stats),
        roles: stats.roles,
      });
    },
  );
}

/** Records `memoryType` in the conversation's metadata, unless it is the one already remembered. */
async function rememberMemoryType(memory: Memory, scope: Scope, memoryType: SeedMemoryType): Promise<void> {
  const conversation = await memory.getConversation(scope);
  if (conversation === undefined || conversation.metadata?.[seedMemoryTypeKey] === memoryType) return;
  await memory.updateConversation(scope, { metadata: { ...conversation.metadata, [seedMemoryTypeKey]: memoryType } });
}

/** The memory type remembered for the conversation (default for an unknown one). */
async function rememberedMemoryType(memory: Memory, scope: Scope): Promise<SeedMemoryType> {
  const conversation = await memory.getConversation(scope);
  return conversation === undefined ? defaultSeedMemoryType : seedMemoryTypeOf(conversation);
}
