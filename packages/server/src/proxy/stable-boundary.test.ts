import type { BuiltContext } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { stableBoundary } from './stable-boundary.js';

function context(messageCount: number, stableCount: number): BuiltContext {
  return {
    messages: Array.from({ length: messageCount }, (_, index) => ({ role: 'user' as const, content: `m${index}` })),
    report: {
      parts: [],
      stable: { messageCount: stableCount, tokens: stableCount * 10 },
    } as unknown as BuiltContext['report'],
  };
}

describe('stableBoundary', () => {
  it("is the report's stable prefix, never past the context's end", () => {
    expect(stableBoundary(context(6, 4))).toBe(4);
    expect(stableBoundary(context(3, 0))).toBe(0);
    expect(stableBoundary(context(2, 5))).toBe(2);
  });
});
