import type { Entity, EntityInput } from './entity.js';
import type { ExtractedGraph, ExtractedRelation } from './graph-extractor.js';
import { userEntityAlias } from './store-graph.js';

interface Draft {
  name: string;
  type: string;
  readonly aliases: Set<string>;
}

/**
 * Collects the entities and relations an extractor reads, merging repeats: one entity per name or
 * alias (case-insensitive; a specific type beats `other`), one relation per subject, predicate and
 * object (source seqs united). Names of entities the store already knows are reused with their stored
 * spelling and type. The user is referred to as `user` until {@link GraphBuilder.build}, which emits
 * the user's entity under their stated name (or the stored one) with `user` as an alias.
 */
export class GraphBuilder {
  readonly #entities: Draft[] = [];
  readonly #relations = new Map<
    string,
    { subject: string; predicate: string; object: string; sourceSeqs: Set<number> }
  >();
  readonly #known: readonly Entity[];
  readonly #userAliases = new Set<string>();
  #userName: string | undefined;

  constructor(knownEntities: readonly Entity[]) {
    this.#known = knownEntities;
  }

  /** Records the user's stated name (the latest wins). */
  nameUser(name: string): void {
    this.#userName = name;
  }

  /** Records another name of an entity (`user` for the user): a callsign, a handle, a device id. */
  addAlias(name: string, alias: string, type: string): void {
    if (name === userEntityAlias) this.#userAliases.add(alias);
    else this.addEntity(name, type, [alias]);
  }

  /** Adds or merges an entity; returns the name it goes by. */
  addEntity(name: string, type: string, aliases: readonly string[] = []): string {
    const known = this.#knownEntity(name);
    const draft = this.#find(name) ?? this.#find(known?.name ?? '');
    if (draft !== undefined) {
      if (draft.type === 'other') draft.type = type;
      for (const alias of aliases) if (!sameName(alias, draft.name)) draft.aliases.add(alias);
      return draft.name;
    }
    const created: Draft = {
      name: known?.name ?? name,
      type: type === 'other' && known !== undefined ? known.type : type,
      aliases: new Set(aliases.filter((alias) => !sameName(alias, name))),
    };
    this.#entities.push(created);
    return created.name;
  }

  /** Adds a relation between two names (`user` for the user). */
  addRelation(subject: string, predicate: string, object: string, seq: number): void {
    const key = `${subject.toLowerCase()}\u0000${predicate}\u0000${object.toLowerCase()}`;
    const existing = this.#relations.get(key);
    if (existing === undefined) this.#relations.set(key, { subject, predicate, object, sourceSeqs: new Set([seq]) });
    else existing.sourceSeqs.add(seq);
  }

  /** Whether a name is already an entity (by name or alias) in this extraction or in the store, and its type. */
  typeOf(name: string): string | undefined {
    return this.#find(name)?.type ?? this.#knownEntity(name)?.type;
  }

  /** The entities and relations collected, in the order first met. */
  build(): ExtractedGraph {
    const entities: EntityInput[] = [];
    const storedUser = this.#known.find((entity) =>
      entity.aliases.some((alias) => alias.toLowerCase() === userEntityAlias),
    );
    const userName = this.#userName ?? storedUser?.name;
    const mentionsUser = [...this.#relations.values()].some(
      (relation) => relation.subject === userEntityAlias || relation.object === userEntityAlias,
    );
    const userAliases = new Set([userEntityAlias, ...this.#userAliases]);
    if (userName !== undefined || this.#userAliases.size > 0 || mentionsUser) {
      // The user's own name may also have been met as a bare capitalized word: fold that entity in.
      const twin = userName === undefined ? undefined : this.#find(userName);
      for (const alias of twin?.aliases ?? []) userAliases.add(alias);
      entities.push({
        name: userName ?? userEntityAlias,
        type: 'person',
        aliases: [...userAliases].filter((alias) => !sameName(alias, userName ?? userEntityAlias)),
      });
    }
    const userKey = userName?.toLowerCase();
    for (const draft of this.#entities) {
      if (draft.name.toLowerCase() === userKey) continue;
      // A bare node id that turned out to be another entity's alias is not an entity of its own.
      if (
        this.#entities.some(
          (other) => other !== draft && [...other.aliases].some((alias) => sameName(alias, draft.name)),
        )
      )
        continue;
      entities.push({ name: draft.name, type: draft.type, aliases: [...draft.aliases] });
    }
    const relations: ExtractedRelation[] = [...this.#relations.values()].map((relation) => ({
      subject: relation.subject,
      predicate: relation.predicate,
      object: relation.object,
      sourceSeqs: [...relation.sourceSeqs].sort((a, b) => a - b),
    }));
    return { entities, relations };
  }

  #find(name: string): Draft | undefined {
    if (name === '') return undefined;
    return this.#entities.find(
      (draft) => sameName(draft.name, name) || [...draft.aliases].some((alias) => sameName(alias, name)),
    );
  }

  #knownEntity(name: string): Entity | undefined {
    return this.#known.find(
      (entity) => sameName(entity.name, name) || entity.aliases.some((alias) => sameName(alias, name)),
    );
  }
}

function sameName(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}
