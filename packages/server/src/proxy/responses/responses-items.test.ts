import type { Message } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { readResponsesItems, toResponsesInput } from './responses-items.js';

const storedReply = {
  id: 'm-2',
  role: 'assistant',
  content: 'Looking it up.',
  toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"node":7}' } }],
  metadata: { proxy: { ids: ['resp_1', 'msg_1', 'fc_1'] } },
} as unknown as Message;

describe('readResponsesItems', () => {
  it('makes an assistant message and its function calls one turn, and a function_call_output a tool turn', () => {
    const { system, turns } = readResponsesItems(
      [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Node 7?' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking it up.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"node":7}' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call_output', call_id: 'call_1', output: '3 hops' },
      ],
      'input',
    );

    expect(system).toEqual(['Be brief.']);
    expect(turns).toEqual([
      { role: 'user', content: 'Node 7?' },
      { role: 'assistant', content: 'Looking it up.', toolCalls: [storedReply.toolCalls![0]] },
      { role: 'tool', toolCallId: 'call_1', content: '3 hops' },
    ]);
  });

  it('resolves references to one stored reply into one turn, even with its function calls sent in full', () => {
    const resolve = (id: string) => (['msg_1', 'fc_1'].includes(id) ? storedReply : undefined);
    const { turns } = readResponsesItems(
      [
        { role: 'user', content: 'Node 7?' },
        { type: 'item_reference', id: 'msg_1' },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"node": 7}' },
        { type: 'function_call_output', call_id: 'call_1', output: '3 hops' },
      ],
      'input',
      resolve,
    );

    expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant', 'tool']);
    expect(turns[1]).toEqual({ role: 'assistant', content: 'Looking it up.', toolCalls: storedReply.toolCalls });
    expect(() => readResponsesItems([{ type: 'item_reference', id: 'msg_9' }], 'input', resolve)).toThrow(
      /body\.input\[0\]: item "msg_9"/,
    );
  });

  it('refuses what mnemo cannot store: images, unknown item types, a call without its id', () => {
    expect(() =>
      readResponsesItems([{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }], 'input'),
    ).toThrow(/input_image/);
    expect(() => readResponsesItems([{ type: 'web_search_call', id: 'ws_1' }], 'input')).toThrow(/web_search_call/);
    expect(() => readResponsesItems([{ type: 'function_call', name: 'lookup', arguments: '{}' }], 'input')).toThrow(
      /call_id/,
    );
  });
});

describe('toResponsesInput', () => {
  it('writes tool calls as function_call items after their message, and results as function_call_output', () => {
    expect(
      toResponsesInput([
        { role: 'assistant', content: '', toolCalls: storedReply.toolCalls! },
        { role: 'tool', content: '3 hops', toolCallId: 'call_1' },
      ]),
    ).toEqual([
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"node":7}' },
      { type: 'function_call_output', call_id: 'call_1', output: '3 hops' },
    ]);
  });
});
