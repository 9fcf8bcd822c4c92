import { describe, expect, it } from 'vitest';
import { isMemoryError } from '../errors/memory-error.js';
import { namedUserOf, ownerOf } from './scope.js';

describe('namedUserOf and ownerOf: the one rule of who the user is', () => {
  it('takes the one user named, wherever it is named, and ignores places that name none', () => {
    expect(
      namedUserOf([
        { where: 'the header', userId: undefined },
        { where: 'the body', userId: 'alice' },
      ]),
    ).toBe('alice');
    expect(
      namedUserOf([
        { where: 'the header', userId: 'alice' },
        { where: 'the body', userId: 'alice' },
      ]),
    ).toBe('alice');
    expect(
      namedUserOf([
        { where: 'the header', userId: '' },
        { where: 'the body', userId: undefined },
      ]),
    ).toBeUndefined();
  });

  it('refuses two different users with invalid_input naming both ids and both places', () => {
    let thrown: unknown;
    try {
      namedUserOf([
        { where: 'the X-Mnemo-User header', userId: 'alice' },
        { where: "the body's user", userId: 'bob' },
      ]);
    } catch (error) {
      thrown = error;
    }
    expect(isMemoryError(thrown) && thrown.code).toBe('invalid_input');
    const message = (thrown as Error).message;
    for (const part of ['"alice"', '"bob"', 'the X-Mnemo-User header', "the body's user"])
      expect(message).toContain(part);
  });

  it('owner: the named user, else the conversation as its own user, else default; the tenant as given', () => {
    expect(ownerOf('t1', [{ where: 'q', userId: 'alice' }], 'node-7')).toEqual({ tenantId: 't1', userId: 'alice' });
    expect(ownerOf('t1', [{ where: 'q', userId: undefined }], 'node-7')).toEqual({ tenantId: 't1', userId: 'node-7' });
    expect(ownerOf(undefined, [])).toEqual({ tenantId: 'default', userId: 'default' });
  });

  it('validates the id it settles on', () => {
    expect(() => ownerOf('t1', [{ where: 'q', userId: 'a\u0000b' }])).toThrow(/control characters/);
  });
});
