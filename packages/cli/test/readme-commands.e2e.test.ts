import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, makeWorkDirectory, startMnemo, type StartedMnemo } from './run-mnemo.js';

/**
 * The READMEs' fenced commands that run offline, run as written: `npx mnemo` is the clone's mnemo (a
 * `mnemo` on PATH, since `npx mnemo` outside the clone would fetch another package), the server's port
 * is the ephemeral one, and the placeholders (`<summary id>`, `replay-…-…`) are the ids the earlier
 * lines printed. Printed figures in the READMEs must be what the commands print now.
 */
const repository = fileURLToPath(new URL('../../..', import.meta.url));
const run = promisify(execFile);
let work: Awaited<ReturnType<typeof makeWorkDirectory>>;
let env: Record<string, string>;

beforeAll(async () => {
  work = await makeWorkDirectory();
  const bin = join(work.path, 'bin');
  await mkdir(bin);
  await writeFile(
    join(bin, 'mnemo'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(cliPath)} "$@"\n`,
  );
  await chmod(join(bin, 'mnemo'), 0o755);
  await symlink(join(repository, 'examples'), join(work.path, 'examples'));
  env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: work.path };
});

afterAll(async () => {
  await work.remove();
});

async function readme(path: string): Promise<string> {
  return readFile(join(repository, path), 'utf8');
}

/** The fenced `language` blocks of a README, in order. */
function blocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);
}

async function sh(line: string): Promise<string> {
  const { stdout } = await run('bash', ['-c', line.replace(/\bnpx mnemo /g, 'mnemo ')], {
    cwd: work.path,
    env,
    timeout: 120_000,
  });
  return stdout;
}

describe("the READMEs' commands", () => {
  it("README: the seed API's curl lines answer what the README shows", async () => {
    const text = await readme('README.md');
    const block = blocks(text, 'sh').find((candidate) => candidate.includes('/v1/memory/add'))!;
    const lines = block.split('\n').filter((line) => line.startsWith('curl '));
    const shown = /^# (\{.*\})$/m.exec(block)![1]!;
    let serve: StartedMnemo | undefined;
    try {
      serve = await startMnemo(['serve', '--port', '0', '--workers', '0', '--db', 'seed.db'], {
        cwd: work.path,
        ready: /^mnemo listening on http:\/\/(\S+)$/,
      });
      const outputs: string[] = [];
      for (const line of lines) outputs.push(await sh(line.replaceAll('127.0.0.1:8787', serve.ready[1]!)));
      expect(lines).toHaveLength(3);
      expect(JSON.parse(outputs[2]!)).toEqual(JSON.parse(shown));
    } finally {
      serve?.child.kill('SIGTERM');
      await serve?.exited;
    }
  }, 60_000);

  it('README: the replay line runs', async () => {
    const line = (await readme('README.md'))
      .split('\n')
      .find((candidate) => candidate.startsWith('npx mnemo replay '))!;
    expect(await sh(line)).toMatch(/full/);
  }, 120_000);

  it('packages/cli/README.md: replay --json prints the figures shown', async () => {
    const text = await readme('packages/cli/README.md');
    const command = /^With `--json`, stdout holds one line \(`(mnemo replay [^`]+)`/m.exec(text)![1]!;
    const shown = text.slice(text.indexOf(command)).match(/```json\n(.*)\n```/)![1]!;
    expect(JSON.parse(await sh(command))).toEqual(JSON.parse(shown));
  }, 120_000);

  it('packages/cli/README.md: replay into a store, then stats, summaries, expand and compact on it', async () => {
    const text = await readme('packages/cli/README.md');
    const block = blocks(text, 'sh').find((candidate) => candidate.includes('npx mnemo expand'))!;
    const lines = block.split('\n').filter((line) => line.startsWith('npx mnemo '));
    let conversation = '';
    let summary = '';
    for (const line of lines) {
      const resolved = line.replaceAll('replay-mesh-radio-node-7-…', conversation).replaceAll('<summary id>', summary);
      const output = await sh(resolved);
      if (line.includes(' replay ')) {
        conversation = (
          JSON.parse(await sh('mnemo stats --db bot.db --json')) as { conversations: { conversationId: string }[] }
        ).conversations[0]!.conversationId;
      }
      if (line.includes(' summaries ')) {
        const summaries = (
          JSON.parse(await sh(`mnemo summaries ${conversation} --db bot.db --json`)) as { summaries: { id: string }[] }
        ).summaries;
        summary = summaries.at(-1)!.id;
        expect(output).toContain(summary);
      }
      if (line.includes(' expand ')) expect(output).toContain(`summary ${summary}`);
    }
    expect(lines.map((line) => line.split(' ')[2])).toEqual(['replay', 'stats', 'summaries', 'expand', 'compact']);
  }, 180_000);
});
