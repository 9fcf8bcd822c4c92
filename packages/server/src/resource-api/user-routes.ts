import { z } from 'zod';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { registerRoute } from '../openapi/route-spec.js';
import { listRequestConversations, requestUser, userHeader } from './request-scope.js';
import {
  eraseResultSchema,
  idSchema,
  messageSchema,
  pageQuerySchema,
  summarySchema,
  usageTotalsSchema,
  userQuerySchema,
} from './resource-schemas.js';

/** Mounts the user-level routes: erase a user, usage per conversation, and expanding a summary. */
export function mountUserRoutes(app: ServerApp, deps: ServerDeps): void {
  const { memory, routes } = deps;

  registerRoute(
    app,
    routes,
    {
      method: 'delete',
      path: '/v1/users/{userId}',
      summary:
        "Erase everything of a user: every conversation with its messages, summaries, jobs and usage, and the user's memory files",
      tags: ['users'],
      params: z.object({ userId: idSchema }),
      responses: { 200: { description: 'what was erased', schema: eraseResultSchema } },
    },
    async (c, { params }) =>
      c.json({ erased: await memory.erase({ tenantId: c.get('tenantId'), userId: params.userId }) }),
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/usage',
      summary:
        'Usage per conversation (context builds, tokens sent against the full history, compaction cost), cursor-paged',
      description: `Spans every user of the tenant unless \`user_id\` or \`${userHeader}\` names one.`,
      tags: ['usage'],
      query: pageQuerySchema,
      responses: {
        200: {
          description: 'one page',
          schema: z.object({
            items: z.array(
              z.object({
                userId: z.string(),
                conversationId: z.string(),
                messageCount: z.number().int(),
                totalTokens: z.number().int(),
                usage: usageTotalsSchema,
              }),
            ),
            nextCursor: z.string().optional(),
          }),
        },
      },
    },
    async (c, { query }) => {
      const page = await listRequestConversations(c, memory, query);
      const items = [];
      for (const conversation of page.items) {
        const stats = await memory.stats(conversation);
        // A conversation erased between the listing and this read is simply left out.
        if (stats === undefined) continue;
        const { userId, conversationId, messageCount, totalTokens, usage } = stats;
        items.push({ userId, conversationId, messageCount, totalTokens, usage });
      }
      return c.json({ items, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/summaries/{id}/expand',
      summary: 'A summary with the messages it stands for and the summaries it folded',
      tags: ['conversations'],
      params: z.object({ id: z.string().min(1).describe('summary id') }),
      query: userQuerySchema,
      responses: {
        200: {
          description: 'the expanded summary',
          schema: z.object({
            summary: summarySchema,
            messages: z.array(messageSchema),
            folded: z.array(summarySchema),
          }),
        },
        404: { description: "no such summary among the user's conversations" },
      },
    },
    async (c, { params, query }) => c.json(await memory.expand(requestUser(c, { query: query.user_id }), params.id)),
  );
}
