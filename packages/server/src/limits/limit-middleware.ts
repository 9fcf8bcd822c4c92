import type { MiddlewareHandler } from 'hono';
import type { ServerEnv } from '../app/server-deps.js';
import type { ServerLimits } from '../app/server-limits.js';
import { errorResponse } from '../error-response.js';
import { createTokenBucketLimiter } from './token-bucket.js';

/** The path whose body may be as large as `maxImportBytes`; every other body is bounded by `maxBodyBytes`. */
export const importPath = '/v1/import';

/** The most of a too-large body read and discarded before the 413 goes out (see {@link createBodyLimitMiddleware}). */
export const maxOverLimitDrainBytes = 64 * 1024 * 1024;

/**
 * Rejects a body over the limit with 413 `payload_too_large` before any handler reads it (by
 * Content-Length, or while streaming). The rest of the body is read and discarded first, up to
 * {@link maxOverLimitDrainBytes}: a client that is still sending when the server answers and closes gets
 * a reset (Node's HTTP client reports EPIPE and never sees the 413). A body past that bound gets the 413
 * with `Connection: close` at once, since the connection cannot carry another request.
 */
export function createBodyLimitMiddleware(limits: ServerLimits): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const maxSize = c.req.path === importPath ? limits.maxImportBytes : limits.maxBodyBytes;
    // The fetch types leave a body's chunks as any; a request body's chunks are bytes.
    const body = c.req.raw.body as ReadableStream<Uint8Array> | null;
    if (body === null) return next();
    const tooLarge = (drained: boolean) =>
      errorResponse(c, 'payload_too_large', `the request body is over the limit of ${maxSize} bytes`, {
        details: { limit: maxSize },
        ...(drained ? {} : { headers: { Connection: 'close' } }),
      });
    const declared = c.req.raw.headers.get('content-length');
    if (declared !== null && !c.req.raw.headers.has('transfer-encoding')) {
      const length = Number.parseInt(declared, 10);
      if (!(length > maxSize)) return next();
      return tooLarge(
        length <= maxOverLimitDrainBytes && (await readToEnd(body.getReader(), maxOverLimitDrainBytes, 0)),
      );
    }
    // A streamed body: read it here, up to the limit, and hand the handler what was read.
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      let step: Awaited<ReturnType<typeof reader.read>>;
      try {
        step = await reader.read();
      } catch {
        return tooLarge(false);
      }
      if (step.done) break;
      size += step.value.byteLength;
      if (size > maxSize) return tooLarge(await readToEnd(reader, maxOverLimitDrainBytes, size));
      chunks.push(step.value);
    }
    const whole = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      whole.set(chunk, offset);
      offset += chunk.byteLength;
    }
    c.req.raw = new Request(c.req.raw, { body: whole });
    return next();
  };
}

/** Reads a body to its end and drops it; false when it runs past `maxBytes` in all (counting `alreadyRead`) or cannot be read. */
async function readToEnd(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  alreadyRead: number,
): Promise<boolean> {
  let total = alreadyRead;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return false;
      }
    }
  } catch {
    return false;
  }
}

/**
 * Reads and discards the body of any request answered without reading it — a refusal (401, 404, 415,
 * 429, 503, …) or a route that takes none — before the answer goes out, when the body is within
 * `maxDrainBytes`: the connection then stays usable for the client's next request. A larger body (or
 * one that cannot be read) gets `Connection: close` instead. Closing with the body still arriving is
 * what must be avoided for bodies a client may legitimately send: the kernel answers the unread bytes
 * with a reset, which can reach the client before it has read the answer (a "dropped connection").
 */
export function createUnreadBodyMiddleware(maxDrainBytes: number): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    await next();
    const declaredLength = Number(c.req.header('content-length') ?? 0);
    const declaresBody = c.req.header('transfer-encoding') !== undefined || declaredLength > 0;
    if (!declaresBody || c.req.raw.bodyUsed) return;
    if (declaredLength <= maxDrainBytes && (await discardBody(c.req.raw, maxDrainBytes))) return;
    c.header('Connection', 'close');
  };
}

/** Reads a request's body to its end and drops it; false when it is over `maxBytes` or cannot be read. */
async function discardBody(request: Request, maxBytes: number): Promise<boolean> {
  if (request.body === null) return true;
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = request.body.getReader();
  } catch {
    return false;
  }
  return readToEnd(reader, maxBytes, 0);
}

/**
 * Rate-limits per API key with a token bucket (all keyless requests share one bucket): over the rate, a
 * request gets 429 `rate_limited` with `Retry-After` in seconds. `keyOf` names the bucket of a request.
 */
export function createRateLimitMiddleware(
  limits: ServerLimits,
  keyOf: (authorization: string | undefined) => string,
  now: () => number,
): MiddlewareHandler<ServerEnv> {
  if (limits.rateLimit === false) return (_c, next) => next();
  const limiter = createTokenBucketLimiter(limits.rateLimit, now);
  const { requestsPerSecond } = limits.rateLimit;
  return async (c, next) => {
    const decision = limiter.take(keyOf(c.req.header('authorization')));
    if (decision.allowed) return next();
    return errorResponse(
      c,
      'rate_limited',
      `too many requests for this API key (limit ${requestsPerSecond}/s); retry after ${decision.retryAfterSeconds} s`,
      {
        details: { retryAfterSeconds: decision.retryAfterSeconds },
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      },
    );
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
      return errorResponse(
        c,
        'unavailable',
        `the server is handling ${maxConcurrentRequests} requests, its limit; retry after 1 s`,
        {
          details: { retryAfterSeconds: 1, maxConcurrentRequests },
          headers: { 'Retry-After': '1' },
        },
      );
    }
    inFlight += 1;
    try {
      await next();
    } finally {
      inFlight -= 1;
    }
  };
}
