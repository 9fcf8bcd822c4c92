import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ServerEnv } from '../app/server-deps.js';
import type { ServerLimits } from '../app/server-limits.js';
import { errorResponse } from '../error-response.js';
import { createTokenBucketLimiter } from './token-bucket.js';

/** The path whose body may be as large as `maxImportBytes`; every other body is bounded by `maxBodyBytes`. */
export const importPath = '/v1/import';

/**
 * Rejects a body over the limit with 413 `payload_too_large` before any handler reads it (by
 * Content-Length, or while streaming), with `Connection: close`: the rest of such a body is never read,
 * so the connection cannot carry another request, and a client that reused it would get a reset.
 */
export function createBodyLimitMiddleware(limits: ServerLimits): MiddlewareHandler<ServerEnv> {
  const limiter = (maxSize: number) =>
    bodyLimit({
      maxSize,
      onError: (c) =>
        errorResponse(c, 'payload_too_large', `the request body is over the limit of ${maxSize} bytes`, {
          details: { limit: maxSize },
          headers: { Connection: 'close' },
        }),
    });
  const regular = limiter(limits.maxBodyBytes);
  const imports = limiter(limits.maxImportBytes);
  return (c, next) => (c.req.path === importPath ? imports(c, next) : regular(c, next));
}

/**
 * Closes the connection (`Connection: close`) after any answer sent without reading the request's
 * body — a refusal (401, 404, 415, 429, 503, …) or a route that takes none. The HTTP server discards
 * such a body only for a moment, then cuts the connection; a keep-alive client that sent its next
 * request on it would get a reset instead of an answer.
 */
export function createUnreadBodyMiddleware(): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    await next();
    const declaresBody = c.req.header('transfer-encoding') !== undefined || Number(c.req.header('content-length') ?? 0) > 0;
    if (declaresBody && !c.req.raw.bodyUsed) c.header('Connection', 'close');
  };
}

/**
 * Rate-limits per API key with a token bucket (all keyless requests share one bucket): over the rate, a
 * request gets 429 `rate_limited` with `Retry-After` in seconds. `keyOf` names the bucket of a request.
 */
export function createRateLimitMiddleware(limits: ServerLimits, keyOf: (authorization: string | undefined) => string, now: () => number): MiddlewareHandler<ServerEnv> {
  if (limits.rateLimit === false) return (_c, next) => next();
  const limiter = createTokenBucketLimiter(limits.rateLimit, now);
  const { requestsPerSecond } = limits.rateLimit;
  return async (c, next) => {
    const decision = limiter.take(keyOf(c.req.header('authorization')));
    if (decision.allowed) return next();
    return errorResponse(c, 'rate_limited', `too many requests for this API key (limit ${requestsPerSecond}/s); retry after ${decision.retryAfterSeconds} s`, {
      details: { retryAfterSeconds: decision.retryAfterSeconds },
      headers: { 'Retry-After': String(decision.retryAfterSeconds) },
    });
  };
}

/**
 * Bounds the requests handled at once: past `maxConcurrentRequests`, a request gets 503 `unavailable`
 * with `Retry-After: 1` at once, so an overloaded server sheds load instead of letting requests queue
 * until they time out. A request counts until its handler returned (a streamed body may run longer).
 */
export function createConcurrencyLimitMiddleware(limits: ServerLimits): MiddlewareHandler<ServerEnv> {
  let inFlight = 0;
  const { maxConcurrentRequests } = limits;
  return async (c, next) => {
    if (inFlight >= maxConcurrentRequests) {
      return errorResponse(c, 'unavailable', `the server is handling ${maxConcurrentRequests} requests, its limit; retry after 1 s`, {
        details: { retryAfterSeconds: 1, maxConcurrentRequests },
        headers: { 'Retry-After': '1' },
      });
    }
    inFlight += 1;
    try {
      await next();
    } finally {
      inFlight -= 1;
    }
  };
}
