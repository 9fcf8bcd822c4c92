import {
  MemoryError,
  namedUserOf,
  ownerOf,
  resolveScope,
  type Conversation,
  type Memory,
  type Page,
  type Scope,
  type UserNaming,
  type UserScope,
} from '@mnemo/core';
import { headerText } from '../app/header-text.js';
import type { ServerContext } from '../app/server-deps.js';

/** Header that selects the user of a request when neither the query nor the body names one. */
export const userHeader = 'X-Mnemo-User';

/**
 * The user id a request names itself (see {@link requestUser}), or `undefined` when it names none: the
 * `user_id` query parameter, the body's user field and the `X-Mnemo-User` header must agree (core's `namedUserOf`).
 */
export function namedUserId(
  c: ServerContext,
  named: { query?: string | undefined; body?: string | undefined } = {},
): string | undefined {
  return namedUserOf(requestNamings(c, named));
}

/** The places a request may name its user: the query's `user_id`, the body's field, and the `X-Mnemo-User` header. */
export function requestNamings(
  c: ServerContext,
  named: { query?: string | undefined; body?: string | undefined; bodyField?: string } = {},
): UserNaming[] {
  return [
    { where: 'the user_id query parameter', userId: named.query },
    { where: `the body's ${named.bodyField ?? 'user id'}`, userId: named.body },
    { where: `the ${userHeader} header`, userId: headerText(c, userHeader) },
  ];
}

/**
 * The user a request acts for on user-level routes (facts, recall, entities, summaries by id), within
 * the tenant of its API key: the `user_id` query parameter, the body's `userId`, or the `X-Mnemo-User`
 * header, else `default`. Two sources naming different users are `invalid_input` rather than a silent choice.
 */
export function requestUser(
  c: ServerContext,
  named: { query?: string | undefined; body?: string | undefined; bodyField?: string } = {},
): UserScope {
  // The tenant comes only from the API key (set by the auth middleware), never from the request.
  return ownerOf(c.get('tenantId'), requestNamings(c, named));
}

/**
 * One page of the conversations a listing route shows: those of the user the request names (`user_id`
 * or the `X-Mnemo-User` header, as in {@link requestUser}), or, without a user named, of every user of the tenant.
 */
export function listRequestConversations(
  c: ServerContext,
  memory: Memory,
  query: {
    readonly user_id?: string | undefined;
    readonly cursor?: string | undefined;
    readonly limit?: number | undefined;
  },
): Promise<Page<Conversation>> {
  const named = query.user_id !== undefined || (headerText(c, userHeader) ?? '') !== '';
  const filter = named ? requestUser(c, { query: query.user_id }) : { tenantId: c.get('tenantId') };
  return memory.listConversations(filter, {
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
    ...(query.limit === undefined ? {} : { limit: query.limit }),
  });
}

/**
 * The scope of a conversation in the request's tenant. Its user is the one the request names (as in
 * {@link requestUser}); a conversation named without a user is its own user (`userId` = the
 * conversation id), so two conversations never share facts, recall or summaries unless a caller
 * groups them under one user on purpose. The same rule holds for the seed API and the proxy.
 */
export function requestScope(
  c: ServerContext,
  conversationId: string,
  named: { query?: string | undefined; body?: string | undefined; bodyField?: string } = {},
): Scope {
  return resolveScope({ ...ownerOf(c.get('tenantId'), requestNamings(c, named), conversationId), conversationId });
}

/** A conversation's scope in `tenantId`: the named user's, or (none named) the conversation's own user ({@link ownerOf}). */
export function conversationScope(tenantId: string, conversationId: string, userId: string | undefined): Scope {
  return resolveScope({ ...ownerOf(tenantId, [{ where: 'the request', userId }], conversationId), conversationId });
}

/** Throws `not_found` unless the conversation has messages (in this tenant, for this user). */
export async function requireConversation(memory: Memory, scope: Scope): Promise<void> {
  if ((await memory.stats(scope)) === undefined) throw conversationNotFound(scope);
}

/** The `not_found` error of a conversation; it names the ids the caller gave and nothing of other tenants. */
export function conversationNotFound(scope: Scope): MemoryError {
  return new MemoryError(
    'not_found',
    `conversation ${JSON.stringify(scope.conversationId)} of user ${JSON.stringify(scope.userId)} has no messages`,
    {
      details: { conversationId: scope.conversationId, userId: scope.userId },
    },
  );
}
