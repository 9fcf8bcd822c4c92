import { describe, expect, it } from 'vitest';
import { bearerToken, createApiKeyMatcher } from './api-key-auth.js';

describe('createApiKeyMatcher', () => {
  const match = createApiKeyMatcher([
    { key: 'alpha-key-0001', tenantId: 'alpha' },
    { key: 'beta-key-0002', tenantId: 'beta' },
  ]);

  it('returns the tenant of an exact key and nothing for prefixes, extensions or case changes', () => {
    expect(match('alpha-key-0001')?.tenantId).toBe('alpha');
    expect(match('beta-key-0002')?.tenantId).toBe('beta');
    for (const wrong of ['alpha-key-000', 'alpha-key-00011', 'ALPHA-KEY-0001', '', 'beta-key-0002 '])
      expect(match(wrong)).toBeUndefined();
  });

  it('rejects an empty key, a repeated key and an invalid tenant id', () => {
    expect(() => createApiKeyMatcher([{ key: ' ', tenantId: 't' }])).toThrow(
      /auth\.keys\[0\]\.key must be a non-empty string/,
    );
    expect(() =>
      createApiKeyMatcher([
        { key: 'k', tenantId: 'a' },
        { key: 'k', tenantId: 'b' },
      ]),
    ).toThrow(/auth\.keys\[1\] repeats a key/);
    expect(() => createApiKeyMatcher([{ key: 'k', tenantId: 'bad\nid' }])).toThrow(
      /tenantId must not contain control characters/,
    );
  });
});

describe('bearerToken', () => {
  it('reads the key of a Bearer header only', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
