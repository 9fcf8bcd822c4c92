import { createHash, timingSafeEqual } from 'node:crypto';
import { MemoryError, resolveUserScope } from '@mnemo/core';
import type { MiddlewareHandler } from 'hono';
import type { ServerEnv } from '../app/server-deps.js';
import { errorResponse } from '../error-response.js';

/** One API key and the tenant every request made with it acts for. */
export interface ApiKey {
  readonly key: string;
  readonly tenantId: string;
}

/** Who may call the server: with no keys, nobody needs one and every request acts for tenant `default`. */
export interface ServerAuth {
  readonly keys: readonly ApiKey[];
}

/** The tenant of requests when the server runs without API keys. */
export const keylessTenantId = 'default';

/** Finds the tenant of a presented key, comparing in constant time; `undefined` for an unknown key. */
export type ApiKeyMatcher = (presented: string) => ApiKey | undefined;

/**
 * Builds the matcher of the configured keys. Every comparison runs over SHA-256 digests (equal lengths)
 * with `timingSafeEqual`, and every key is compared on every call, so timing reveals neither a key's
 * length nor how much of it matched. Throws `invalid_input` for an empty key, a key listed twice or a
 * tenant id that is not a valid id.
 */
export function createApiKeyMatcher(keys: readonly ApiKey[]): ApiKeyMatcher {
  const seen = new Set<string>();
  const digests = keys.map((entry, index) => {
    if (typeof entry.key !== 'string' || entry.key.trim() === '') {
      throw new MemoryError('invalid_input', `auth.keys[${index}].key must be a non-empty string`, {
        details: { field: `auth.keys[${index}].key` },
      });
    }
    if (seen.has(entry.key))
      throw new MemoryError('invalid_input', `auth.keys[${index}] repeats a key`, {
        details: { field: `auth.keys[${index}].key` },
      });
    seen.add(entry.key);
    const { tenantId } = resolveUserScope({ tenantId: entry.tenantId });
    return { digest: sha256(entry.key), entry: Object.freeze({ key: entry.key, tenantId }) };
  });
  return (presented) => {
    const digest = sha256(presented);
    let match: ApiKey | undefined;
    for (const candidate of digests) {
      if (timingSafeEqual(candidate.digest, digest)) match = candidate.entry;
    }
    return match;
  };
}

/**
 * The auth middleware: sets `tenantId` from the `Authorization: Bearer <key>` header, or answers 401
 * `unauthorized` when keys are configured and the header is missing or the key unknown. With no keys
 * configured every request acts for {@link keylessTenantId}. The tenant never comes from the request.
 */
export function createAuthMiddleware(auth: ServerAuth): {
  middleware: MiddlewareHandler<ServerEnv>;
  keyOf: (header: string | undefined) => string;
} {
  const match = createApiKeyMatcher(auth.keys);
  const required = auth.keys.length > 0;
  const challenge = { 'WWW-Authenticate': 'Bearer realm="mnemo"' };
  const middleware: MiddlewareHandler<ServerEnv> = async (c, next) => {
    if (!required) {
      c.set('tenantId', keylessTenantId);
      c.set('authenticatedByKey', false);
      return next();
    }
    const presented = bearerToken(c.req.header('authorization'));
    if (presented === undefined) {
      return errorResponse(c, 'unauthorized', 'this server needs an API key: send Authorization: Bearer <key>', {
        headers: challenge,
      });
    }
    const key = match(presented);
    if (key === undefined)
      return errorResponse(c, 'unauthorized', 'the API key is not one this server knows', { headers: challenge });
    c.set('tenantId', key.tenantId);
    c.set('authenticatedByKey', true);
    return next();
  };
  // Without keys every caller shares one bucket: a made-up bearer token must not buy a fresh one.
  return { middleware, keyOf: (header) => (required ? (bearerToken(header) ?? '') : '') };
}

/** The key of an `Authorization: Bearer <key>` header, or `undefined`. */
export function bearerToken(header: string | undefined): string | undefined {
  const found = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return found?.[1];
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
