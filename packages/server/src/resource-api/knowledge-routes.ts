import { maxIdLength, ownerOf } from '@mnemo/core';
import { z } from 'zod';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { registerRoute } from '../openapi/route-spec.js';
import { requestNamings, requestUser } from './request-scope.js';
import { idSchema, messageSchema, recallExplanationSchema, userQuerySchema } from './resource-schemas.js';

const factSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  userId: z.string(),
  subject: z.string(),
  attribute: z.string(),
  value: z.string(),
  text: z.string(),
  confidence: z.number(),
  validFrom: z.string(),
  validTo: z.string().optional(),
  supersededBy: z.string().optional(),
  sourceConversationId: z.string().optional(),
  sourceSeqs: z.array(z.number().int()),
  extractor: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().optional(),
});

const entitySchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  aliases: z.array(z.string()),
  description: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const relationSchema = z.object({
  id: z.string(),
  subjectId: z.string(),
  predicate: z.string(),
  objectId: z.string(),
  validFrom: z.string(),
  validTo: z.string().optional(),
  sourceConversationId: z.string().optional(),
  sourceSeqs: z.array(z.number().int()),
  createdAt: z.string(),
});

const recallHitSchema = z.object({
  conversationId: z.string(),
  message: messageSchema,
  score: z.number(),
  explain: recallExplanationSchema,
  neighbours: z.array(messageSchema).optional(),
});

const isoDate = z.iso.datetime({ offset: true });
const flag = z.enum(['true', 'false']).optional();
const tags = ['knowledge'];

/** Mounts facts (list, history, as-of, put, retire), recall across the user's conversations, and the entity graph. */
export function mountKnowledgeRoutes(app: ServerApp, deps: ServerDeps): void {
  const { memory, routes } = deps;

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/facts',
      summary: "The user's facts: current by default, valid at `as_of`, or every version with `history=true`",
      tags,
      query: userQuerySchema.extend({
        subject: z.string().min(1).optional(),
        attribute: z.string().min(1).optional(),
        as_of: isoDate.optional(),
        history: flag,
      }),
      responses: { 200: { description: 'facts, oldest first', schema: z.object({ facts: z.array(factSchema) }) } },
    },
    async (c, { query }) => {
      const facts = await memory.facts.list(requestUser(c, { query: query.user_id }), {
        ...(query.subject === undefined ? {} : { subject: query.subject }),
        ...(query.attribute === undefined ? {} : { attribute: query.attribute }),
        ...(query.as_of === undefined ? {} : { asOf: new Date(query.as_of).toISOString() }),
        ...(query.history === 'true' ? { includeHistory: true } : {}),
      });
      return c.json({ facts });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/facts',
      summary:
        'State a fact by hand; a new value of a single-valued attribute supersedes the current one (kept as history)',
      tags,
      body: z.strictObject({
        attribute: z.string().min(1).max(128),
        value: z.string().min(1).max(4096),
        subject: z.string().min(1).max(maxIdLength).optional(),
        text: z.string().min(1).max(4096).optional(),
        validFrom: isoDate.optional(),
        expiresAt: isoDate
          .optional()
          .describe('when the fact expires: from then on it leaves listings and contexts, and stays in its history'),
        userId: idSchema.optional(),
      }),
      responses: { 200: { description: 'the current fact', schema: z.object({ fact: factSchema }) } },
    },
    async (c, { body }) => {
      const { userId, validFrom, ...fact } = body;
      const stored = await memory.facts.put(requestUser(c, { body: userId }), {
        ...fact,
        ...(validFrom === undefined ? {} : { validFrom: new Date(validFrom).toISOString() }),
      });
      return c.json({ fact: stored });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'patch',
      path: '/v1/facts/{id}',
      summary:
        'Correct a current fact (the corrected value supersedes it, history kept) and/or set when it expires (null: never)',
      tags,
      params: z.object({ id: z.string().min(1) }),
      query: userQuerySchema,
      body: z
        .strictObject({
          value: z.string().min(1).max(4096).optional(),
          text: z.string().min(1).max(4096).optional(),
          expiresAt: isoDate.nullable().optional(),
          userId: idSchema.optional(),
        })
        .refine((body) => body.value !== undefined || body.expiresAt !== undefined, {
          message: 'give value (a correction) or expiresAt',
        })
        .refine((body) => body.text === undefined || body.value !== undefined, { message: 'text goes with value' }),
      responses: {
        200: {
          description: 'the current fact: the correction, or the fact with its expiry',
          schema: z.object({ fact: factSchema }),
        },
        404: { description: 'no such fact' },
        409: { description: 'already ended' },
      },
    },
    async (c, { params, query, body }) => {
      const user = requestUser(c, { query: query.user_id, body: body.userId });
      let fact =
        body.value === undefined
          ? undefined
          : await memory.facts.correct(user, params.id, {
              value: body.value,
              ...(body.text === undefined ? {} : { text: body.text }),
            });
      if (body.expiresAt !== undefined) fact = await memory.facts.expire(user, fact?.id ?? params.id, body.expiresAt);
      return c.json({ fact: fact! });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'delete',
      path: '/v1/facts/{id}',
      summary: 'End a current fact now (it stays in the history)',
      tags,
      params: z.object({ id: z.string().min(1) }),
      query: userQuerySchema,
      responses: {
        200: { description: 'the ended fact', schema: z.object({ fact: factSchema }) },
        404: { description: 'no such fact' },
        409: { description: 'already ended' },
      },
    },
    async (c, { params, query }) =>
      c.json({ fact: await memory.facts.retire(requestUser(c, { query: query.user_id }), params.id) }),
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/recall',
      summary:
        'The past messages of the user that a query needs, across their conversations (keyword + vector, fused), each with its explanation',
      tags,
      query: userQuerySchema.extend({
        q: z.string().min(1).max(4096),
        k: z.coerce.number<string>().int().min(1).max(200).optional(),
        conversation: idSchema.optional(),
        since: isoDate.optional(),
        until: isoDate.optional(),
        neighbours: z.coerce.number<string>().int().min(0).max(5).optional(),
      }),
      responses: {
        200: {
          description:
            'hits, best first, and how recall searched: `hybrid` (with the model whose vectors ranked) or `keyword-only` and why (`no_embedder`, `embedding_deadline`, `embedder_failed`)',
          schema: z.object({
            hits: z.array(recallHitSchema),
            mode: z.enum(['hybrid', 'keyword-only']),
            reason: z.enum(['no_embedder', 'embedding_deadline', 'embedder_failed']).optional(),
            model: z.string().optional(),
          }),
        },
      },
    },
    async (c, { query }) => {
      // A conversation named without a user is its own user, as everywhere (core's ownerOf).
      // As a context recalls: under the query embedding deadline, keyword-only when the embedder fails.
      const { hits, mode, reason, model } = await memory.searchRecall(
        ownerOf(c.get('tenantId'), requestNamings(c, { query: query.user_id }), query.conversation),
        query.q,
        {
          ...(query.k === undefined ? {} : { k: query.k }),
          ...(query.conversation === undefined ? {} : { conversations: [query.conversation] }),
          ...(query.since === undefined ? {} : { since: new Date(query.since).toISOString() }),
          ...(query.until === undefined ? {} : { until: new Date(query.until).toISOString() }),
          ...(query.neighbours === undefined ? {} : { neighbours: query.neighbours }),
        },
      );
      return c.json({
        hits,
        mode,
        ...(reason === undefined ? {} : { reason }),
        ...(model === undefined ? {} : { model }),
      });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/entities',
      summary: "The user's entities (people, places, devices, …); `query` matches a name or alias prefix",
      tags,
      query: userQuerySchema.extend({
        query: z.string().min(1).optional(),
        limit: z.coerce.number<string>().int().min(1).max(1000).optional(),
      }),
      responses: { 200: { description: 'entities by name', schema: z.object({ entities: z.array(entitySchema) }) } },
    },
    async (c, { query }) => {
      const entities = await memory.graph.entities(requestUser(c, { query: query.user_id }), {
        ...(query.query === undefined ? {} : { query: query.query }),
        ...(query.limit === undefined ? {} : { limit: query.limit }),
      });
      return c.json({ entities });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/entities/{entity}/neighbours',
      summary: 'An entity (by id, name or alias) and everything within `depth` relations of it',
      tags,
      params: z.object({ entity: z.string().min(1).max(maxIdLength) }),
      query: userQuerySchema.extend({ depth: z.coerce.number<string>().int().min(1).max(3).optional(), history: flag }),
      responses: {
        200: {
          description: 'the neighbourhood',
          schema: z.object({ entities: z.array(entitySchema), relations: z.array(relationSchema) }),
        },
        404: { description: 'no such entity' },
      },
    },
    async (c, { params, query }) =>
      c.json(
        await memory.graph.neighbours(
          requestUser(c, { query: query.user_id }),
          params.entity,
          query.depth ?? 1,
          query.history === 'true' ? { includeHistory: true } : {},
        ),
      ),
  );
}
