import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, runMnemo } from './run-mnemo.js';

let work: Awaited<ReturnType<typeof makeWorkDirectory>>;

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

describe('mnemo bench locomo without its data', () => {
  it('exits 2 naming the path it looked at, where LoCoMo comes from and the --data option', async () => {
    const run = await runMnemo(['bench', 'locomo', '--data', 'locomo10.json'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no LoCoMo data at ${work.path}/locomo10.json`);
    expect(run.stderr).toContain('mnemo does not ship LoCoMo');
    expect(run.stderr).toContain('https://github.com/snap-research/locomo');
    expect(run.stderr).toContain('--data <path to locomo10.json>');
  });
});
