import { MemoryError } from '../errors/memory-error.js';

/** Where a message lives: a conversation of a user of a tenant. Tenants never see each other's rows. */
export interface Scope {
  readonly tenantId: string;
  readonly userId: string;
  readonly conversationId: string;
}

/** A user of a tenant: the owner of conversations (and later of facts, memory files and vectors). */
export type UserScope = Omit<Scope, 'conversationId'>;

/** What callers may pass: tenant and user default to `"default"`. */
export interface ScopeInput {
  readonly tenantId?: string;
  readonly userId?: string;
  readonly conversationId: string;
}

/** A user as callers may name it: tenant and user default to `"default"`. */
export type UserScopeInput = Omit<ScopeInput, 'conversationId'>;

/** Longest id accepted for a tenant, user or conversation, in characters. */
export const maxIdLength = 256;

/** The tenant and user a scope gets when the caller names none. */
export const defaultTenantId = 'default';
export const defaultUserId = 'default';

/**
 * Fills defaults and validates ids; throws `invalid_input` for an empty or overlong id, or one that is not
 * printable text (control characters, U+FFFD, unpaired surrogates).
 */
export function resolveScope(input: ScopeInput): Scope {
  return {
    tenantId: checkId('tenantId', input.tenantId ?? defaultTenantId),
    userId: checkId('userId', input.userId ?? defaultUserId),
    conversationId: checkId('conversationId', input.conversationId),
  };
}

/** Like {@link resolveScope} for a user (no conversation). */
export function resolveUserScope(input: UserScopeInput): UserScope {
  return {
    tenantId: checkId('tenantId', input.tenantId ?? defaultTenantId),
    userId: checkId('userId', input.userId ?? defaultUserId),
  };
}

/** One place a caller may name the user (a header, a body field, a flag) and the id it names there, if any. */
export interface UserNaming {
  /** Where, in the caller's words: `"the X-Mnemo-User header"`, `"the body's user"`, `"user_id"`. */
  readonly where: string;
  /** The id named there; `undefined` or `""` names none. */
  readonly userId: string | undefined;
}

/**
 * The user a call names, by the one rule every edge follows (REST, the seed API, the proxy, MCP and the
 * CLI; decisions 0010 and 0037): every place that names a user must name the same one. Two different ids
 * are `invalid_input` naming both places, never a silent choice. Returns `undefined` when none is named.
 */
export function namedUserOf(namings: readonly UserNaming[]): string | undefined {
  const named = namings.filter(
    (naming): naming is UserNaming & { userId: string } => naming.userId !== undefined && naming.userId !== '',
  );
  const first = named[0];
  const other = named.find((naming) => naming.userId !== first?.userId);
  if (first !== undefined && other !== undefined) {
    throw new MemoryError(
      'invalid_input',
      `the user is named twice with different ids: ${JSON.stringify(first.userId)} in ${first.where} and ${JSON.stringify(other.userId)} in ${other.where}; name one user, or the same one in both`,
      { details: { field: 'user_id', names: named.map((naming) => ({ where: naming.where, userId: naming.userId })) } },
    );
  }
  return first?.userId;
}

/**
 * Whose data a call touches, by the one rule of every edge: the user the caller names ({@link namedUserOf});
 * else, when the call names a conversation, that conversation is its own end user (`userId` = the
 * conversation id), so two conversations share no facts, recall or summaries unless a caller groups them
 * under one user on purpose; else `default`.
 */
export function ownerOf(
  tenantId: string | undefined,
  namings: readonly UserNaming[],
  conversationId?: string,
): UserScope {
  return resolveUserScope({
    ...(tenantId === undefined ? {} : { tenantId }),
    userId: namedUserOf(namings) ?? conversationId ?? defaultUserId,
  });
}

// Control characters (C0, DEL, C1) in ids break logs, headers and file names downstream; reject them at the door.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/;
// U+FFFD is what a decoder leaves of bytes that were not UTF-8, and a lone surrogate is no character:
// an id holding either is not the text its sender meant, and two such ids could collide.
const notText = /\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkId(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim().length === 0) {
    throw new MemoryError('invalid_input', `${field} must be a non-empty string`, { details: { field } });
  }
  if (value.length > maxIdLength) {
    throw new MemoryError('invalid_input', `${field} is longer than ${maxIdLength} characters`, {
      details: { field, length: value.length, limit: maxIdLength },
    });
  }
  if (controlCharacter.test(value)) {
    throw new MemoryError('invalid_input', `${field} must not contain control characters`, { details: { field } });
  }
  if (notText.test(value)) {
    throw new MemoryError(
      'invalid_input',
      `${field} must be text: it holds U+FFFD (bytes that were not UTF-8) or an unpaired surrogate`,
      {
        details: { field },
      },
    );
  }
  return value;
}

/** The three key columns of a conversation, in the order of every store's index: tenant, user, conversation. */
export function scopeKey(scope: Scope): [string, string, string] {
  return [scope.tenantId, scope.userId, scope.conversationId];
}
