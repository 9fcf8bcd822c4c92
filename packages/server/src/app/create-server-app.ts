import { isMemoryError, type Memory } from '@mnemo/core';
import { Hono, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import { pino, type Logger } from 'pino';
import { createAuthMiddleware, type ServerAuth } from '../auth/api-key-auth.js';
import { createRequestOriginGuard } from '../auth/request-origin-guard.js';
import { errorResponse, toErrorResponse } from '../error-response.js';
import {
  createBodyLimitMiddleware,
  createConcurrencyLimitMiddleware,
  createRateLimitMiddleware,
  createUnreadBodyMiddleware,
} from '../limits/limit-middleware.js';
import { createRepeatThrottle, repeatKeyOf } from '../logging/repeat-throttle.js';
import { createRequestMiddleware } from '../logging/request-middleware.js';
import { createServerMetrics } from '../metrics/server-metrics.js';
import { createRouteRegistry } from '../openapi/route-spec.js';
import { mountOperationsRoutes, publicPaths } from '../operations/operations-routes.js';
import { mountConversationRoutes } from '../resource-api/conversation-routes.js';
import { mountKnowledgeRoutes } from '../resource-api/knowledge-routes.js';
import { mountTransferRoutes } from '../resource-api/transfer-routes.js';
import { mountUserRoutes } from '../resource-api/user-routes.js';
import { mountErasureRoutes } from '../resource-api/erasure-routes.js';
import { mountSeedMemoryRoutes } from '../seed-api/seed-memory-routes.js';
import type { BuiltServerApp, ServerAppState } from './server-app-state.js';
import type { ServerApp, ServerDeps, ServerEnv, ServerRouteModule, UpstreamLlmConfig } from './server-deps.js';
import { resolveServerLimits, type ServerLimits } from './server-limits.js';

// How often one repeated store failure (a full disk, a restarting database) is logged in full.
const repeatedFailureLogIntervalMs = 10_000;

/** Options of {@link createServerApp}. Only `memory` is required. */
export interface ServerAppOptions {
  readonly memory: Memory;
  /** API keys and their tenants. Default: no keys (every request is tenant `default`; `startServer` then binds loopback only). */
  readonly auth?: ServerAuth;
  /** Missing fields take `defaultServerLimits`. */
  readonly limits?: Partial<ServerLimits>;
  /** Default: pino writing JSON lines to stdout at level `info`. */
  readonly logger?: Logger;
  /** Origins allowed to call the API from a browser. Default: none (no CORS headers at all; the server's own origin may still call it). */
  readonly cors?: { readonly origins: readonly string[] };
  /** Host names answered besides loopback ones; without API keys every other Host is refused (421). Default none. */
  readonly allowedHosts?: readonly string[];
  /** The OpenAI-compatible endpoint, for mounted modules such as the proxy. */
  readonly llm?: UpstreamLlmConfig;
  /** The Anthropic Messages endpoint, for the proxy's `POST /v1/messages` (base URL without `/v1`, e.g. `https://api.anthropic.com`). */
  readonly anthropic?: UpstreamLlmConfig;
  /**
   * Extra route modules, mounted after the built-in routes and behind the same request, auth, rate-limit
   * and body-limit middleware: e.g. `routes: [mountProxyRoutes, mountMcpRoutes]`.
   */
  readonly routes?: readonly ServerRouteModule[];
  /** Clock of the rate limiter, in epoch ms; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Builds the mnemo HTTP app: the seed-compatible memory API, the resource API, `/health`, `/metrics`
 * and `/openapi.json`, plus the given route modules. Every non-public route needs a configured API key
 * (when there are any) and acts for that key's tenant only. Serve it with `startServer`, which reads the
 * app's `serverState` (its memory, closed on shutdown, and how many keys it has).
 * Throws `invalid_input` for bad limits or keys.
 */
export function createServerApp(options: ServerAppOptions): BuiltServerApp {
  const limits = resolveServerLimits(options.limits, options.auth?.keys.length ?? 0);
  const logger = options.logger ?? pino();
  const auth = createAuthMiddleware(options.auth ?? { keys: [] });
  const deps: ServerDeps = Object.freeze({
    memory: options.memory,
    logger,
    limits,
    keyCount: options.auth?.keys.length ?? 0,
    llm: Object.freeze({ ...options.llm }),
    anthropic: Object.freeze({ ...options.anthropic }),
    metrics: createServerMetrics(),
    routes: createRouteRegistry(),
  });
  const app: ServerApp = new Hono<ServerEnv>();
  const unavailableLog = createRepeatThrottle(repeatedFailureLogIntervalMs);

  app.use('*', createUnreadBodyMiddleware(limits.maxBodyBytes));
  app.use('*', createRequestMiddleware(logger, deps.metrics));
  app.use(
    '*',
    createRequestOriginGuard({
      allowedHosts: options.allowedHosts ?? [],
      allowedOrigins: options.cors?.origins ?? [],
      keyCount: options.auth?.keys.length ?? 0,
    }),
  );
  if (options.cors !== undefined && options.cors.origins.length > 0) {
    const origins = [...options.cors.origins];
    app.use(
      '*',
      cors({
        origin: origins,
        allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Mnemo-User', 'X-Request-Id'],
        exposeHeaders: ['X-Request-Id', 'X-Mnemo-Policy', 'Retry-After'],
      }),
    );
  }
  const isPublic = (path: string) => publicPaths.has(path) || deps.routes.isPublic(path);
  app.use('*', exceptPublic(isPublic, createConcurrencyLimitMiddleware(limits)));
  app.use('*', exceptPublic(isPublic, auth.middleware));
  app.use('*', exceptPublic(isPublic, createRateLimitMiddleware(limits, auth.keyOf, options.now ?? Date.now)));
  app.use('*', exceptPublic(isPublic, createBodyLimitMiddleware(limits)));

  mountOperationsRoutes(app, deps);
  mountSeedMemoryRoutes(app, deps);
  mountConversationRoutes(app, deps);
  mountUserRoutes(app, deps);
  mountErasureRoutes(app, deps);
  mountKnowledgeRoutes(app, deps);
  mountTransferRoutes(app, deps);
  for (const mount of options.routes ?? []) mount(app, deps);

  app.notFound((c) => errorResponse(c, 'not_found', `no route for ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    if (error instanceof HTTPException && error.status < 500) {
      const code =
        error.status === 413 ? 'payload_too_large' : error.status === 415 ? 'unsupported_media_type' : 'invalid_input';
      return errorResponse(c, code, error.message || 'bad request');
    }
    const response = toErrorResponse(error, c.get('requestId'));
    if (response.log) {
      // A store that is down fails every request the same way: its cause is logged once per interval,
      // with the count left out since (each request still has its own request line with the status).
      const decision = isMemoryError(error, 'unavailable')
        ? unavailableLog.take(repeatKeyOf(error))
        : { log: true, suppressed: 0 };
      if (decision.log)
        c.get('logger').error(
          { err: error, ...(decision.suppressed > 0 ? { repeatedSinceLastLogged: decision.suppressed } : {}) },
          'request failed',
        );
    }
    return c.json(response.body, response.status, response.headers);
  });

  const serverState: ServerAppState = Object.freeze({ memory: options.memory, keyCount: deps.keyCount, logger });
  return Object.assign(app, { serverState });
}

// Route modules mount after the middleware, so the public routes they register are looked up per request.
function exceptPublic(
  isPublic: (path: string) => boolean,
  middleware: MiddlewareHandler<ServerEnv>,
): MiddlewareHandler<ServerEnv> {
  return (c, next) => (isPublic(c.req.path) ? next() : middleware(c, next));
}
