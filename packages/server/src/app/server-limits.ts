import { MemoryError } from '@mnemo/core';

/** A token bucket per API key: `requestsPerSecond` refill, up to `burst` requests at once. */
export interface RateLimit {
  readonly requestsPerSecond: number;
  readonly burst: number;
}

/** Limits the server enforces on every request before any handler runs. */
export interface ServerLimits {
  /** Largest request body, in bytes; a larger one gets 413 `payload_too_large`. Default 1 MiB. */
  readonly maxBodyBytes: number;
  /** Largest `POST /v1/import` body (JSONL), in bytes. Default 16 MiB. */
  readonly maxImportBytes: number;
  /** Most messages one append request may carry. Default 1,000. */
  readonly maxBatchMessages: number;
  /**
   * Per-key rate limit, or `false` for none. Default: with API keys, 50 requests/s per key with bursts of
   * 100 ({@link defaultKeyRateLimit}); without keys (a server that may listen on loopback only), none.
   */
  readonly rateLimit: RateLimit | false;
  /**
   * Requests handled at once, at most; one more is answered at once with 503 `unavailable` and
   * `Retry-After: 1` instead of queueing without bound (`/health` and `/metrics` are never refused).
   * Default 512.
   */
  readonly maxConcurrentRequests: number;
}

/** The per-key rate limit a server with API keys gets unless its limits say otherwise. */
export const defaultKeyRateLimit: RateLimit = Object.freeze({ requestsPerSecond: 50, burst: 100 });

/** The limits used for every field left out (`rateLimit` of a server with API keys; without keys it is `false`). */
export const defaultServerLimits: ServerLimits = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxImportBytes: 16 * 1024 * 1024,
  maxBatchMessages: 1000,
  rateLimit: defaultKeyRateLimit,
  maxConcurrentRequests: 512,
});

/**
 * Fills defaults and checks every limit once; throws `invalid_input` naming the field. `apiKeyCount`
 * picks the default rate limit: none without keys, {@link defaultKeyRateLimit} with them.
 */
export function resolveServerLimits(limits: Partial<ServerLimits> = {}, apiKeyCount = 0): ServerLimits {
  const merged = { ...defaultServerLimits, ...(apiKeyCount === 0 ? { rateLimit: false as const } : {}), ...limits };
  checkPositive('maxConcurrentRequests', merged.maxConcurrentRequests, true);
  checkPositive('maxBodyBytes', merged.maxBodyBytes, true);
  checkPositive('maxImportBytes', merged.maxImportBytes, true);
  checkPositive('maxBatchMessages', merged.maxBatchMessages, true);
  if (merged.rateLimit !== false) {
    checkPositive('rateLimit.requestsPerSecond', merged.rateLimit.requestsPerSecond, false);
    checkPositive('rateLimit.burst', merged.rateLimit.burst, true);
  }
  return Object.freeze({
    ...merged,
    rateLimit: merged.rateLimit === false ? false : Object.freeze({ ...merged.rateLimit }),
  });
}

function checkPositive(field: string, value: unknown, integer: boolean): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new MemoryError(
      'invalid_input',
      `limits.${field} must be a positive ${integer ? 'integer' : 'number'} (got ${JSON.stringify(value)})`,
      {
        details: { field: `limits.${field}` },
      },
    );
  }
}
