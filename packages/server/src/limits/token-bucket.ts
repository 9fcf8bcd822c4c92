import type { RateLimit } from '../app/server-limits.js';

/** The answer of a {@link TokenBucketLimiter}: go ahead, or wait this many seconds. */
export type RateDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

/** One token bucket per key: each request takes a token; tokens refill at a steady rate up to the burst. */
export interface TokenBucketLimiter {
  take(key: string): RateDecision;
}

/**
 * Creates a limiter. Buckets start full (`burst` tokens) and refill `requestsPerSecond` per second,
 * measured with `now` (epoch ms; injectable so tests never sleep). `retryAfterSeconds` is the whole
 * seconds until one token is back, at least 1.
 */
export function createTokenBucketLimiter(limit: RateLimit, now: () => number = Date.now): TokenBucketLimiter {
  const buckets = new Map<string, { tokens: number; updatedAtMs: number }>();
  return {
    take(key) {
      const time = now();
      const bucket = buckets.get(key) ?? { tokens: limit.burst, updatedAtMs: time };
      const refilled = Math.min(
        limit.burst,
        bucket.tokens + (Math.max(0, time - bucket.updatedAtMs) / 1000) * limit.requestsPerSecond,
      );
      if (refilled >= 1) {
        buckets.set(key, { tokens: refilled - 1, updatedAtMs: time });
        return { allowed: true };
      }
      buckets.set(key, { tokens: refilled, updatedAtMs: time });
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - refilled) / limit.requestsPerSecond)) };
    },
  };
}
