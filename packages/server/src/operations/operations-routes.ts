import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { errorBody, toErrorResponse } from '../error-response.js';
import { buildOpenApiDocument } from '../openapi/build-openapi-document.js';
import { registerRoute } from '../openapi/route-spec.js';

/** Paths served without an API key, rate limit or body parsing: probes, scrapes and the API description. */
export const publicPaths: ReadonlySet<string> = new Set(['/health', '/metrics', '/openapi.json']);

/** The version of @mnemo/server, as in its package.json. */
export const serverVersion: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * Mounts `/health` (checks the store with a one-row read: 200 or 503), `/metrics` (Prometheus text) and
 * `/openapi.json` (built once, on first request, from every route registered by then).
 */
export function mountOperationsRoutes(app: ServerApp, deps: ServerDeps): void {
  const { memory, routes, metrics } = deps;

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/health',
      summary: 'Liveness and store check',
      tags: ['operations'],
      public: true,
      responses: {
        200: { description: 'the store answers', schema: z.object({ status: z.literal('ok'), version: z.string() }) },
        503: { description: 'the store fails', schema: z.object({ status: z.literal('unavailable'), error: z.object({ code: z.string(), message: z.string() }) }) },
      },
    },
    async (c) => {
      try {
        await memory.listConversations({}, { limit: 1 });
        return c.json({ status: 'ok', version: serverVersion });
      } catch (error) {
        c.get('logger').error({ err: error }, 'health check failed: the store does not answer');
        const { body } = toErrorResponse(error, c.get('requestId'));
        return c.json({ status: 'unavailable', ...errorBody('unavailable', body.error.message) }, 503);
      }
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics: requests, latency, context tokens, job queue',
      tags: ['operations'],
      public: true,
      responses: { 200: { description: 'text exposition format 0.0.4', contentType: 'text/plain; version=0.0.4' } },
    },
    async (c) => {
      let backlog;
      try {
        backlog = await memory.jobBacklog();
      } catch (error) {
        // A scrape still reports the request counters when the store is down; /health reports the store.
        c.get('logger').warn({ err: error }, 'metrics: job counts unavailable');
      }
      return c.body(metrics.render(backlog), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    },
  );

  let document: unknown;
  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/openapi.json',
      summary: 'This API, described in OpenAPI 3.1',
      tags: ['operations'],
      public: true,
      responses: { 200: { description: 'the OpenAPI document' } },
    },
    (c) => {
      document ??= buildOpenApiDocument(routes.list(), {
        title: 'mnemo',
        version: serverVersion,
        description: 'Conversation memory for LLM apps: the seed-compatible memory API and the resource API.',
      });
      return c.json(document as Record<string, unknown>);
    },
  );
}
