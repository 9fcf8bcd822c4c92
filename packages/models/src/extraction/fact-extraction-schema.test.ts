import { describe, expect, it } from 'vitest';
import { fixtureFactsReply } from './extraction.fixture.js';
import { factExtractionSchema, readExtractedFacts } from './fact-extraction-schema.js';
import { strictSchemaViolations } from './strict-json-schema.fixture.js';

const shown = new Set([11, 12, 13, 14]);
const good = fixtureFactsReply.facts[0]!;

describe('factExtractionSchema', () => {
  it('is in the subset strict structured outputs accept', () => {
    expect(strictSchemaViolations(factExtractionSchema)).toEqual([]);
    // The check itself catches what strict mode refuses.
    expect(
      strictSchemaViolations({ type: 'object', properties: { a: { type: 'number', minimum: 0 } }, required: [] }),
    ).toEqual([
      '$: required must list every property',
      '$: additionalProperties must be false',
      '$.a: minimum is not portable',
    ]);
  });
});

describe('readExtractedFacts', () => {
  it('accepts a good reply and returns the facts with sorted, unique seqs', () => {
    const result = readExtractedFacts(
      { facts: [...fixtureFactsReply.facts, { ...good, sourceSeqs: [13, 11, 13] }] },
      shown,
    );

    expect(result.ok).toBe(true);
    const facts = result.ok ? result.value : [];
    expect(facts).toHaveLength(5);
    expect(facts[2]).toEqual({
      subject: 'user',
      attribute: 'likes',
      value: 'coffee',
      text: "I don't drink coffee anymore",
      confidence: 0.9,
      sourceSeqs: [14],
      polarity: 'negate',
    });
    expect(facts[4]!.sourceSeqs).toEqual([11, 13]);
  });

  it('normalizes attributes to snake_case, the speaker to "user", trims text, and reads a missing polarity as assert', () => {
    const result = readExtractedFacts(
      [{ ...good, subject: 'I', attribute: 'Home Town', value: ' Hood River ', polarity: undefined }],
      shown,
    );

    expect(result).toEqual({
      ok: true,
      value: [{ ...good, subject: 'user', attribute: 'home_town', value: 'Hood River', polarity: 'assert' }],
    });
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
    expect(readExtractedFacts({ fact: [] }, shown)).toEqual({
      ok: false,
      problems: ['the reply must be a JSON object with a "facts" list'],
    });
    expect(readExtractedFacts('facts', shown).ok).toBe(false);
  });
});
