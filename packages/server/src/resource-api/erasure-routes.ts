import { z } from 'zod';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { registerRoute } from '../openapi/route-spec.js';
import { requestScope } from './request-scope.js';
import { conversationParamsSchema, idSchema, userQuerySchema } from './resource-schemas.js';

const count = z.number().int();
/** The receipt of an erasure of messages: counts per kind and the audit entry's id, never content. */
export const erasureReceiptSchema = z.object({
  messages: count,
  conversations: count,
  vectors: count,
  summaries: count.describe(
    'summaries removed because they covered an erased message; compaction folds what remains again in the background',
  ),
  facts: count.describe('facts removed because every message they came from was erased'),
  factsKept: count.describe('facts other messages state too: they keep those sources'),
  relations: count,
  entities: count,
  memoryFiles: count.describe('memory files an erased memory-tool call wrote, edited or deleted'),
  auditId: z.string(),
});

const auditEntrySchema = erasureReceiptSchema.omit({ auditId: true }).extend({
  id: z.string(),
  tenantId: z.string(),
  userId: z.string(),
  selection: z.object({
    conversationId: z.string().optional(),
    fromSeq: count.optional(),
    toSeq: count.optional(),
    before: z.string().optional(),
  }),
  erasedAt: z.string(),
});

const seqParamsSchema = conversationParamsSchema.extend({
  seq: z.coerce.number<string>().int().min(1).describe('the message seq'),
});
const rangeBodySchema = z.strictObject({
  userId: idSchema.optional(),
  fromSeq: count.min(1).optional().describe('first seq to erase, inclusive'),
  toSeq: count.min(1).optional().describe('last seq to erase, inclusive'),
  before: z.string().optional().describe('ISO 8601: erase the messages created before this time'),
});
const userBodySchema = z.strictObject({
  before: z.string().describe('ISO 8601: erase every message of the user created before this time'),
});

/**
 * Mounts the erasure routes: one message, a seq range or a time of a conversation, everything a user
 * said before a time, and the audit log. Each answers with the receipt.
 */
export function mountErasureRoutes(app: ServerApp, deps: ServerDeps): void {
  const { memory, routes } = deps;
  const tags = ['erasure'];
  const receipt = {
    200: { description: 'the receipt: what was erased, per kind', schema: z.object({ erased: erasureReceiptSchema }) },
  };

  registerRoute(
    app,
    routes,
    {
      method: 'delete',
      path: '/v1/conversations/{id}/messages/{seq}',
      summary:
        'Erase one message and all made of it: vectors, the summaries that covered it, facts and relations only it stated, memory files it wrote',
      tags,
      params: seqParamsSchema,
      query: userQuerySchema,
      responses: receipt,
    },
    async (c, { params, query }) => {
      const { conversationId, ...user } = requestScope(c, params.id, { query: query.user_id });
      return c.json({
        erased: await memory.eraseMessages({ ...user, conversationId, fromSeq: params.seq, toSeq: params.seq }),
      });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/conversations/{id}/erase',
      summary: 'Erase a seq range of a conversation, or its messages before a time, with all made of them',
      tags,
      params: conversationParamsSchema,
      query: userQuerySchema,
      body: rangeBodySchema,
      responses: receipt,
    },
    async (c, { params, query, body }) => {
      const { userId, ...selection } = body;
      const { conversationId, ...user } = requestScope(c, params.id, { query: query.user_id, body: userId });
      return c.json({ erased: await memory.eraseMessages({ ...user, conversationId, ...selection }) });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/users/{userId}/erase',
      summary: 'Erase every message a user said before a time, in all their conversations, with all made of them',
      tags,
      params: z.object({ userId: idSchema }),
      body: userBodySchema,
      responses: receipt,
    },
    async (c, { params, body }) =>
      c.json({
        erased: await memory.eraseMessages({ tenantId: c.get('tenantId'), userId: params.userId, before: body.before }),
      }),
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/users/{userId}/erasures',
      summary: "The audit log of a user's erasures of messages: selection, time and counts, oldest first (no content)",
      tags,
      params: z.object({ userId: idSchema }),
      responses: { 200: { description: 'the entries', schema: z.object({ items: z.array(auditEntrySchema) }) } },
    },
    async (c, { params }) =>
      c.json({ items: await memory.erasures({ tenantId: c.get('tenantId'), userId: params.userId }) }),
  );
}
