import { isMemoryError } from '../errors/memory-error.js';
import { oneOfPersonRelations } from '../facts/single-valued-attributes.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { Entity, EntityInput, Relation } from './entity.js';
import { findEntity } from './find-entity.js';
import type { ExtractedGraph, ExtractedRelation } from './graph-extractor.js';

/**
 * Predicates a subject has one current object of: storing `Tomas —lives_in→ Portland` retires a
 * current `Tomas —lives_in→ Bend`. Where someone lives or comes from, their node, partner or spouse,
 * parents, employer and boss, the main relay, and where a device stands. Every other predicate
 * (`buddy`, `uses_relay`, `owns`, …) accumulates.
 */
export const singleValuedPredicates: ReadonlySet<string> = new Set([
  'lives_in',
  'home_town',
  'has_node',
  ...oneOfPersonRelations,
  'works_at',
  'boss',
  'main_relay',
  'located_at',
]);

/** The predicate that makes its subject another name of its object instead of an edge. */
export const aliasPredicate = 'alias_of';

/** The name and alias the user's own entity is found by before (and after) their name is known. */
export const userEntityAlias = 'user';

/** Where a graph comes from and when. */
export interface StoreGraphContext {
  readonly conversationId: string;
  /** ISO 8601: entity times, and each relation's `validFrom` unless `timeOf` knows its source message. */
  readonly now: string;
  /** The time of a source message by seq: a relation is valid from its newest source message's time. */
  readonly timeOf?: (seq: number) => string | undefined;
  readonly signal?: AbortSignal;
}

/** What {@link storeGraph} stored: entities as they are now, relations inserted (or found identical), relations retired. */
export interface StoredGraph {
  readonly entities: Entity[];
  readonly relations: Relation[];
  readonly retired: Relation[];
}

/**
 * Writes an extracted graph into the store: upserts its entities (the store merges one met under a
 * name or alias it already knows), resolves each relation's subject and object names to entities (by
 * name, then alias, case-insensitively; an unknown name becomes an entity of type `other`, and `user`
 * the user's own `person` entity), and inserts the relations, which the store deduplicates. A relation
 * `X —alias_of→ Y` is not stored as an edge: X becomes an alias of Y (unless X already names another entity). A relation with a
 * {@link singleValuedPredicates} predicate retires the subject's current one with another object, at
 * the new relation's `validFrom`; one older than the current relation is skipped. Self-loops are
 * skipped. Store errors pass through (`not_found`, `storage_failed`, …); a `conflict` while retiring
 * means another worker retired it first and is not an error.
 */
export async function storeGraph(
  store: Store,
  user: UserScope,
  extracted: ExtractedGraph,
  context: StoreGraphContext,
): Promise<StoredGraph> {
  const callOptions: CallOptions = context.signal === undefined ? {} : { signal: context.signal };
  const entities = new Map<string, Entity>();
  const upsert = async (input: EntityInput): Promise<Entity> => {
    const entity = await store.upsertEntity(user, input, context.now, callOptions);
    entities.set(entity.id, entity);
    return entity;
  };
  const resolve = async (name: string): Promise<Entity> => {
    const lower = name.trim().toLowerCase();
    const known = [...entities.values()];
    const found =
      known.find((entity) => entity.name.toLowerCase() === lower) ??
      known.find((entity) => entity.aliases.some((alias) => alias.toLowerCase() === lower)) ??
      (await findEntity(store, user, name, callOptions));
    if (found !== undefined) return found;
    return upsert(
      lower === userEntityAlias ? { name: userEntityAlias, type: 'person' } : { name: name.trim(), type: 'other' },
    );
  };

  for (const input of extracted.entities) {
    context.signal?.throwIfAborted();
    if (input.name.trim().length > 0) await upsert(input);
  }
  const relations: Relation[] = [];
  const retired: Relation[] = [];
  for (const relation of extracted.relations) {
    context.signal?.throwIfAborted();
    if (relation.subject.trim().length === 0 || relation.object.trim().length === 0) continue;
    if (relation.predicate === aliasPredicate) {
      const target = await resolve(relation.object);
      const other = await findEntity(store, user, relation.subject, callOptions);
      // Two stored entities cannot be merged through the port: an alias that already names another entity is skipped.
      if (other === undefined) await upsert({ name: target.name, type: 'other', aliases: [relation.subject.trim()] });
      continue;
    }
    const subject = await resolve(relation.subject);
    const object = await resolve(relation.object);
    if (subject.id === object.id) continue;
    const stored = await storeRelation(store, user, subject, object, relation, context, callOptions);
    if (stored === undefined) continue;
    relations.push(stored.relation);
    retired.push(...stored.retired);
  }
  return { entities: [...entities.values()], relations, retired };
}

async function storeRelation(
  store: Store,
  user: UserScope,
  subject: Entity,
  object: Entity,
  relation: ExtractedRelation,
  context: StoreGraphContext,
  callOptions: CallOptions,
): Promise<{ relation: Relation; retired: Relation[] } | undefined> {
  const newest = relation.sourceSeqs.length === 0 ? undefined : context.timeOf?.(Math.max(...relation.sourceSeqs));
  const validFrom = newest ?? context.now;
  const single = singleValuedPredicates.has(relation.predicate);
  const rivals = single
    ? (await store.listRelations(user, { entityIds: [subject.id] }, callOptions)).filter(
        (current) =>
          current.subjectId === subject.id &&
          current.predicate === relation.predicate &&
          current.objectId !== object.id,
      )
    : [];
  // A statement read late (an older backlog) does not undo a newer one.
  if (rivals.some((current) => current.validFrom > validFrom)) return undefined;
  const stored = await store.insertRelation(
    user,
    {
      subjectId: subject.id,
      predicate: relation.predicate,
      objectId: object.id,
      validFrom,
      sourceConversationId: context.conversationId,
      sourceSeqs: [...relation.sourceSeqs],
    },
    context.now,
    callOptions,
  );
  const retired: Relation[] = [];
  // Insert first, retire second: a crash in between leaves two current values, never none.
  for (const current of rivals) {
    try {
      retired.push(await store.retireRelation(user, current.id, validFrom, callOptions));
    } catch (error) {
      if (!isMemoryError(error, 'conflict')) throw error;
    }
  }
  return { relation: stored, retired };
}
