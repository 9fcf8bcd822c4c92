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

/** Fills defaults and validates ids; throws `invalid_input` for an empty, overlong or control-character id. */
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

// Control characters in ids break logs, headers and file names downstream; reject them at the door.
const controlCharacter = /[\u0000-\u001f\u007f]/;

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
  return value;
}
