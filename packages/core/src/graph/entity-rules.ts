import type { Entity, EntityInput } from './entity.js';

/** The lower-cased name and aliases an entity is matched by. */
export function namesOf(entity: Pick<EntityInput, 'name' | 'aliases'>): string[] {
  return [entity.name, ...(entity.aliases ?? [])].map((name) => name.trim().toLowerCase());
}

/** Merges an input into a stored entity: new aliases added (the input's name too, if it differs), a newer description and a specific type win. */
export function mergeEntity(stored: Entity, input: EntityInput, now: string): Entity {
  const known = new Set(namesOf(stored));
  const aliases = [...stored.aliases];
  for (const name of [input.name, ...(input.aliases ?? [])]) {
    if (!known.has(name.trim().toLowerCase())) {
      aliases.push(name);
      known.add(name.trim().toLowerCase());
    }
  }
  return {
    ...stored,
    type: input.type === 'other' ? stored.type : input.type,
    aliases,
    ...(input.description === undefined ? {} : { description: input.description }),
    updatedAt: now,
  };
}
