import { type Message, type RecallTuning } from '@mnemo/core';
import {
  prepareRecallCandidates,
  rankPreparedCandidates,
  recallTuning,
  type RecallCandidates,
} from '@mnemo/core/internals';
import type { SearchHit } from '@mnemo/core/store-kit';
import { describe, expect, it } from 'vitest';
import { createBm25Ranker } from './bm25-baseline.js';
import {
  crossValidate,
  foldCutoff,
  recallTuningGrid,
  scoreTunings,
  type TunedQuestion,
} from './cross-validate-recall.js';
import { inventedLocomoFile } from './invented-locomo.js';
import { parseLocomoDataset } from './parse-locomo-dataset.js';

const grid = recallTuningGrid();
const same = (tuning: RecallTuning, other: RecallTuning) =>
  (Object.keys(other) as (keyof RecallTuning)[]).every((field) => tuning[field] === other[field]);
const defaults = grid.findIndex((tuning) => same(tuning, recallTuning));
const rrf10 = grid.findIndex((tuning) => same(tuning, { ...recallTuning, rrfConstant: 10 }));

// Conversations a and c prefer c = 10, b and d the defaults: a fold can only learn what its training folds show.
function question(sampleId: string, index: number, best: number): TunedQuestion {
  const byTuning = new Float32Array(grid.length).fill(0.2);
  byTuning[defaults] = best === defaults ? 0.9 : 0.5;
  byTuning[rrf10] = best === rrf10 ? 0.9 : 0.4;
  return { key: `${sampleId}#${index}`, sampleId, category: 4, bm25: 0.3, byTuning };
}
const questions = [
  ...[0, 1].map((index) => question('a', index, rrf10)),
  ...[0, 1].map((index) => question('b', index, defaults)),
  ...[0, 1, 2].map((index) => question('c', index, rrf10)),
  ...[0, 1].map((index) => question('d', index, defaults)),
];

describe('crossValidate', () => {
  it("chooses each fold's constants on the other folds only and scores them on the held-out one", () => {
    const result = crossValidate(questions, grid, 2, { name: 'rrf', varied: ['rrfConstant'] });

    // Fold 1 holds a and c (training b, d: defaults win), fold 2 holds b and d (training a, c: c = 10 wins).
    expect(result.folds.map((fold) => fold.conversations)).toEqual([
      ['a', 'c'],
      ['b', 'd'],
    ]);
    expect(result.folds.map((fold) => fold.chosen)).toEqual([{}, { rrfConstant: 10 }]);
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
    expect(() => crossValidate(questions, grid, 5, { name: 'x', varied: [] })).toThrow(
      /--folds must be an integer from 2 to the number of conversations \(4\)/,
    );
  });
});

describe('scoreTunings', () => {
  it('gives every tuning the score its own ranking gives, when tunings that cannot differ for the question are ranked once', () => {
    const hit = (seq: number, content: string, name: string): SearchHit => ({
      conversationId: 'c',
      message: {
        id: `m${seq}`,
        seq,
        role: 'user',
        content,
        name,
        createdAt: `2023-0${1 + Math.floor(seq / 10)}-01T10:00:${String(seq).padStart(2, '0')}.000Z`,
        tokens: 3,
      } as Message,
      score: 1,
    });
    const hits = Array.from({ length: 30 }, (_, seq) =>
      hit(seq, seq % 3 === 0 ? 'lake camping trip' : `lake note ${seq}`, seq % 2 === 0 ? 'Ann' : 'Bo'),
    );
    const candidates: RecallCandidates = {
      keyword: hits.slice(0, 20),
      vector: [...hits].reverse().slice(0, 20),
      speakers: new Set(['ann']),
      terms: ['lake', 'camping'],
      secondHop: hits.slice(5, 25),
      list: false,
    };
    const evidence = new Set([3, 12, 21]);
    const sample = grid.filter((_, index) => index % 7 === 0);
    const scores = scoreTunings(candidates, evidence, sample);
    sample.forEach((tuning, index) => {
      const { secondHop: _, ...firstHop } = candidates;
      const prepared = prepareRecallCandidates(tuning.secondHopWeight > 0 ? candidates : firstHop);
      const top = rankPreparedCandidates(prepared, tuning, foldCutoff).order.slice(0, foldCutoff);
      expect(scores[index]).toBeCloseTo(
        top.filter((at) => evidence.has(prepared.hits[at]!.message.seq)).length / evidence.size,
        6,
      );
    });
  });
});

describe('createBm25Ranker', () => {
  it("ranks the turns that share the question's words first", () => {
    const [sample] = parseLocomoDataset(JSON.stringify(inventedLocomoFile()), 'invented.json');
    const rank = createBm25Ranker(sample!);
    const turn = sample!.turns.find((candidate) => candidate.content.includes('lighthouse'))!;

    expect(rank('Which novel about lighthouse keepers?', 3)[0]).toBe(turn.diaId);
    expect(rank('zzz', 3)).toEqual([]);
  });
});
