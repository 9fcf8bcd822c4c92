import type { EntityNameEdits, KnowledgeErasurePlan } from '../store/message-erasure.js';
import { MemoryError } from '../errors/memory-error.js';
import type { Entity, EntityInput, Relation, RelationInput } from '../graph/entity.js';
import type { UserScope } from '../messages/scope.js';
import { mergeEntity, namesOf } from '../graph/entity-rules.js';

/** The entities and relations of {@link InMemoryStore}. */
export class InMemoryGraphStore {
  readonly #entities: Entity[] = [];
  readonly #relations: Relation[] = [];

  upsertEntity(user: UserScope, input: EntityInput, now: string): Entity {
    const names = namesOf(input);
    const index = this.#entities.findIndex(
      (entity) => owns(entity, user) && namesOf(entity).some((name) => names.includes(name)),
    );
    if (index >= 0) {
      const merged = mergeEntity(this.#entities[index]!, input, now);
      this.#entities[index] = merged;
      return merged;
    }
    const created: Entity = {
      ...user,
      id: crypto.randomUUID(),
      name: input.name,
      type: input.type,
      aliases: [...new Set(input.aliases ?? [])].filter((alias) => alias.toLowerCase() !== input.name.toLowerCase()),
      ...(input.description === undefined ? {} : { description: input.description }),
      createdAt: now,
      updatedAt: now,
    };
    this.#entities.push(created);
    return created;
  }

  listEntities(user: UserScope, query: { query?: string; ids?: readonly string[]; limit?: number }): Entity[] {
    const prefix = query.query?.toLowerCase();
    return this.#entities
      .filter((entity) => owns(entity, user))
      .filter((entity) => query.ids === undefined || query.ids.includes(entity.id))
      .filter((entity) => prefix === undefined || namesOf(entity).some((name) => name.startsWith(prefix)))
      .sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1))
      .slice(0, query.limit ?? 1000);
  }

  insertRelation(user: UserScope, input: RelationInput, now: string): Relation {
    for (const id of [input.subjectId, input.objectId]) {
      if (!this.#entities.some((entity) => entity.id === id && owns(entity, user)))
        throw new MemoryError('not_found', `entity ${id} does not exist`);
    }
    const existing = this.#relations.find(
      (relation) =>
        owns(relation, user) &&
        relation.validTo === undefined &&
        relation.subjectId === input.subjectId &&
        relation.predicate === input.predicate &&
        relation.objectId === input.objectId,
    );
    if (existing !== undefined) return existing;
    const relation: Relation = { ...input, ...user, id: crypto.randomUUID(), createdAt: now };
    this.#relations.push(relation);
    return relation;
  }

  retireRelation(user: UserScope, relationId: string, at: string): Relation {
    const index = this.#relations.findIndex((relation) => relation.id === relationId && owns(relation, user));
    if (index < 0) throw new MemoryError('not_found', `relation ${relationId} does not exist`);
    if (this.#relations[index]!.validTo !== undefined)
      throw new MemoryError('conflict', `relation ${relationId} is no longer current`);
    const retired = { ...this.#relations[index]!, validTo: at };
    this.#relations[index] = retired;
    return retired;
  }

  listRelations(user: UserScope, query: { entityIds: readonly string[]; includeHistory?: boolean }): Relation[] {
    return this.#relations.filter(
      (relation) =>
        owns(relation, user) &&
        (query.includeHistory === true || relation.validTo === undefined) &&
        (query.entityIds.includes(relation.subjectId) || query.entityIds.includes(relation.objectId)),
    );
  }

  /** Every entity and relation, in the order written. */
  all(): { readonly entities: readonly Entity[]; readonly relations: readonly Relation[] } {
    return { entities: this.#entities, relations: this.#relations };
  }

  /** Replaces every entity and relation (an import); names resolve to the first entity that carries them, as before. */
  replaceAll(entities: readonly Entity[], relations: readonly Relation[]): void {
    this.#entities.splice(0, this.#entities.length, ...entities);
    this.#relations.splice(0, this.#relations.length, ...relations);
  }

  /** Every relation of the user, history included. */
  relationsOf(user: UserScope): Relation[] {
    return this.#relations.filter((relation) => owns(relation, user));
  }

  /** Applies the graph's part of an erasure plan. */
  applyErasure(user: UserScope, plan: KnowledgeErasurePlan, renamed: EntityNameEdits['updates'] = []): void {
    for (const update of renamed) {
      const index = this.#entities.findIndex((entity) => entity.id === update.id && owns(entity, user));
      if (index < 0) continue;
      const { description: _description, ...rest } = this.#entities[index]!;
      this.#entities[index] = {
        ...rest,
        aliases: update.aliases,
        ...(update.description === undefined ? {} : { description: update.description }),
      };
    }
    const removedRelations = new Set(plan.deleteRelationIds);
    const removedEntities = new Set(plan.deleteEntityIds);
    const updates = new Map(plan.updateRelations.map((update) => [update.id, update.sourceSeqs]));
    for (let index = this.#relations.length - 1; index >= 0; index -= 1) {
      const relation = this.#relations[index]!;
      if (!owns(relation, user)) continue;
      if (removedRelations.has(relation.id)) this.#relations.splice(index, 1);
      else if (updates.has(relation.id))
        this.#relations[index] = { ...relation, sourceSeqs: updates.get(relation.id)! };
    }
    for (let index = this.#entities.length - 1; index >= 0; index -= 1) {
      if (owns(this.#entities[index]!, user) && removedEntities.has(this.#entities[index]!.id))
        this.#entities.splice(index, 1);
    }
  }

  deleteUser(user: UserScope): void {
    for (const list of [this.#entities, this.#relations] as { tenantId: string; userId: string }[][]) {
      for (let index = list.length - 1; index >= 0; index -= 1) if (owns(list[index]!, user)) list.splice(index, 1);
    }
  }
}

function owns(row: { tenantId: string; userId: string }, user: UserScope): boolean {
  return row.tenantId === user.tenantId && row.userId === user.userId;
}
