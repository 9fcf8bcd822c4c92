import { MemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Entity, Relation } from './entity.js';
import { findEntity } from './find-entity.js';

/** An entity's neighbourhood: the entities reached (the start first, then by distance) and the relations walked. */
export interface GraphNeighbourhood {
  readonly entities: Entity[];
  readonly relations: Relation[];
}

/** Options of {@link graphNeighbours}. */
export interface GraphNeighboursOptions extends CallOptions {
  /** Walk ended relations too (every version); default current ones only. */
  readonly includeHistory?: boolean;
}

const entityChunk = 500;

/** Deepest walk {@link graphNeighbours} takes. */
export const maxNeighbourDepth = 3;

/**
 * The entities within `depth` hops (1–3) of an entity given by id, name or alias, and the relations
 * between them, breadth-first, in either direction; current relations only unless `includeHistory`.
 * Only the user's own graph is read. Throws `not_found` for an unknown entity and `invalid_input` for
 * a depth that is not an integer from 1 to {@link maxNeighbourDepth}.
 */
export async function graphNeighbours(
  store: Store,
  user: UserScope,
  entityNameOrId: string,
  depth: number,
  options: GraphNeighboursOptions = {},
): Promise<GraphNeighbourhood> {
  if (!Number.isInteger(depth) || depth < 1 || depth > maxNeighbourDepth) {
    throw new MemoryError('invalid_input', `depth must be an integer from 1 to ${maxNeighbourDepth}`, {
      details: { field: 'depth', value: depth },
    });
  }
  const callOptions: CallOptions = options.signal === undefined ? {} : { signal: options.signal };
  const start = await findEntity(store, user, entityNameOrId, callOptions);
  if (start === undefined)
    throw new MemoryError('not_found', `no entity is called ${JSON.stringify(entityNameOrId)}`, {
      details: { entity: entityNameOrId },
    });

  const order = [start.id];
  const seen = new Set(order);
  const relations = new Map<string, Relation>();
  let frontier = [start.id];
  for (let hop = 0; hop < depth && frontier.length > 0; hop += 1) {
    const found = await store.listRelations(
      user,
      { entityIds: frontier, includeHistory: options.includeHistory === true },
      callOptions,
    );
    const next: string[] = [];
    for (const relation of found) {
      relations.set(relation.id, relation);
      for (const id of [relation.subjectId, relation.objectId]) {
        if (seen.has(id)) continue;
        seen.add(id);
        order.push(id);
        next.push(id);
      }
    }
    frontier = next;
  }
  const loaded = new Map<string, Entity>();
  // Listing pages hold at most 1,000 rows; a wide three-hop neighbourhood is loaded in chunks.
  for (let offset = 0; offset < order.length; offset += entityChunk) {
    const ids = order.slice(offset, offset + entityChunk);
    for (const entity of await store.listEntities(user, { ids, limit: ids.length }, callOptions))
      loaded.set(entity.id, entity);
  }
  return {
    entities: order.flatMap((id) => loaded.get(id) ?? []),
    relations: [...relations.values()],
  };
}
