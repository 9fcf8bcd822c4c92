import { describe, expect, it } from 'vitest';
import { episodeCoverage, termMask } from './episode-coverage.js';
import { keywordTerms } from './keyword-terms.js';

describe('termMask', () => {
  it('sets the bit of each query term the text contains, stems folded', () => {
    expect(termMask(keywordTerms('We camped by the lake'), ['camping', 'lake', 'mountains'])).toBe(0b011);
    expect(termMask(keywordTerms('nothing here'), ['lake'])).toBe(0);
  });
});

describe('episodeCoverage', () => {
  it('gives every candidate of an episode the share of query terms its episode holds between them', () => {
    // Episode 0: one candidate with term 0, one with term 1; episode 1: term 0 only; three terms.
    const coverage = episodeCoverage(Uint32Array.from([0b001, 0b010, 0b001]), Int32Array.from([0, 0, 1]), 3);
    expect([...coverage].map((value) => Number(value.toFixed(3)))).toEqual([0.667, 0.667, 0.333]);
  });

  it('is 0 for a query of one term', () => {
    expect([...episodeCoverage(Uint32Array.from([1]), Int32Array.from([0]), 1)]).toEqual([0]);
  });
});
