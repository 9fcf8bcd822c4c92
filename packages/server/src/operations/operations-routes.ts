import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { errorBody, retryAfterHeader, toErrorResponse } from '../error-response.js';
import { createRepeatThrottle } from '../logging/repeat-throttle.js';
import { buildOpenApiDocument } from '../openapi/build-openapi-document.js';
import { registerRoute } from '../openapi/route-spec.js';

/** Paths served without an API key, rate limit or body parsing: probes, scrapes and the API description. */
export const publicPaths: ReadonlySet<string> = new Set(['/health', '/ready', '/metrics', '/openapi.json']);

/** The version of @mnemo/server, as in its package.json. */
export const serverVersion: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * Mounts `/health` (checks the store with a one-row read: 200 or 503), `/ready` (the store's readiness:
 * reads, writes, disk, integrity; 200 or 503), `/metrics` (Prometheus text) and
 * `/openapi.json` (built once, on first request, from every route registered by then).
 */
export function mountOperationsRoutes(app: ServerApp, deps: ServerDeps): void {
  const { memory, routes, metrics } = deps;
  const notReadyLog = createRepeatThrottle(10_000);

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
        503: {
          description: 'the store fails',
          schema: z.object({
            status: z.literal('unavailable'),
            error: z.object({ code: z.string(), message: z.string() }),
          }),
        },
      },
    },
    async (c) => {
      try {
        await memory.listConversations({}, { limit: 1 });
        return c.json({ status: 'ok', version: serverVersion });
      } catch (error) {
        c.get('logger').error({ err: error }, 'health check failed: the store does not answer');
        const { body } = toErrorResponse(error, c.get('requestId'));
        return c.json(
          { status: 'unavailable', ...errorBody('unavailable', body.error.message) },
          503,
          retryAfterHeader(undefined),
        );
      }
    },
  );

  const checkSchema = z.object({ name: z.string(), ok: z.boolean(), message: z.string().optional() });
  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/ready',
      summary: 'Readiness: the store can be read and written now',
      description:
        'Unlike /health (the process answers and the store reads), this fails while writes would fail: a full disk, a file or server that takes no ' +
        'writes, a damaged database file, a store that cannot be reached. Each check is listed with what it found.',
      tags: ['operations'],
      public: true,
      responses: {
        200: { description: 'ready', schema: z.object({ status: z.literal('ready'), checks: z.array(checkSchema) }) },
        503: {
          description: 'not ready, with Retry-After',
          schema: z.object({ status: z.literal('not_ready'), checks: z.array(checkSchema) }),
        },
      },
    },
    async (c) => {
      const readiness = await memory.readiness();
      if (readiness.ready) return c.json({ status: 'ready', checks: readiness.checks });
      const failed = readiness.checks
        .filter((check) => !check.ok)
        .map((check) => `${check.name}: ${check.message ?? 'failed'}`);
      const decision = notReadyLog.take(failed.join('; '));
      if (decision.log)
        c.get('logger').warn(
          { failed, ...(decision.suppressed > 0 ? { repeatedSinceLastLogged: decision.suppressed } : {}) },
          'not ready',
        );
      return c.json({ status: 'not_ready', checks: readiness.checks }, 503, retryAfterHeader(undefined));
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
