import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Entity } from './entity.js';

/**
 * A user's entity by id, else by name, else by alias (case-insensitive, exact — not a prefix), or
 * `undefined`. A name match wins over an alias match, so "Tomas" finds the entity named Tomas even if
 * another one lists "Tomas" among its aliases.
 */
export async function findEntity(
  store: Store,
  user: UserScope,
  nameOrId: string,
  options: CallOptions = {},
): Promise<Entity | undefined> {
  const wanted = nameOrId.trim();
  if (wanted.length === 0) return undefined;
  const [byId] = await store.listEntities(user, { ids: [wanted], limit: 1 }, options);
  if (byId !== undefined) return byId;
  const lower = wanted.toLowerCase();
  const candidates = await store.listEntities(user, { query: wanted }, options);
  return (
    candidates.find((entity) => entity.name.toLowerCase() === lower) ??
    candidates.find((entity) => entity.aliases.some((alias) => alias.toLowerCase() === lower))
  );
}
