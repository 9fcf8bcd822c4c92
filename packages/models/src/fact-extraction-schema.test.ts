import { describe, expect, it } from 'vitest';
import { fixtureFactsReply } from './extraction.fixture.js';
import { factExtractionSchema, readExtractedFacts } from './fact-extraction-schema.js';

const shown = new Set([11, 12, 13, 14]);
const good = fixtureFactsReply.facts[0]!;

/** Every object schema must list all its properties as required and forbid others, as OpenAI's strict mode demands. */
function strictViolations(schema: unknown, path = '$'): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as { type?: unknown; properties?: Record<string, unknown>; required?: unknown; additionalProperties?: unknown; items?: unknown };
  const problems: string[] = [];
  if (node.type === 'object') {
    const keys = Object.keys(node.properties ?? {});
    const required = Array.isArray(node.required) ? node.required : [];
    if (keys.some((key) => !required.includes(key)) || required.length !== keys.length) problems.push(`${path}: required must list every property`);
    if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties must be false`);
  }
  for (const [key, child] of Object.entries(node.properties ?? {})) problems.push(...strictViolations(child, `${path}.${key}`));
  if (node.items !== undefined) problems.push(...strictViolations(node.items, `${path}[]`));
  for (const forbidden of ['minimum', 'maximum', 'minItems', 'pattern']) if (forbidden in node) problems.push(`${path}: ${forbidden} is not portable`);
  return problems;
}

describe('factExtractionSchema', () => {
  it('is in the subset strict structured outputs accept', () => {
    expect(strictViolations(factExtractionSchema)).toEqual([]);
  });
});

describe('readExtractedFacts', () => {
  it('accepts a good reply and returns the facts with sorted, unique seqs', () => {
    const result = readExtractedFacts({ facts: [...fixtureFactsReply.facts, { ...good, sourceSeqs: [13, 11, 13] }] }, shown);

    expect(result.ok).toBe(true);
    const facts = result.ok ? result.value : [];
    expect(facts).toHaveLength(5);
    expect(facts[2]).toEqual({ subject: 'user', attribute: 'likes', value: 'coffee', text: "I don't drink coffee anymore", confidence: 0.9, sourceSeqs: [14], polarity: 'negate' });
    expect(facts[4]!.sourceSeqs).toEqual([11, 13]);
  });

  it('normalizes attributes to snake_case, the speaker to "user", trims text, and reads a missing polarity as assert', () => {
    const result = readExtractedFacts([{ ...good, subject: 'I', attribute: 'Home Town', value: ' Hood River ', polarity: undefined }], shown);

    expect(result).toEqual({ ok: true, value: [{ ...good, subject: 'user', attribute: 'home_town', value: 'Hood River', polarity: 'assert' }] });
  });

  it('accepts an empty list', () => {
    expect(readExtractedFacts({ facts: [] }, shown)).toEqual({ ok: true, value: [] });
  });

  it('lists every problem with its path: wrong shape, missing fields, bad confidence, unknown seqs, bad polarity', () => {
    const result = readExtractedFacts(
      {
        facts: [
          good,
          'a fact',
          { ...good, value: '', confidence: 1.5 },
          { ...good, sourceSeqs: [13, 99] },
          { ...good, sourceSeqs: [] },
          { ...good, polarity: 'maybe', attribute: '--' },
        ],
      },
      shown,
    );

    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems).toEqual([
      'facts[1] must be an object',
      'facts[2].value must be a non-empty string (got "")',
      'facts[2].confidence must be a number from 0 to 1 (got 1.5)',
      'facts[3].sourceSeqs has 99, not among the seqs shown (11, 12, 13, 14)',
      'facts[4].sourceSeqs must be a non-empty list of message seqs (got [])',
      'facts[5].attribute must contain letters or digits (got "--")',
      'facts[5].polarity must be "assert" or "negate" (got "maybe")',
    ]);
  });

  it('rejects a reply without a facts list', () => {
    expect(readExtractedFacts({ fact: [] }, shown)).toEqual({ ok: false, problems: ['the reply must be a JSON object with a "facts" list'] });
    expect(readExtractedFacts('facts', shown).ok).toBe(false);
  });
});
