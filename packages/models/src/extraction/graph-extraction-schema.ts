import { type Entity, type EntityInput, type ExtractedGraph, type ExtractedRelation } from '@mnemo/core';
import { namesOf } from '@mnemo/core/internals';
import { entityTypes } from './graph-extraction-prompt.js';
import { isRecord, readSourceSeqs, readText } from './read-reply-fields.js';
import type { ValidationResult } from './request-validated-json.js';
import { toSnakeCase } from './to-snake-case.js';

/** Name of {@link graphExtractionSchema} in `response_format`. */
export const graphExtractionSchemaName = 'extracted_graph';

/**
 * JSON schema of a graph-extraction reply, `{ "entities": [...], "relations": [...] }`, in the subset
 * OpenAI's strict structured outputs accept (every property required, no additional properties; a
 * missing description is `null`).
 */
export const graphExtractionSchema: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'object',
  properties: {
    entities: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          type: { type: 'string', enum: [...entityTypes] },
          aliases: { type: 'array', items: { type: 'string' } },
          description: { type: ['string', 'null'] },
        },
        required: ['name', 'type', 'aliases', 'description'],
        additionalProperties: false,
      },
    },
    relations: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          subject: { type: 'string', description: '"user", or the name or an alias of an entity' },
          predicate: { type: 'string', description: 'snake_case English verb phrase, e.g. lives_in, sister_of' },
          object: { type: 'string', description: '"user", or the name or an alias of an entity' },
          sourceSeqs: { type: 'array', items: { type: 'integer' } },
        },
        required: ['subject', 'predicate', 'object', 'sourceSeqs'],
        additionalProperties: false,
      },
    },
  },
  required: ['entities', 'relations'],
  additionalProperties: false,
});

// Spellings models use for the prompt's types.
const typeSynonyms: Readonly<Record<string, string>> = {
  organisation: 'organization',
  location: 'place',
  company: 'organization',
};
// Ways models name the speaker instead of the prompt's "user".
const userAliases = new Set(['user', 'the user', 'i', 'me', 'myself']);

/** What {@link readExtractedGraph} checks a reply against. */
export interface GraphReplyContext {
  readonly shownSeqs: ReadonlySet<number>;
  readonly knownEntities: readonly Pick<Entity, 'name' | 'aliases'>[];
}

/**
 * Checks a parsed reply against {@link graphExtractionSchema} and the prompt: entities with a name, a
 * type of {@link entityTypes} (lower-cased; `organisation`, `company` and `location` are mapped), aliases
 * (trimmed, without repeats or the name) and an optional description; relations whose subject and
 * object are `user` or a name or alias of an entity of the reply or a known one, with a snake_case
 * predicate and sourceSeqs among those shown. A missing list counts as empty; an entity named like the
 * user is left out (the user is implicit); entities named twice are merged. Returns every problem found,
 * each naming its path, so they can be fed back to the model.
 */
export function readExtractedGraph(value: unknown, context: GraphReplyContext): ValidationResult<ExtractedGraph> {
  if (!isRecord(value))
    return { ok: false, problems: ['the reply must be a JSON object with "entities" and "relations" lists'] };
  const problems: string[] = [];
  const entities = readEntities(value.entities ?? [], problems);
  const names = new Set([...entities, ...context.knownEntities].flatMap((entity) => namesOf(entity)));
  const relations = readRelations(value.relations ?? [], names, context.shownSeqs, problems);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: { entities, relations } };
}

function readEntities(list: unknown, problems: string[]): EntityInput[] {
  if (!Array.isArray(list)) {
    problems.push('entities must be a list');
    return [];
  }
  const byName = new Map<string, EntityInput>();
  list.forEach((item: unknown, index) => {
    const path = `entities[${index}]`;
    if (!isRecord(item)) {
      problems.push(`${path} must be an object`);
      return;
    }
    const before = problems.length;
    const name = readText(item.name, `${path}.name`, problems);
    const rawType = typeof item.type === 'string' ? item.type.trim().toLowerCase() : item.type;
    const type = typeof rawType === 'string' ? (typeSynonyms[rawType] ?? rawType) : rawType;
    if (typeof type !== 'string' || !(entityTypes as readonly string[]).includes(type)) {
      problems.push(
        `${path}.type must be one of ${entityTypes.join(', ')} (got ${JSON.stringify(item.type) ?? 'nothing'})`,
      );
    }
    const aliases = item.aliases ?? [];
    if (!Array.isArray(aliases) || !aliases.every((alias) => typeof alias === 'string'))
      problems.push(`${path}.aliases must be a list of strings`);
    const description = item.description ?? undefined;
    if (description !== undefined && typeof description !== 'string')
      problems.push(`${path}.description must be a string or null`);
    if (problems.length > before || userAliases.has(name!.toLowerCase())) return;
    const key = name!.toLowerCase();
    const previous = byName.get(key);
    byName.set(key, {
      name: previous?.name ?? name!,
      type: previous === undefined || previous.type === 'other' ? (type as string) : previous.type,
      aliases: cleanAliases(previous?.name ?? name!, [...(previous?.aliases ?? []), ...(aliases as string[])]),
      ...(typeof description === 'string' && description.trim() !== ''
        ? { description: description.trim() }
        : previous?.description === undefined
          ? {}
          : { description: previous.description }),
    });
  });
  return [...byName.values()];
}

function cleanAliases(name: string, aliases: readonly string[]): string[] {
  const seen = new Set([name.toLowerCase()]);
  const kept: string[] = [];
  for (const alias of aliases.map((text) => text.trim())) {
    if (alias === '' || seen.has(alias.toLowerCase())) continue;
    seen.add(alias.toLowerCase());
    kept.push(alias);
  }
  return kept;
}

function readRelations(
  list: unknown,
  names: ReadonlySet<string>,
  shownSeqs: ReadonlySet<number>,
  problems: string[],
): ExtractedRelation[] {
  if (!Array.isArray(list)) {
    problems.push('relations must be a list');
    return [];
  }
  const relations: ExtractedRelation[] = [];
  list.forEach((item: unknown, index) => {
    const path = `relations[${index}]`;
    if (!isRecord(item)) {
      problems.push(`${path} must be an object`);
      return;
    }
    const before = problems.length;
    const readEnd = (field: 'subject' | 'object'): string | undefined => {
      const end = readText(item[field], `${path}.${field}`, problems);
      if (end === undefined) return undefined;
      if (userAliases.has(end.toLowerCase())) return 'user';
      if (!names.has(end.toLowerCase()))
        problems.push(
          `${path}.${field} ${JSON.stringify(end)} is not "user", an entity of this reply or a known entity`,
        );
      return end;
    };
    const subject = readEnd('subject');
    const predicateText = readText(item.predicate, `${path}.predicate`, problems);
    const predicate = predicateText === undefined ? undefined : toSnakeCase(predicateText);
    if (predicate === '')
      problems.push(`${path}.predicate must contain letters or digits (got ${JSON.stringify(predicateText)})`);
    const object = readEnd('object');
    const sourceSeqs = readSourceSeqs(item.sourceSeqs, path, shownSeqs, problems);
    if (problems.length > before) return;
    relations.push({ subject: subject!, predicate: predicate!, object: object!, sourceSeqs: sourceSeqs! });
  });
  return relations;
}
