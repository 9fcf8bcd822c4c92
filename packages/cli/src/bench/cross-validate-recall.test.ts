import { recallTuning, type RecallTuning } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { createBm25Ranker } from './bm25-baseline.js';
import { crossValidate, recallTuningGrid, type TunedQuestion } from './cross-validate-recall.js';
import { inventedLocomoFile } from './invented-locomo.js';
import { parseLocomoDataset } from './parse-locomo-dataset.js';

const grid = recallTuningGrid();
const same = (tuning: RecallTuning, other: RecallTuning) => (Object.keys(other) as (keyof RecallTuning)[]).every((field) => tuning[field] === other[field]);
const defaults = grid.findIndex((tuning) => same(tuning, recallTuning));
const rrf5 = grid.findIndex((tuning) => same(tuning, { ...recallTuning, rrfConstant: 5 }));

// Conversations a and c prefer c = 5, b and d the defaults: a fold can only learn what its training folds show.
function question(sampleId: string, index: number, best: number): TunedQuestion {
  const byTuning = new Float32Array(grid.length).fill(0.2);
  byTuning[defaults] = best === defaults ? 0.9 : 0.5;
  byTuning[rrf5] = best === rrf5 ? 0.9 : 0.4;
  return { key: `${sampleId}#${index}`, sampleId, category: 4, bm25: 0.3, byTuning };
}
const questions = [
  ...[0, 1].map((index) => question('a', index, rrf5)),
  ...[0, 1].map((index) => question('b', index, defaults)),
  ...[0, 1, 2].map((index) => question('c', index, rrf5)),
  ...[0, 1].map((index) => question('d', index, defaults)),
];

describe('crossValidate', () => {
  it('chooses each fold\'s constants on the other folds only and scores them on the held-out one', () => {
    const result = crossValidate(questions, grid, 2, { name: 'rrf', varied: ['rrfConstant'] });

    // Fold 1 holds a and c (training b, d: defaults win), fold 2 holds b and d (training a, c: c = 5 wins).
    expect(result.folds.map((fold) => fold.conversations)).toEqual([['a', 'c'], ['b', 'd']]);
    expect(result.folds.map((fold) => fold.chosen)).toEqual([{}, { rrfConstant: 5 }]);
    expect(result.folds.map((fold) => fold.heldOut)).toEqual([50, 40]);
    expect(result.mean).toEqual({ heldOut: 45, defaults: 70, bm25: 30, gainOverBm25: 15 });
    expect(result.worst).toEqual({ fold: 1, heldOut: 40, gainOverBm25: 10 });
  });

  it('keeps the defaults when the experiment varies nothing', () => {
    const result = crossValidate(questions, grid, 2, { name: 'none', varied: [] });

    expect(result.folds.every((fold) => Object.keys(fold.chosen).length === 0)).toBe(true);
    // Pooled over questions (5 at 0.5, 4 at 0.9), where the fold mean above weighs folds equally.
    expect(result.byCategory.overall).toEqual({ n: 9, heldOut: 67.8, bm25: 30 });
  });

  it('refuses more folds than conversations', () => {
    expect(() => crossValidate(questions, grid, 5, { name: 'x', varied: [] })).toThrow(/--folds must be an integer from 2 to the number of conversations \(4\)/);
  });
});

describe('createBm25Ranker', () => {
  it('ranks the turns that share the question\'s words first', () => {
    const [sample] = parseLocomoDataset(JSON.stringify(inventedLocomoFile()), 'invented.json');
    const rank = createBm25Ranker(sample!);
    const turn = sample!.turns.find((candidate) => candidate.content.includes('lighthouse'))!;

    expect(rank('Which novel about lighthouse keepers?', 3)[0]).toBe(turn.diaId);
    expect(rank('zzz', 3)).toEqual([]);
  });
});
