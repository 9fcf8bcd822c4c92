import { describe, expect, it } from 'vitest';
import { createTokenBucketLimiter } from './token-bucket.js';

describe('createTokenBucketLimiter', () => {
  it('allows the burst at once, then one request per refilled token, per key', () => {
    let nowMs = 0;
    const limiter = createTokenBucketLimiter({ requestsPerSecond: 2, burst: 3 }, () => nowMs);

    expect([1, 2, 3, 4].map(() => limiter.take('a').allowed)).toEqual([true, true, true, false]);
    expect(limiter.take('b').allowed).toBe(true);
    nowMs = 499;
    expect(limiter.take('a')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    nowMs = 1000;
    // One second at 2/s brings back two tokens.
    expect([limiter.take('a').allowed, limiter.take('a').allowed, limiter.take('a').allowed]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('never stores more than the burst however long a key stays idle', () => {
    let nowMs = 0;
    const limiter = createTokenBucketLimiter({ requestsPerSecond: 10, burst: 2 }, () => nowMs);
    limiter.take('a');
    nowMs = 3_600_000;
    expect([limiter.take('a').allowed, limiter.take('a').allowed, limiter.take('a').allowed]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('rounds Retry-After up to whole seconds for slow rates', () => {
    const limiter = createTokenBucketLimiter({ requestsPerSecond: 0.1, burst: 1 }, () => 0);
    limiter.take('a');
    expect(limiter.take('a')).toEqual({ allowed: false, retryAfterSeconds: 10 });
  });
});
