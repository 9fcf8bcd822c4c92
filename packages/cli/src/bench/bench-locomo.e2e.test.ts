import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, runMnemo } from '../../test/run-mnemo.js';
import { inventedLocomoFile } from './invented-locomo.js';

let work: { path: string; remove: () => Promise<void> };

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

const fractions = ['frac@5', 'frac@10', 'frac@25', 'frac@50'];
const contextFields = ['evidencePresent', 'answerWordsPresent', 'meanTokens', 'fullHistoryTokens'];

function expectPercent(value: unknown): void {
  expect(typeof value).toBe('number');
  expect(value as number).toBeGreaterThanOrEqual(0);
  expect(value as number).toBeLessThanOrEqual(100);
}

describe('mnemo bench locomo', () => {
  it('prints exactly one JSON object with the recall and context contract, and writes re-scorable rankings', async () => {
    await writeFile(join(work.path, 'tiny.json'), JSON.stringify(inventedLocomoFile()));

    // The default embedder: the real bundled USE-lite model, offline.
    const run = await runMnemo(
      ['bench', 'locomo', '--data', 'tiny.json', '--max-tokens', '120,2000', '--rankings', 'rankings.json', '--json'],
      {
        cwd: work.path,
        timeoutMs: 120_000,
      },
    );

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    const result = JSON.parse(run.stdout) as {
      recall: {
        overall: Record<string, number>;
        byCategory: Record<string, Record<string, number | null>>;
        cat1to4: Record<string, number>;
      };
      context: Record<string, Record<string, Record<string, number> & { meanTokensByPart: Record<string, number> }>>;
    };
    expect(Object.keys(result).slice(0, 2)).toEqual(['recall', 'context']);
    for (const field of fractions) expectPercent(result.recall.overall[field]);
    expect(Object.keys(result.recall.byCategory)).toEqual(['1', '2', '3', '4', '5']);
    for (const category of ['1', '2', '4', '5'])
      for (const field of fractions) expectPercent(result.recall.byCategory[category]![field]);
    // Category 3's only question has no evidence: skipped, like the baseline tool does.
    expect(result.recall.byCategory['3']).toMatchObject({ n: 0 });
    expectPercent(result.recall.cat1to4['all@10']);
    expect(Object.keys(result.context)).toEqual(expect.arrayContaining(['hybrid', 'window', 'summary']));
    for (const policy of ['hybrid', 'window', 'summary']) {
      expect(Object.keys(result.context[policy]!)).toEqual(['120', '2000']);
      for (const budget of ['120', '2000']) {
        const scores = result.context[policy]![budget]!;
        for (const field of contextFields) expect(typeof scores[field]).toBe('number');
        expectPercent(scores.evidencePresent);
        expectPercent(scores.answerWordsPresent);
        expect(scores.meanTokens).toBeLessThanOrEqual(Number(budget));
        expect(scores.fullHistoryTokens).toBeGreaterThanOrEqual(scores.meanTokens!);
        const parts = Object.values(scores.meanTokensByPart).reduce((sum, tokens) => sum + tokens, 0);
        expect(parts).toBeLessThanOrEqual(scores.meanTokens! + 4);
      }
    }
    // Twelve turns fit in 2,000 tokens: hybrid then holds every evidence turn.
    expect(result.context.hybrid!['2000']!.evidencePresent).toBe(100);

    const rankings = JSON.parse(await readFile(join(work.path, 'rankings.json'), 'utf8')) as Record<string, string[]>;
    expect(Object.keys(rankings)).toEqual([
      'invented-1#0',
      'invented-1#1',
      'invented-1#2',
      'invented-1#4',
      'invented-1#5',
    ]);
    for (const ranking of Object.values(rankings)) {
      // At most 50 ids; the invented conversation has only 12 turns, so each ranking holds all of them.
      expect(new Set(ranking).size).toBe(12);
      for (const id of ranking) expect(id).toMatch(/^D\d+:\d+$/);
    }
  }, 150_000);

  it('exits 2 with a message naming the file when the data is not LoCoMo', async () => {
    await writeFile(join(work.path, 'bad.json'), '{"not": "an array"}');

    const run = await runMnemo(['bench', 'locomo', '--data', 'bad.json', '--embedder', 'hashed'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/bad\.json must be a non-empty JSON array of LoCoMo samples/);
    expect(run.stdout).toBe('');
  });
});
