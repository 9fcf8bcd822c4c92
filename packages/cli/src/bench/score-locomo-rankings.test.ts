import { describe, expect, it } from 'vitest';
import { inventedLocomoFile } from './invented-locomo.js';
import { parseLocomoDataset } from './parse-locomo-dataset.js';
import { scoreLocomoRankings } from './score-locomo-rankings.js';

const samples = parseLocomoDataset(JSON.stringify(inventedLocomoFile()), 'tiny.json');
const filler = Array.from({ length: 60 }, (_, index) => `D9:${index + 1}`);

describe('scoreLocomoRankings', () => {
  // Evidence: #0 [D1:1] cat 4, #1 [D2:1] cat 2, #2 [D1:2, D2:2, D3:2] cat 1, #3 none cat 3, #4 [D2:3] cat 5, #5 [D1:1] cat 4.
  const rankings = new Map<string, string[]>([
    ['invented-1#0', ['D1:1', ...filler]],
    ['invented-1#1', [...filler.slice(0, 7), 'D2:1', ...filler.slice(7)]],
    ['invented-1#2', ['D1:2', ...filler.slice(0, 20), 'D2:2', ...filler.slice(20)]],
    ['invented-1#4', [...filler.slice(0, 49), 'D2:3']],
  ]);
  const scores = scoreLocomoRankings(samples, rankings);

  it('skips questions without evidence and counts them per category', () => {
    expect(scores.skipped).toEqual({ noEvidence: 1, byCategory: { '3': 1 } });
    expect(scores.byCategory['3']).toMatchObject({ n: 0, 'frac@10': null });
  });

  it('averages the fraction of evidence in the top k per category, in percent', () => {
    expect(scores.byCategory['4']).toMatchObject({ n: 2, 'frac@5': 50, 'all@5': 50, 'any@5': 50 });
    expect(scores.byCategory['2']).toMatchObject({ n: 1, 'frac@5': 0, 'frac@10': 100 });
    expect(scores.byCategory['1']).toMatchObject({
      n: 1,
      'frac@5': 33.3,
      'frac@20': 33.3,
      'frac@25': 66.7,
      'all@25': 0,
      'any@5': 100,
    });
    expect(scores.byCategory['5']).toMatchObject({ n: 1, 'frac@25': 0, 'frac@50': 100 });
  });

  it('scores a question missing from the rankings as 0', () => {
    // #5 has no ranking: category 4 is one hit (#0) out of two questions at every k.
    expect(scores.byCategory['4']!['frac@50']).toBe(50);
  });

  it('reports overall over all five categories and, separately, over categories 1-4', () => {
    expect(scores.overall.n).toBe(5);
    expect(scores.cat1to4.n).toBe(4);
    // frac@10: #0 1, #1 1, #2 1/3, #4 0, #5 0.
    expect(scores.overall['frac@10']).toBe(46.7);
    expect(scores.cat1to4['frac@10']).toBe(58.3);
    expect(scores.cat1to4['all@10']).toBe(50);
  });
});
