import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, meshTranscript, readStoredMessages, runMnemo } from './run-mnemo.js';

let work: { path: string; remove: () => Promise<void> };

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

const contractFields = [
  'policy',
  'maxTokens',
  'messages',
  'requests',
  'sentTokens',
  'fullHistoryTokens',
  'savedTokens',
  'savedPercent',
];
// Added with compaction, after the original contract, so that existing consumers keep working.
const compactionFields = ['compactions', 'summarizerTokens', 'netSavedTokens', 'netSavedPercent'];

interface ReplayJson {
  policy: string;
  sentTokens: number;
  fullHistoryTokens: number;
  savedTokens: number;
  savedPercent: number;
  compactions: number;
  summarizerTokens: number;
  netSavedTokens: number;
  netSavedPercent: number;
}

describe('mnemo replay', () => {
  it('prints exactly one JSON object with the contract fields when --json is given', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(10));

    const run = await runMnemo(['replay', 'mesh.jsonl', '--json', '--max-tokens', '120'], { cwd: work.path });

    expect(run.code).toBe(0);
    expect(run.stdout.endsWith('\n')).toBe(true);
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    const result = JSON.parse(run.stdout) as Record<string, number | string>;
    expect(Object.keys(result)).toEqual([...contractFields, ...compactionFields]);
    expect(result).toMatchObject({ policy: 'token-window', maxTokens: 120, messages: 20, requests: 10 });
    const { sentTokens, fullHistoryTokens, savedTokens, savedPercent } = result as {
      sentTokens: number;
      fullHistoryTokens: number;
      savedTokens: number;
      savedPercent: number;
    };
    expect(sentTokens).toBeGreaterThan(0);
    expect(sentTokens).toBeLessThanOrEqual(10 * 120);
    expect(fullHistoryTokens).toBeGreaterThan(sentTokens);
    expect(savedTokens).toBe(fullHistoryTokens - sentTokens);
    expect(savedPercent).toBeGreaterThan(0);
    expect(savedPercent).toBeLessThanOrEqual(100);
    // token-window sends no summary: it pays for no compaction.
    expect(result).toMatchObject({
      compactions: 0,
      summarizerTokens: 0,
      netSavedTokens: savedTokens,
      netSavedPercent: savedPercent,
    });
    expect(run.stderr).toBe('');
  });

  it('reports the summarizer tokens and the savings net of them for --policy summary', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(30));

    const run = await runMnemo(['replay', 'mesh.jsonl', '--json', '--policy', 'summary', '--max-tokens', '300'], {
      cwd: work.path,
    });

    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as ReplayJson;
    expect(Object.keys(result)).toEqual([...contractFields, ...compactionFields]);
    expect(result.policy).toBe('summary');
    expect(result.compactions).toBeGreaterThan(0);
    expect(result.summarizerTokens).toBeGreaterThan(0);
    expect(result.netSavedTokens).toBe(result.fullHistoryTokens - result.sentTokens - result.summarizerTokens);
    expect(result.netSavedPercent).toBeCloseTo((100 * result.netSavedTokens) / result.fullHistoryTokens, 0);
    expect(result.netSavedPercent).toBeLessThan(result.savedPercent);
  });

  it('gives the same numbers when a replay is repeated, compaction included', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(20));
    const args = ['replay', 'mesh.jsonl', '--json', '--policy', 'meshai', '--max-tokens', '400'];

    const first = await runMnemo(args, { cwd: work.path });
    const second = await runMnemo(args, { cwd: work.path });

    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ policy: 'meshai', maxTokens: 400, requests: 20 });
    expect((JSON.parse(first.stdout) as ReplayJson).compactions).toBeGreaterThan(0);
    expect(second.stdout).toBe(first.stdout);
  });

  it('reports the chosen policy with --policy', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(6));

    const run = await runMnemo(['replay', 'mesh.jsonl', '--json', '--policy', 'window', '--window-turns', '1'], {
      cwd: work.path,
    });

    expect(JSON.parse(run.stdout)).toMatchObject({ policy: 'window', maxTokens: 2000, requests: 6 });
  });

  it('prints a table comparing every policy without --json', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(8));

    const run = await runMnemo(['replay', 'mesh.jsonl', '--max-tokens', '200'], { cwd: work.path });

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('replay of mesh.jsonl: 16 messages, 8 requests, budget 200 tokens per request');
    expect(run.stdout).toMatch(
      /^policy\s+requests\s+sent tokens\s+full history\s+saved tokens\s+saved\s+compactions\s+summarizer tokens\s+net saved$/m,
    );
    for (const policy of ['full', 'window', 'token-window', 'summary', 'hybrid', 'meshai'])
      expect(run.stdout).toMatch(new RegExp(`^${policy}\\s+8\\s+`, 'm'));
    expect(run.stdout).toContain(
      'net saved = (full history − sent − summarizer input − summarizer output) / full history',
    );
  });

  it('exits 2 naming the line of a broken line and stores nothing', async () => {
    const lines = meshTranscript(3).split('\n');
    lines.splice(2, 0, '{"role":"user","content":');
    await writeFile(join(work.path, 'broken.jsonl'), lines.join('\n'));
    const db = join(work.path, 'replay.db');

    const run = await runMnemo(['replay', 'broken.jsonl', '--db', db], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mnemo: broken\.jsonl line 3: is not valid JSON/);
    expect(run.stderr).not.toContain('    at ');
    expect(run.stdout).toBe('');
    expect((await readStoredMessages(db)).size).toBe(0);
  });

  it('exits 2 naming an unknown role', async () => {
    await writeFile(
      join(work.path, 'roles.jsonl'),
      '{"role":"user","content":"hi"}\n{"role":"bot","content":"hello"}\n',
    );

    const run = await runMnemo(['replay', 'roles.jsonl'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('roles.jsonl line 2: role must be one of');
    expect(run.stderr).toContain('(got "bot")');
  });

  it('exits 2 without a stack trace when the file does not exist', async () => {
    const run = await runMnemo(['replay', 'missing.jsonl'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`mnemo: cannot read ${join(work.path, 'missing.jsonl')}: no such file\n`);
  });

  it('exits 2 for a budget too small for the system prompt, before storing anything', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(2));
    const db = join(work.path, 'replay.db');

    const run = await runMnemo(
      [
        'replay',
        'mesh.jsonl',
        '--db',
        db,
        '--max-tokens',
        '10',
        '--system',
        'Answer in metric units only, never with emoji.',
      ],
      {
        cwd: work.path,
      },
    );

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mnemo: the system prompt alone needs \d+ tokens, over maxTokens 10/);
    expect((await readStoredMessages(db)).size).toBe(0);
  });

  it('keeps the replay in a new conversation when --db is given', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(4));

    const run = await runMnemo(['replay', 'mesh.jsonl', '--db', 'kept.db', '--json'], { cwd: work.path });

    expect(run.code).toBe(0);
    const stored = await readStoredMessages(join(work.path, 'kept.db'));
    expect([...stored.keys()]).toEqual([expect.stringMatching(/^replay-mesh-\d{8}T\d{9}Z$/)]);
    expect([...stored.values()][0]).toHaveLength(8);
    expect(run.stderr).toContain('as conversation replay-mesh-');
  });

  it('does not create a database without --db', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(2));

    await runMnemo(['replay', 'mesh.jsonl', '--json'], { cwd: work.path, env: { MNEMO_DB: 'env.db' } });

    expect(existsSync(join(work.path, 'env.db'))).toBe(false);
    expect(existsSync(join(work.path, 'mnemo.db'))).toBe(false);
  });

  it('replays a LoCoMo-format file, choosing the sample with --conversation', async () => {
    const samples = [
      {
        sample_id: 's-1',
        conversation: { speaker_a: 'A', speaker_b: 'B', session_1: [{ speaker: 'A', dia_id: 'D1:1', text: 'one' }] },
      },
      {
        sample_id: 's-2',
        conversation: {
          speaker_a: 'C',
          speaker_b: 'D',
          session_1_date_time: '1:56 pm on 8 May, 2023',
          session_1: [
            { speaker: 'C', dia_id: 'D1:1', text: 'Any news from the ridge?' },
            { speaker: 'D', dia_id: 'D1:2', text: 'The relay is up.', blip_caption: 'a photo of a mast' },
            { speaker: 'C', dia_id: 'D1:3', text: 'Great.' },
          ],
        },
      },
    ];
    await writeFile(join(work.path, 'sample.json'), JSON.stringify(samples));

    const run = await runMnemo(['replay', 'sample.json', '--conversation', 's-2', '--json'], { cwd: work.path });

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ messages: 3, requests: 1 });
  });
});
