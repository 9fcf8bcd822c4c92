import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from 'pino';
import type { ServerEnv } from '../app/server-deps.js';
import type { ServerMetrics } from '../metrics/server-metrics.js';

/** Header carrying the request id: taken from the request when it is a sane token, else generated, and always echoed. */
export const requestIdHeader = 'X-Request-Id';

const saneRequestId = /^[\w.:-]{1,128}$/;
// Probes and scrapes arrive every few seconds; their lines would drown the API's.
const quietPaths = new Set(['/health', '/ready', '/metrics']);

/**
 * The first middleware: gives the request an id and a child logger (`reqId` on every line), and when
 * the response is ready, counts it in the metrics by route template and writes one JSON log line.
 */
export function createRequestMiddleware(logger: Logger, metrics: ServerMetrics): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const startedAt = process.hrtime.bigint();
    const given = c.req.header(requestIdHeader);
    const requestId = given !== undefined && saneRequestId.test(given) ? given : randomUUID();
    const requestLogger = logger.child({ reqId: requestId });
    c.set('requestId', requestId);
    c.set('logger', requestLogger);
    await next();
    c.header(requestIdHeader, requestId);
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const route = routeLabel(routePath(c, -1));
    const status = c.res.status;
    metrics.observeRequest({ method: c.req.method, route, status }, seconds);
    const fields = {
      method: c.req.method,
      route,
      path: c.req.path,
      status,
      durationMs: Math.round(seconds * 1e6) / 1e3,
      tenantId: c.get('tenantId'),
    };
    if (quietPaths.has(c.req.path) && status < 400) requestLogger.debug(fields, 'request');
    else requestLogger.info(fields, 'request');
  };
}

// A request no route matched ends on a catch-all middleware; label it once instead of by raw path.
function routeLabel(path: string): string {
  return path === '*' || path === '/*' ? 'unmatched' : path;
}
