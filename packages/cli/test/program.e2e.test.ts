import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, runMnemo } from './run-mnemo.js';

let work: { path: string; remove: () => Promise<void> };

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

describe('mnemo', () => {
  it('prints help listing the commands and the environment variables', async () => {
    const run = await runMnemo(['--help'], { cwd: work.path });

    expect(run.code).toBe(0);
    for (const word of [
      'replay',
      'chat',
      'stats',
      'compact',
      'summaries',
      'expand',
      'meshai',
      'MNEMO_LLM_BASE_URL',
      'MNEMO_DB',
    ])
      expect(run.stdout).toContain(word);
  });

  it('prints the version of the package', async () => {
    const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };

    const run = await runMnemo(['--version'], { cwd: work.path });

    expect(run).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
  });

  it('exits 2 on an unknown option or a bad number', async () => {
    expect((await runMnemo(['replay', 'x.jsonl', '--nope'], { cwd: work.path })).code).toBe(2);
    const bad = await runMnemo(['replay', 'x.jsonl', '--max-tokens', 'lots'], { cwd: work.path });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must be a positive integer');
  });

  it('exits 2 naming the file and the field of a broken config file', async () => {
    await writeFile(join(work.path, 'mnemo.config.json'), JSON.stringify({ context: { policy: 'everything' } }));

    const run = await runMnemo(['stats'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`config file ${join(work.path, 'mnemo.config.json')}: context.policy`);
  });
});
