import { MemoryError } from '@mnemo/core';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { exitCodeFor, reportError } from './report-error.js';

function capture(error: unknown): { code: number; text: string } {
  let text = '';
  const stderr = { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WritableStream;
  const code = reportError(error, stderr);
  return { code, text };
}

describe('reportError', () => {
  it('prints a MemoryError as one line and exits 2 for bad input', () => {
    const { code, text } = capture(new MemoryError('invalid_input', 'x.jsonl line 3: content must not be empty'));

    expect(code).toBe(2);
    expect(text).toBe('mnemo: x.jsonl line 3: content must not be empty\n');
  });

  it('exits 1 for run-time failures of storage and models', () => {
    expect(capture(new MemoryError('storage_failed', 'disk full')).code).toBe(1);
    expect(exitCodeFor('model_failed')).toBe(1);
    expect(exitCodeFor('unavailable')).toBe(1);
    expect(exitCodeFor('not_found')).toBe(2);
  });

  it('describes a missing file without a stack trace', () => {
    const error = Object.assign(new Error("ENOENT: no such file or directory, open '/tmp/nope.jsonl'"), {
      code: 'ENOENT',
      path: '/tmp/nope.jsonl',
      syscall: 'open',
    });

    const { code, text } = capture(error);

    expect(code).toBe(2);
    expect(text).toBe('mnemo: cannot read /tmp/nope.jsonl: no such file\n');
  });

  it('prints the stack of an unexpected error, because it is a bug', () => {
    const { code, text } = capture(new TypeError('cannot read properties of undefined'));

    expect(code).toBe(1);
    expect(text).toContain('a bug in mnemo');
    expect(text).toContain('TypeError: cannot read properties of undefined\n    at ');
  });

  it('exits 0 after help and 2 after a usage error commander printed', () => {
    expect(capture(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'))).toEqual({ code: 0, text: '' });
    expect(capture(new CommanderError(1, 'commander.unknownOption', "error: unknown option '--x'"))).toEqual({
      code: 2,
      text: '',
    });
  });
});
