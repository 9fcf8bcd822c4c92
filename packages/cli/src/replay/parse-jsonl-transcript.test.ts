import { describe, expect, it } from 'vitest';
import { parseJsonlTranscript } from './parse-jsonl-transcript.js';

const lines = (...values: string[]) => values.join('\n');

describe('parseJsonlTranscript', () => {
  it('returns the messages in order and ignores blank lines', () => {
    const text = lines(
      '{"role":"user","content":"node 7 online?","createdAt":"2025-05-29T02:41:05Z"}',
      '',
      '   ',
      '{"role":"assistant","content":"Yes.","name":"meshbot","metadata":{"channel":2}}',
      '',
    );

    expect(parseJsonlTranscript(text, 't.jsonl')).toEqual([
      { role: 'user', content: 'node 7 online?', createdAt: '2025-05-29T02:41:05.000Z' },
      { role: 'assistant', content: 'Yes.', name: 'meshbot', metadata: { channel: 2 } },
    ]);
  });

  it('accepts Windows line endings', () => {
    expect(
      parseJsonlTranscript('{"role":"user","content":"a"}\r\n{"role":"assistant","content":"b"}\r\n', 't.jsonl'),
    ).toHaveLength(2);
  });

  it('names the file and the line of a line that is not JSON', () => {
    const text = lines('{"role":"user","content":"a"}', '', '{"role":"assistant",');

    expect(() => parseJsonlTranscript(text, 'chat.jsonl')).toThrow(/^chat\.jsonl line 3: is not valid JSON/);
  });

  it('names the line and the role of a message with an unknown role', () => {
    const text = lines('{"role":"user","content":"a"}', '{"role":"bot","content":"b"}');

    expect(() => parseJsonlTranscript(text, 'chat.jsonl')).toThrow(
      'chat.jsonl line 2: role must be one of system, user, assistant, tool (got "bot")',
    );
  });

  it('names the line of a message with empty content', () => {
    expect(() => parseJsonlTranscript('{"role":"user","content":"  "}', 'chat.jsonl')).toThrow(
      'chat.jsonl line 1: content must not be empty',
    );
  });

  it('names the line of a line that is not an object', () => {
    expect(() => parseJsonlTranscript('[1,2]', 'chat.jsonl')).toThrow('chat.jsonl line 1: message must be an object');
  });

  it('names the line of a tool result that answers no call', () => {
    const text = lines('{"role":"user","content":"a"}', '', '{"role":"tool","content":"42","toolCallId":"call-1"}');

    expect(() => parseJsonlTranscript(text, 'chat.jsonl')).toThrow(
      /^chat\.jsonl line 3: tool result "call-1" does not answer/,
    );
  });

  it('accepts a tool call followed by its result', () => {
    const text = lines(
      '{"role":"user","content":"battery?"}',
      '{"role":"assistant","content":"","toolCalls":[{"id":"c1","type":"function","function":{"name":"battery","arguments":"{}"}}]}',
      '{"role":"tool","content":"3.9 V","toolCallId":"c1"}',
      '{"role":"assistant","content":"3.9 V"}',
    );

    expect(parseJsonlTranscript(text, 't.jsonl').map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('carries the line number in the error details', () => {
    let details: unknown;
    try {
      parseJsonlTranscript(lines('{"role":"user","content":"a"}', '{"role":"user"}'), 'x.jsonl');
    } catch (error) {
      details = (error as { details?: unknown }).details;
    }
    expect(details).toMatchObject({ file: 'x.jsonl', line: 2, field: 'content' });
  });
});
