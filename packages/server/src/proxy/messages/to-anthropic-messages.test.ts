import type { BuiltContext, ContextPart } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { toAnthropicContext } from './to-anthropic-messages.js';

function built(
  messages: BuiltContext['messages'],
  parts: readonly ContextPart['kind'][],
  stableCount: number,
): BuiltContext {
  return {
    messages,
    report: {
      parts: parts.map((kind) => ({ kind, tokens: 1, messageCount: 1 })),
      stable: { messageCount: stableCount, tokens: 0 },
    } as unknown as BuiltContext['report'],
  };
}

const call = { id: 'toolu_1', type: 'function' as const, function: { name: 'lookup', arguments: '{"node": 7}' } };

describe('toAnthropicContext', () => {
  it('puts leading system messages in system, recalled snippets in the newest user turn, tool results in user turns, with three breakpoints', () => {
    const context = built(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Known facts: callsign K7X.' },
        { role: 'user', content: 'Check node 7.' },
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', content: '3 hops', toolCallId: 'toolu_1' },
        { role: 'assistant', content: 'Node 7 is 3 hops away.' },
        { role: 'system', content: 'Earlier: node 7 was down on Monday.' },
        { role: 'user', content: 'And node 8?' },
      ],
      ['system', 'facts', 'recent', 'recalled'],
      6,
    );

    const { system, messages } = toAnthropicContext(context);

    expect(system).toEqual([
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Known facts: callsign K7X.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Check node 7.' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { node: 7 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3 hops' }] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Node 7 is 3 hops away.', cache_control: { type: 'ephemeral' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Earlier: node 7 was down on Monday.' },
          { type: 'text', text: 'And node 8?' },
        ],
      },
    ]);
  });

  it("keeps within Anthropic's four breakpoints, the stable part's first, when the client's tools hold some", () => {
    const context = built(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Summary so far.' },
        { role: 'user', content: 'One?' },
        { role: 'assistant', content: 'One.' },
        { role: 'user', content: 'Two?' },
      ],
      ['system', 'summary', 'recent'],
      4,
    );

    const { system, messages } = toAnthropicContext(context, 3);

    expect(messages[1]!.content[0]).toHaveProperty('cache_control');
    expect(system.filter((block) => block.cache_control !== undefined)).toHaveLength(0);
  });
});
