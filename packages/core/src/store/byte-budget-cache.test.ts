import { describe, expect, it } from 'vitest';
import { ByteBudgetCache } from './byte-budget-cache.js';

describe('byte budget cache', () => {
  it('forgets the least recently put values past the budget, keeps the newest even alone over it, and counts a value that grew at its next put', () => {
    const cache = new ByteBudgetCache<{ bytes: number }>(100);
    const a = { bytes: 40 };
    const b = { bytes: 40 };
    cache.put('a', a);
    cache.put('b', b);
    expect(cache.bytes).toBe(80);
    // Reading does not make a value more recent; putting does.
    expect(cache.get('a')).toBe(a);
    cache.put('a', a);
    cache.put('c', { bytes: 30 });
    expect([cache.get('a'), cache.get('b'), cache.bytes]).toEqual([a, undefined, 70]);
    a.bytes = 90;
    cache.put('a', a);
    expect([cache.get('c'), cache.bytes]).toEqual([undefined, 90]);
    cache.put('huge', { bytes: 500 });
    expect([cache.get('a'), cache.get('huge')?.bytes, cache.bytes]).toEqual([undefined, 500, 500]);
    cache.delete('huge');
    cache.delete('missing');
    expect(cache.bytes).toBe(0);
  });
});
