import { describe, expect, it } from 'vitest';
import { fixtureGraphReply, fixtureKnownEntities } from './extraction.fixture.js';
import { graphExtractionSchema, readExtractedGraph } from './graph-extraction-schema.js';
import { strictSchemaViolations } from './strict-json-schema.fixture.js';

const context = { shownSeqs: new Set([11, 12, 13, 14]), knownEntities: fixtureKnownEntities };

describe('graphExtractionSchema', () => {
  it('is in the subset strict structured outputs accept', () => {
    expect(strictSchemaViolations(graphExtractionSchema)).toEqual([]);
  });
});

describe('readExtractedGraph', () => {
  it('accepts a good reply: relations may name "user", a new entity, or a known entity by an alias', () => {
    const result = readExtractedGraph(fixtureGraphReply, context);

    expect(result).toEqual({
      ok: true,
      value: {
        entities: [
          { name: 'Ana', type: 'person', aliases: [], description: "the user's sister" },
          { name: 'Hood River', type: 'place', aliases: [] },
          { name: 'Hood River trip', type: 'event', aliases: ['the trip'], description: 'moved to 21 June' },
        ],
        relations: fixtureGraphReply.relations,
      },
    });
  });

  it('cleans what models get slightly wrong: type spelling, predicate case, aliases, the user as an entity, repeated entities', () => {
    const result = readExtractedGraph(
      {
        entities: [
          { name: 'ACME', type: 'Organisation', aliases: [' Acme Corp ', 'ACME', 'acme corp', ''], description: '' },
          { name: 'acme', type: 'other', aliases: ['the company'], description: 'where I work' },
          { name: 'Me', type: 'person', aliases: [], description: null },
        ],
        relations: [{ subject: 'I', predicate: 'Works At', object: 'acme corp', sourceSeqs: [14, 11] }],
      },
      context,
    );

    expect(result).toEqual({
      ok: true,
      value: {
        entities: [
          { name: 'ACME', type: 'organization', aliases: ['Acme Corp', 'the company'], description: 'where I work' },
        ],
        relations: [{ subject: 'user', predicate: 'works_at', object: 'acme corp', sourceSeqs: [11, 14] }],
      },
    });
  });

  it('counts a missing list as empty', () => {
    expect(readExtractedGraph({}, context)).toEqual({ ok: true, value: { entities: [], relations: [] } });
  });

  it('lists every problem with its path: unknown type, dangling relation ends, unknown seqs, wrong shapes', () => {
    const result = readExtractedGraph(
      {
        entities: [
          { name: 'Bergen', type: 'city', aliases: [], description: null },
          7,
          { name: '', type: 'person', aliases: 'Bob', description: 3 },
        ],
        relations: [
          { subject: 'user', predicate: 'lives_in', object: 'Oslo', sourceSeqs: [11] },
          { subject: 'user', predicate: '!!', object: 'user', sourceSeqs: [99] },
        ],
      },
      context,
    );

    expect(result.ok ? [] : result.problems).toEqual([
      'entities[0].type must be one of person, place, organization, device, event, other (got "city")',
      'entities[1] must be an object',
      'entities[2].name must be a non-empty string (got "")',
      'entities[2].aliases must be a list of strings',
      'entities[2].description must be a string or null',
      'relations[0].object "Oslo" is not "user", an entity of this reply or a known entity',
      'relations[1].predicate must contain letters or digits (got "!!")',
      'relations[1].sourceSeqs has 99, not among the seqs shown (11, 12, 13, 14)',
    ]);
  });

  it('rejects a reply that is not an object or whose lists are not lists', () => {
    expect(readExtractedGraph([], context).ok).toBe(false);
    expect(readExtractedGraph({ entities: 'Ana', relations: {} }, context)).toEqual({
      ok: false,
      problems: ['entities must be a list', 'relations must be a list'],
    });
  });
});
