import type { BuiltContext, ContextPart } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { stableBoundary } from './stable-boundary.js';

function context(roles: readonly string[], parts: readonly ContextPart['kind'][]): BuiltContext {
  return {
    messages: roles.map((role, index) => ({ role: role as 'user', content: `m${index}` })),
    report: { parts: parts.map((kind) => ({ kind, tokens: 1, messageCount: 1 })) } as unknown as BuiltContext['report'],
  };
}

describe('stableBoundary', () => {
  it('ends before the recalled snippets, which stand right before the newest user turn', () => {
    expect(stableBoundary(context(['system', 'system', 'user', 'assistant', 'system', 'user'], ['system', 'summary', 'recent', 'recalled']))).toBe(4);
  });

  it('ends before the newest user turn without recalled snippets, tool turns after it included', () => {
    expect(stableBoundary(context(['system', 'user', 'assistant', 'user', 'assistant', 'tool'], ['system', 'recent']))).toBe(3);
    expect(stableBoundary(context(['system', 'assistant', 'tool'], ['system', 'recent']))).toBe(3);
  });
});
