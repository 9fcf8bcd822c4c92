import { describe, expect, it } from 'vitest';
import { createRepeatThrottle, repeatKeyOf } from './repeat-throttle.js';

describe('createRepeatThrottle', () => {
  it('logs a repeated failure once per interval, with the count left out, and a new one at once', () => {
    let now = 0;
    const throttle = createRepeatThrottle(10_000, () => now);
    expect(throttle.take('disk full')).toEqual({ log: true, suppressed: 0 });
    for (let step = 0; step < 99; step += 1) {
      now += 100;
      expect(throttle.take('disk full').log).toBe(false);
    }
    expect(throttle.take('locked')).toEqual({ log: true, suppressed: 0 });
    now = 10_000;
    expect(throttle.take('disk full')).toEqual({ log: true, suppressed: 99 });
    expect(throttle.take('disk full').log).toBe(false);
  });
});

describe('repeatKeyOf', () => {
  it('gives retries of one fault the same key whatever ids and numbers their messages carry', () => {
    const first = Object.assign(
      new Error('leasing a job failed after 105 ms (job 3f0c2a7e-1d2b-4c5d-8e9f-0a1b2c3d4e5f)'),
      {
        code: 'unavailable',
      },
    );
    const again = Object.assign(
      new Error('leasing a job failed after 212 ms (job 9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d)'),
      {
        code: 'unavailable',
      },
    );
    expect(repeatKeyOf(first)).toBe(repeatKeyOf(again));
    expect(repeatKeyOf(first)).not.toBe(
      repeatKeyOf(Object.assign(new Error('leasing a job failed after 105 ms'), { code: 'storage_failed' })),
    );
  });
});
