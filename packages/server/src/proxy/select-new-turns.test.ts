import type { Message, MessageInput } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { selectNewTurns } from './select-new-turns.js';

function stored(...turns: MessageInput[]): Message[] {
  return turns.map((turn, index) => ({
    id: `m${index + 1}`,
    seq: index + 1,
    role: turn.role,
    content: turn.content,
    name: undefined,
    toolCalls: turn.toolCalls,
    toolCallId: turn.toolCallId,
    createdAt: '2030-01-01T00:00:00.000Z',
    metadata: undefined,
    idempotencyKey: undefined,
    tokens: 10,
  }));
}

const user = (content: string): MessageInput => ({ role: 'user', content });
const assistant = (content: string): MessageInput => ({ role: 'assistant', content });

describe('selectNewTurns', () => {
  it('keeps only what follows the stored tail when the client re-sends its whole history', () => {
    const history = stored(user('a'), assistant('b'), user('c'), assistant('d'));

    expect(selectNewTurns(history, [user('a'), assistant('b'), user('c'), assistant('d'), user('e')])).toEqual({
      turns: [user('e')],
      matched: 4,
      alignment: 'tail',
    });
  });

  it('aligns a history the client cut short (a sliding window), and ignores trailing whitespace changes', () => {
    const history = stored(user('a'), assistant('b'), user('c'), assistant('d  \n'));

    expect(selectNewTurns(history, [user('c'), assistant('d'), user('e')])).toMatchObject({
      turns: [user('e')],
      matched: 2,
      alignment: 'tail',
    });
  });

  it('appends everything when the client sends only the new turn, even if the same words were said before', () => {
    const history = stored(user('ok'), assistant('fine'), user('thanks'), assistant('welcome'));

    expect(selectNewTurns(history, [user('ok')])).toEqual({ turns: [user('ok')], matched: 0, alignment: 'none' });
  });

  it('treats a repeat of the stored tail as a retry', () => {
    const history = stored(user('a'), assistant('b'), user('c'));

    expect(selectNewTurns(history, [user('c')])).toMatchObject({ turns: [], alignment: 'tail' });
  });

  it('recognizes a regenerated or edited history by two or more turns in a row, and keeps what diverges', () => {
    const history = stored(user('a'), assistant('b'), user('c'), assistant('d'));

    expect(selectNewTurns(history, [user('a'), assistant('b'), user('c')])).toMatchObject({
      turns: [],
      matched: 3,
      alignment: 'resent',
    });
    expect(selectNewTurns(history, [user('a'), assistant('b'), user('c, edited')])).toMatchObject({
      turns: [user('c, edited')],
      matched: 2,
      alignment: 'resent',
    });
    // A single matching turn is not enough evidence.
    expect(selectNewTurns(history, [user('a'), user('x')])).toMatchObject({
      turns: [user('a'), user('x')],
      alignment: 'none',
    });
  });

  it('compares tool calls and tool-call ids, not only text', () => {
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } };
    const history = stored(user('weather?'), { role: 'assistant', content: '', toolCalls: [call] });

    expect(
      selectNewTurns(history, [
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', content: 'rain', toolCallId: 'call_1' },
      ]),
    ).toMatchObject({
      turns: [{ role: 'tool', content: 'rain', toolCallId: 'call_1' }],
      alignment: 'tail',
    });
    expect(
      selectNewTurns(history, [{ role: 'assistant', content: '', toolCalls: [{ ...call, id: 'call_2' }] }]),
    ).toMatchObject({
      matched: 0,
      alignment: 'none',
    });
  });

  it('appends everything to an empty conversation and nothing for no turns', () => {
    expect(selectNewTurns([], [user('a'), assistant('b')])).toMatchObject({
      turns: [user('a'), assistant('b')],
      alignment: 'none',
    });
    expect(selectNewTurns(stored(user('a')), [])).toEqual({ turns: [], matched: 0, alignment: 'none' });
  });
});
