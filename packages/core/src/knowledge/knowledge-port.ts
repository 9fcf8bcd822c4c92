import type { Fact, FactQuery, NewFact } from '../facts/fact.js';
import type { Entity, EntityInput, Relation, RelationInput } from '../graph/entity.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { PortCalls } from '../store/port.js';
import type { CallOptions } from '../store/store.js';

/** Facts, entities, relations and the extraction cursors. Part of the `Store` port; an adapter implements it as a `StorePart<KnowledgePort>`. */
export interface KnowledgePort {
  /**
   * Stores a fact. With `supersedes`, in the same transaction the old fact gets `validTo` (the new
   * fact's `validFrom`) and `supersededBy`; `conflict` when the old one is no longer current, `not_found` when absent.
   */
  insertFact(user: UserScope, fact: NewFact, options?: CallOptions & { supersedes?: string }): Promise<Fact>;
  /**
   * Ends a current fact at `at`; with `supersededBy`, links it to the user's fact that takes its place (a
   * consolidation merging a duplicate or settling a contradiction). `not_found` (the fact or the
   * successor) / `conflict` (already ended).
   */
  retireFact(
    user: UserScope,
    factId: string,
    at: string,
    options?: CallOptions & { supersededBy?: string },
  ): Promise<Fact>;
  /** Sets when a current fact expires (ISO 8601), or with `undefined` that it never does; `not_found` / `conflict` (already ended). */
  setFactExpiry(user: UserScope, factId: string, expiresAt: string | undefined, options?: CallOptions): Promise<Fact>;
  /** A user's facts: current by default, valid at `asOf`, or every version with `includeHistory`; oldest first. */
  listFacts(user: UserScope, query?: FactQuery, options?: CallOptions): Promise<Fact[]>;
  /** Inserts an entity, or merges it (type, new aliases, description) into the one with the same name or alias, case-insensitively. */
  upsertEntity(user: UserScope, input: EntityInput, now: string, options?: CallOptions): Promise<Entity>;
  /** A user's entities, by name; `query` matches a name or alias prefix, case-insensitively. */
  listEntities(
    user: UserScope,
    query?: { query?: string; ids?: readonly string[]; limit?: number },
    options?: CallOptions,
  ): Promise<Entity[]>;
  /** Stores a relation; an identical current relation (subject, predicate, object) is returned instead of duplicated. */
  insertRelation(user: UserScope, input: RelationInput, now: string, options?: CallOptions): Promise<Relation>;
  /** Ends a current relation at `at`; `not_found` / `conflict`. */
  retireRelation(user: UserScope, relationId: string, at: string, options?: CallOptions): Promise<Relation>;
  /** Relations whose subject or object is one of `entityIds`: current ones, or all with `includeHistory`. */
  listRelations(
    user: UserScope,
    query: { entityIds: readonly string[]; includeHistory?: boolean },
    options?: CallOptions,
  ): Promise<Relation[]>;
  /** A named progress mark of a conversation's background work (e.g. facts extracted through seq N); 0 when unset. */
  getCursor(scope: Scope, name: string, options?: CallOptions): Promise<number>;
  /** Moves a progress mark from `expected` to `next`; `conflict` when it is no longer `expected` (another worker moved it). */
  advanceCursor(scope: Scope, name: string, expected: number, next: number, options?: CallOptions): Promise<void>;
}

/** What each method of {@link KnowledgePort} does, in the words of an error, and the index of its call options. */
export const knowledgePortCalls: PortCalls<KnowledgePort> = {
  insertFact: ['storing a fact', 2],
  retireFact: ['retiring a fact', 3],
  setFactExpiry: ['setting when a fact expires', 3],
  listFacts: ['listing facts', 2],
  upsertEntity: ['storing an entity', 3],
  listEntities: ['listing entities', 2],
  insertRelation: ['storing a relation', 3],
  retireRelation: ['retiring a relation', 3],
  listRelations: ['listing relations', 2],
  getCursor: ['reading a cursor', 2],
  advanceCursor: ['moving a cursor', 4],
};
