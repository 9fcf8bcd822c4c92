import { MemoryError, toOpenAiMessages, type MessageInput } from '@mnemo/core';
import { z } from 'zod';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { seedMemoryTypeOf } from '../seed-api/seed-memory-routes.js';
import { registerRoute } from '../openapi/route-spec.js';
import { conversationNotFound, listRequestConversations, requestScope, requireConversation } from './request-scope.js';
import {
  appendBodySchema,
  compactBodySchema,
  contextBodySchema,
  contextReportSchema,
  conversationParamsSchema,
  conversationSchema,
  conversationStatsSchema,
  eraseResultSchema,
  listMessagesQuerySchema,
  messageSchema,
  openAiMessageSchema,
  pageQuerySchema,
  summarySchema,
  userQuerySchema,
} from './resource-schemas.js';
import { idempotencyHeader, maxIdempotencyKeyChars, readIdempotencyHeader } from './idempotency-key.js';

const tags = ['conversations'];

/** Mounts the conversation resource routes: list, stats, erase, messages (append and page), context, compact, summaries. */
export function mountConversationRoutes(app: ServerApp, deps: ServerDeps): void {
  const { memory, routes } = deps;

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/conversations',
      summary: 'List conversations of the tenant (of one user with user_id), cursor-paged',
      description:
        "Ordered by user id, then conversation id. `conversations` lists the same page in the seed API's shape: `id`, `memory_type` (the one last given on add, default buffer) and `message_count`.",
      tags,
      query: pageQuerySchema,
      responses: {
        200: {
          description: 'one page',
          schema: z.object({
            items: z.array(conversationSchema),
            nextCursor: z.string().optional(),
            conversations: z.array(
              z.object({
                id: z.string(),
                user_id: z.string(),
                memory_type: z.string(),
                message_count: z.number().int(),
              }),
            ),
          }),
        },
      },
    },
    async (c, { query }) => {
      const page = await listRequestConversations(c, memory, query);
      return c.json({
        items: page.items,
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
        conversations: page.items.map((item) => ({
          id: item.conversationId,
          user_id: item.userId,
          memory_type: seedMemoryTypeOf(item),
          message_count: item.messageCount,
        })),
      });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/conversations/{id}',
      summary: 'Counters and usage of one conversation',
      tags,
      params: conversationParamsSchema,
      query: userQuerySchema,
      responses: {
        200: { description: 'the conversation', schema: conversationStatsSchema },
        404: { description: 'no such conversation' },
      },
    },
    async (c, { params, query }) => {
      const scope = requestScope(c, params.id, { query: query.user_id });
      const stats = await memory.stats(scope);
      if (stats === undefined) throw conversationNotFound(scope);
      return c.json(stats);
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'delete',
      path: '/v1/conversations/{id}',
      summary: 'Erase a conversation: messages, summaries, jobs and usage (erasing twice is not an error)',
      tags,
      params: conversationParamsSchema,
      query: userQuerySchema,
      responses: { 200: { description: 'what was erased', schema: eraseResultSchema } },
    },
    async (c, { params, query }) => {
      const scope = requestScope(c, params.id, { query: query.user_id });
      return c.json({ erased: await memory.erase(scope) });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/conversations/{id}/messages',
      summary: 'Read stored messages oldest first, paged by seq',
      description: 'Pass `nextAfterSeq` of a page as `after_seq` to read the next one; it is absent on the last page.',
      tags,
      params: conversationParamsSchema,
      query: listMessagesQuerySchema,
      responses: {
        200: {
          description: 'one page',
          schema: z.object({ items: z.array(messageSchema), nextAfterSeq: z.number().int().optional() }),
        },
        404: { description: 'no such conversation' },
      },
    },
    async (c, { params, query }) => {
      const scope = requestScope(c, params.id, { query: query.user_id });
      const limit = query.limit ?? 100;
      // One more than the page tells whether another page follows without a count query.
      const items = await memory.listMessages(scope, { afterSeq: query.after_seq ?? 0, limit: limit + 1 });
      if (items.length === 0) await requireConversation(memory, scope);
      const page = items.slice(0, limit);
      const last = page.at(-1);
      return c.json({ items: page, ...(items.length > limit && last !== undefined ? { nextAfterSeq: last.seq } : {}) });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/conversations/{id}/messages',
      summary: 'Append a batch of messages, atomically and in order',
      description:
        `With an \`${idempotencyHeader}\` header, message i of the batch gets the key \`<header>#i\` unless it has its own idempotencyKey, ` +
        'so a retried request returns the stored messages with their original seqs and stores nothing twice.',
      tags,
      params: conversationParamsSchema,
      query: userQuerySchema,
      body: appendBodySchema,
      headers: { [idempotencyHeader]: `a key for the whole batch, at most ${maxIdempotencyKeyChars} characters` },
      responses: {
        201: { description: 'the messages as stored', schema: z.object({ messages: z.array(messageSchema) }) },
      },
    },
    async (c, { params, query, body }) => {
      if (body.messages.length > deps.limits.maxBatchMessages) {
        throw new MemoryError(
          'invalid_input',
          `body.messages holds ${body.messages.length} messages, over the limit of ${deps.limits.maxBatchMessages}`,
          {
            details: { field: 'body.messages', limit: deps.limits.maxBatchMessages },
          },
        );
      }
      const scope = requestScope(c, params.id, { query: query.user_id, body: body.userId });
      const batchKey = readIdempotencyHeader(c);
      const messages = body.messages.map((message, index) => ({
        ...message,
        ...(message.idempotencyKey === undefined && batchKey !== undefined
          ? { idempotencyKey: `${batchKey}#${index}` }
          : {}),
      }));
      // Core validates each message in full (content, tool pairing, limits) before anything is written.
      const stored = await memory.append(scope, messages as unknown as MessageInput[]);
      return c.json({ messages: stored }, 201);
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/conversations/{id}/context',
      summary: 'Build the context to send for the next model call, with the full report',
      description: 'Messages are in the OpenAI chat-completions wire shape. The build is recorded in the usage ledger.',
      tags,
      params: conversationParamsSchema,
      query: userQuerySchema,
      body: contextBodySchema,
      responses: {
        200: {
          description: 'the context',
          schema: z.object({ messages: z.array(openAiMessageSchema), report: contextReportSchema }),
        },
      },
    },
    async (c, { params, query, body }) => {
      const { userId, ...options } = body;
      const scope = requestScope(c, params.id, { query: query.user_id, body: userId });
      const built = await memory.buildContext(scope, options);
      deps.metrics.recordContext(built.report);
      return c.json({ messages: toOpenAiMessages(built.messages), report: built.report });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/conversations/{id}/compact',
      summary: 'Compact now: fold all but the kept recent turns into the rolling summary',
      tags,
      params: conversationParamsSchema,
      query: userQuerySchema,
      body: compactBodySchema,
      responses: {
        200: {
          description: 'the summaries written (none when nothing was due)',
          schema: z.object({ summaries: z.array(summarySchema) }),
        },
        404: { description: 'no such conversation' },
      },
    },
    async (c, { params, query, body }) => {
      const scope = requestScope(c, params.id, { query: query.user_id, body: body.userId });
      await requireConversation(memory, scope);
      return c.json({ summaries: await memory.compact(scope) });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/conversations/{id}/summaries',
      summary: 'Every summary version of a conversation, oldest first',
      tags,
      params: conversationParamsSchema,
      query: userQuerySchema,
      responses: {
        200: { description: 'the summaries', schema: z.object({ items: z.array(summarySchema) }) },
        404: { description: 'no such conversation' },
      },
    },
    async (c, { params, query }) => {
      const scope = requestScope(c, params.id, { query: query.user_id });
      const items = await memory.listSummaries(scope);
      if (items.length === 0) await requireConversation(memory, scope);
      return c.json({ items });
    },
  );
}
