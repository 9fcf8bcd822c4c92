import { contextPolicies, maxContextTokens, maxIdLength, maxPageLimit, messageRoles, recallModes } from '@mnemo/core';
import { z } from 'zod';

/** A tenant, user or conversation id as core accepts it (1–256 characters). */
export const idSchema = z.string().min(1).max(maxIdLength);

/** Path parameter `{id}`: a conversation id. */
export const conversationParamsSchema = z.object({ id: idSchema.describe('conversation id') });

/** Query parameter `user_id`: the user whose conversation it is (else `X-Mnemo-User`, else `default`). */
export const userQuerySchema = z.object({
  user_id: idSchema.optional().describe('user id (default: the X-Mnemo-User header, else "default")'),
});

const toolCallSchema = z.strictObject({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.strictObject({ name: z.string().min(1), arguments: z.string().describe('JSON text') }),
});

/** A message as a client sends it (core's `MessageInput`); core checks the rest (empty content, tool pairing, limits). */
export const messageInputSchema = z.strictObject({
  role: z.enum(messageRoles),
  content: z
    .string()
    .nullable()
    .optional()
    .describe('may be empty or null only on an assistant message with toolCalls'),
  name: z.string().min(1).optional(),
  toolCalls: z.array(toolCallSchema).optional(),
  toolCallId: z.string().min(1).optional(),
  createdAt: z.string().optional().describe('ISO 8601; default: the time of the append'),
  metadata: z.record(z.string(), z.unknown()).optional(),
  idempotencyKey: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe('unique within the conversation: a retry returns the stored message'),
});

/** A stored message. */
export const messageSchema = z.object({
  id: z.string(),
  seq: z.number().int().describe('gapless position in the conversation, from 1'),
  role: z.enum(messageRoles),
  content: z.string(),
  name: z.string().optional(),
  toolCalls: z.array(toolCallSchema).optional(),
  toolCallId: z.string().optional(),
  createdAt: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  idempotencyKey: z.string().optional(),
  tokens: z.number().int(),
});

/** A conversation's row. */
export const conversationSchema = z.object({
  tenantId: z.string(),
  userId: z.string(),
  conversationId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messageCount: z.number().int(),
  totalTokens: z.number().int(),
  summarizedThroughSeq: z.number().int(),
  summarizedTokens: z.number().int(),
  metadata: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("the caller's JSON object about the conversation; absent until set"),
});

/** Sums of a conversation's usage ledger. */
export const usageTotalsSchema = z.object({
  requests: z.number().int(),
  sentTokens: z.number().int(),
  fullHistoryTokens: z.number().int(),
  savedTokens: z.number().int(),
  compactions: z.number().int(),
  summarizerInputTokens: z.number().int(),
  summarizerOutputTokens: z.number().int(),
  netSavedTokens: z.number().int(),
});

/** A conversation with its metadata, the times of its first and last message, its messages per role and its usage. */
export const conversationStatsSchema = conversationSchema.extend({
  firstMessageAt: z.string(),
  lastMessageAt: z.string(),
  roles: z
    .partialRecord(z.enum(messageRoles), z.number().int())
    .describe('stored messages per role; roles without messages are absent'),
  usage: usageTotalsSchema,
});

/** A summary version. */
export const summarySchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  userId: z.string(),
  conversationId: z.string(),
  level: z.number().int(),
  fromSeq: z.number().int(),
  toSeq: z.number().int(),
  content: z.string(),
  tokens: z.number().int(),
  foldedSummaryIds: z.array(z.string()),
  summarizer: z.string(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  fallbackReason: z.string().optional(),
  createdAt: z.string(),
});

/** A message in the OpenAI chat-completions wire shape. */
export const openAiMessageSchema = z.object({
  role: z.enum(messageRoles),
  content: z.string().nullable(),
  name: z.string().optional(),
  tool_calls: z
    .array(
      z.object({
        id: z.string(),
        type: z.literal('function'),
        function: z.object({ name: z.string(), arguments: z.string() }),
      }),
    )
    .optional(),
  tool_call_id: z.string().optional(),
});

const seqRangeSchema = z.object({ from: z.number().int(), to: z.number().int() });

/** Why a recalled message ranks where it does: each retriever's rank and score, recency, the fused score. */
export const recallExplanationSchema = z.object({
  keywordRank: z.number().int().optional(),
  keywordScore: z.number().optional(),
  vectorRank: z.number().int().optional(),
  vectorSimilarity: z.number().optional(),
  recency: z.number(),
  fused: z.number(),
  speaker: z.boolean().optional(),
  neighbour: z.number().optional(),
});

/** A fact or recalled message a hybrid context considered. */
const contextItemSchema = z.object({
  kind: z.enum(['fact', 'recalled']),
  id: z.string(),
  conversationId: z.string().optional(),
  seq: z.number().int().optional(),
  tokens: z.number().int(),
  score: z.number().optional(),
  explain: recallExplanationSchema.optional().describe('for a recalled message: why it ranks where it does'),
});

/** The report of a context build: parts, what was left out and why, and the savings. */
export const contextReportSchema = z.object({
  policy: z.enum(contextPolicies),
  maxTokens: z.number().int(),
  encoding: z.string(),
  parts: z.array(
    z.object({
      kind: z.enum(['system', 'facts', 'summary', 'recent', 'recalled']),
      tokens: z.number().int(),
      messageCount: z.number().int(),
      seqRange: seqRangeSchema.optional(),
      summaryId: z.string().optional(),
      truncated: z.boolean().optional(),
      items: z.array(contextItemSchema).optional(),
    }),
  ),
  excludedItems: z.array(
    contextItemSchema.extend({ reason: z.enum(['over_budget', 'already_in_context', 'conversation_fits']) }),
  ),
  dropped: z.array(
    z.object({
      seqRange: seqRangeSchema,
      messageCount: z.number().int(),
      tokens: z.number().int(),
      reason: z.enum(['outside_window', 'over_budget', 'summarized', 'awaiting_compaction']),
    }),
  ),
  truncated: z.array(
    z.object({ seq: z.number().int(), originalTokens: z.number().int(), keptTokens: z.number().int() }),
  ),
  requestOverheadTokens: z.number().int(),
  fullHistoryTokens: z.number().int(),
  sentTokens: z.number().int(),
  savedTokens: z.number().int(),
  savedPercent: z.number(),
  recall: z
    .object({
      mode: z.enum(['hybrid', 'keyword-only', 'skipped']),
      reason: z.enum(['no_embedder', 'embedding_deadline', 'embedder_failed', 'not_asked']).optional(),
      model: z
        .string()
        .optional()
        .describe('hybrid: the model whose vectors ranked the vector search (the refiner where it could)'),
      bestInContext: z
        .literal(true)
        .optional()
        .describe("the turn's best match is one of the recent turns: its snippets got only the least room"),
    })
    .optional()
    .describe(
      'how the hybrid policy recalled; skipped (not_asked) for a turn that asked nothing under recall when-asked',
    ),
  stable: z
    .object({ messageCount: z.number().int(), tokens: z.number().int() })
    .describe(
      'the leading messages that stay byte-identical until the next compaction (where a cache breakpoint goes)',
    ),
});

/** Body of `POST /v1/conversations/{id}/messages`. */
export const appendBodySchema = z.strictObject({
  messages: z.array(messageInputSchema).min(1),
  userId: idSchema.optional(),
});

/** A page's size in a query string: 1 to `maxPageLimit`, default 100. */
const pageLimitSchema = z.coerce
  .number<string>()
  .int()
  .min(1)
  .max(maxPageLimit)
  .optional()
  .describe(`page size, 1–${maxPageLimit} (default 100)`);

/** Query of `GET /v1/conversations/{id}/messages`. */

export const listMessagesQuerySchema = userQuerySchema.extend({
  after_seq: z.coerce.number<string>().int().min(0).optional().describe('only messages after this seq (default 0)'),
  limit: pageLimitSchema,
});

/** Body of `POST /v1/conversations/{id}/context`. */
export const contextBodySchema = z.strictObject({
  policy: z.enum(contextPolicies).optional(),
  maxTokens: z.number().int().min(1).max(maxContextTokens).optional(),
  system: z.string().optional(),
  query: z.string().optional(),
  windowTurns: z.number().int().min(1).max(100_000).optional(),
  recall: z
    .enum(recallModes)
    .optional()
    .describe('when the hybrid policy recalls: when-asked (default: a turn that asks something) or every-turn'),
  userId: idSchema.optional(),
});

/** Body of `POST /v1/conversations/{id}/compact` (optional). */
export const compactBodySchema = z.strictObject({ userId: idSchema.optional() });

/** Query of cursor-paged listings over conversations. */
export const pageQuerySchema = userQuerySchema.extend({
  cursor: z.string().min(1).optional().describe('nextCursor of the previous page'),
  limit: pageLimitSchema,
});

/** What an erase removed. */
export const eraseResultSchema = z.object({
  erased: z.object({ conversations: z.number().int(), messages: z.number().int() }),
});
