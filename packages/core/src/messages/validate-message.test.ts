import { describe, expect, it } from 'vitest';
import { isMemoryError, MemoryError } from '../errors/memory-error.js';
import { checkToolSequence } from './check-tool-sequence.js';
import { maxMetadataDepth } from './copy-metadata.js';
import { resolveScope } from './scope.js';
import { defaultMessageLimits, validateMessageInput } from './validate-message.js';

function rejection(run: () => unknown): MemoryError {
  try {
    run();
  } catch (error) {
    if (isMemoryError(error)) return error;
    throw error;
  }
  throw new Error('expected a MemoryError');
}

const call = { id: 'call_1', type: 'function' as const, function: { name: 'weather', arguments: '{}' } };

describe('validateMessageInput', () => {
  it('accepts each role and keeps only the fields given', () => {
    expect(validateMessageInput({ role: 'user', content: 'hi' })).toEqual({ role: 'user', content: 'hi' });
    expect(validateMessageInput({ role: 'assistant', content: '', toolCalls: [call] })).toMatchObject({
      toolCalls: [call],
    });
    expect(validateMessageInput({ role: 'tool', content: '{}', toolCallId: 'call_1' })).toMatchObject({
      toolCallId: 'call_1',
    });
    expect(validateMessageInput({ role: 'system', content: 'be brief', name: 'ops' })).toMatchObject({ name: 'ops' });
  });

  it('names the role and the allowed ones when the role is unknown', () => {
    const error = rejection(() => validateMessageInput({ role: 'robot', content: 'x' }));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain('"robot"');
    expect(error.message).toContain('system, user, assistant, tool');
  });

  it('rejects empty or blank content except on an assistant tool call', () => {
    expect(rejection(() => validateMessageInput({ role: 'user', content: '' })).message).toContain(
      'content must not be empty',
    );
    expect(rejection(() => validateMessageInput({ role: 'user', content: ' \n\t' })).message).toContain(
      'must not be empty',
    );
    expect(rejection(() => validateMessageInput({ role: 'assistant', content: '' })).code).toBe('invalid_input');
    expect(validateMessageInput({ role: 'assistant', toolCalls: [call] }).content).toBe('');
  });

  it('rejects content over the configured limit with the sizes in details', () => {
    const limits = { ...defaultMessageLimits, maxContentChars: 10 };
    const error = rejection(() => validateMessageInput({ role: 'user', content: 'x'.repeat(11) }, limits));
    expect(error.details).toMatchObject({ field: 'content', length: 11, limit: 10 });
    expect(validateMessageInput({ role: 'user', content: 'x'.repeat(10) }, limits).content).toHaveLength(10);
  });

  it('rejects malformed tool calls and misplaced tool fields', () => {
    const bad = [
      { role: 'assistant', content: '', toolCalls: [] },
      { role: 'assistant', content: '', toolCalls: [{ id: 'a', function: { name: 'f' } }] },
      { role: 'assistant', content: '', toolCalls: [call, call] },
      { role: 'user', content: 'x', toolCalls: [call] },
      { role: 'tool', content: 'result' },
      { role: 'user', content: 'x', toolCallId: 'call_1' },
      { role: 'user', content: 'x', createdAt: 'yesterday-ish' },
      { role: 'user', content: 'x', metadata: [1, 2] },
      { role: 'user', content: 'nul \u0000 inside' },
      'not an object',
      null,
    ];
    for (const input of bad) expect(rejection(() => validateMessageInput(input)).code).toBe('invalid_input');
  });

  it('says which message of a batch is wrong', () => {
    expect(
      rejection(() => validateMessageInput({ role: 'user', content: '' }, defaultMessageLimits, 3)).message,
    ).toMatch(/^message 3:/);
  });

  it('normalizes createdAt to ISO 8601 UTC', () => {
    expect(validateMessageInput({ role: 'user', content: 'x', createdAt: '2024-05-08T13:56:00+02:00' }).createdAt).toBe(
      '2024-05-08T11:56:00.000Z',
    );
  });
});

describe('checkToolSequence', () => {
  const assistant = { role: 'assistant' as const, toolCalls: [call, { ...call, id: 'call_2' }] };

  it('accepts results that answer the open calls of the message before, in any order', () => {
    expect(() =>
      checkToolSequence(
        [assistant],
        [
          { role: 'tool', toolCallId: 'call_2' },
          { role: 'tool', toolCallId: 'call_1' },
        ],
      ),
    ).not.toThrow();
    expect(() => checkToolSequence([], [assistant, { role: 'tool', toolCallId: 'call_1' }])).not.toThrow();
  });

  it('rejects a result with no open call, a repeated result, and a result after another turn', () => {
    expect(() => checkToolSequence([], [{ role: 'tool', toolCallId: 'call_1' }])).toThrow(MemoryError);
    expect(() =>
      checkToolSequence([assistant, { role: 'tool', toolCallId: 'call_1' }], [{ role: 'tool', toolCallId: 'call_1' }]),
    ).toThrow(/does not answer an open tool call/);
    expect(() => checkToolSequence([assistant, { role: 'user' }], [{ role: 'tool', toolCallId: 'call_2' }])).toThrow(
      MemoryError,
    );
  });
});

describe('resolveScope', () => {
  it('fills the default tenant and user', () => {
    expect(resolveScope({ conversationId: 'node-7' })).toEqual({
      tenantId: 'default',
      userId: 'default',
      conversationId: 'node-7',
    });
  });

  it('rejects empty, overlong and control-character ids', () => {
    expect(() => resolveScope({ conversationId: '' })).toThrow(MemoryError);
    expect(() => resolveScope({ conversationId: 'x'.repeat(257) })).toThrow(MemoryError);
    expect(() => resolveScope({ conversationId: 'a\nb' })).toThrow(MemoryError);
    expect(() => resolveScope({ tenantId: '  ', conversationId: 'c' })).toThrow(MemoryError);
  });

  it('rejects ids that are not printable text: C1 controls, U+FFFD left by bad UTF-8, unpaired surrogates', () => {
    for (const id of ['a\u0085b', 'node-\uFFFD', 'x\uD800', '\uDC00y', 'a\uDC00\uD800b']) {
      const error = rejection(() => resolveScope({ conversationId: id }));
      expect(error.code).toBe('invalid_input');
      expect(error.details).toEqual({ field: 'conversationId' });
    }
    expect(rejection(() => resolveScope({ userId: 'u\uFFFD', conversationId: 'c' })).details).toEqual({
      field: 'userId',
    });
    expect(resolveScope({ conversationId: 'nœud-📡-7' }).conversationId).toBe('nœud-📡-7');
  });
});

describe('validateMessageInput: metadata depth', () => {
  const nested = (levels: number): Record<string, unknown> => {
    let value: Record<string, unknown> = {};
    for (let level = 1; level < levels; level += 1) value = { inner: value };
    return value;
  };

  it('accepts metadata nested up to the limit and refuses deeper nesting with invalid_input', () => {
    expect(validateMessageInput({ role: 'user', content: 'x', metadata: nested(maxMetadataDepth) }).metadata).toEqual(
      nested(maxMetadataDepth),
    );
    const error = rejection(() =>
      validateMessageInput({ role: 'user', content: 'x', metadata: nested(maxMetadataDepth + 1) }),
    );
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain(`nested deeper than ${maxMetadataDepth} levels`);
    expect(error.details).toMatchObject({ depth: maxMetadataDepth + 1, limit: maxMetadataDepth });
  });

  it('refuses metadata nested 1,000 deep in arrays without overflowing the stack', () => {
    let value: unknown = 1;
    for (let level = 0; level < 1_000; level += 1) value = [value];
    const error = rejection(() => validateMessageInput({ role: 'user', content: 'x', metadata: { deep: value } }));
    expect(error.details).toMatchObject({ depth: 1_001 });
  });
});
