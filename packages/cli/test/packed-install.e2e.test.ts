import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkDirectory } from './run-mnemo.js';

const run = promisify(execFile);
const repository = fileURLToPath(new URL('../../..', import.meta.url));
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
const timings: Record<string, number> = {};
let work: Awaited<ReturnType<typeof makeWorkDirectory>>;
let app: string;

async function timed<T>(step: string, action: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await action();
  } finally {
    timings[step] = Math.round(performance.now() - started);
  }
}

/** The first fenced block of `language` after the heading `heading` in the README. */
async function readmeBlock(heading: string, language: string): Promise<string> {
  const readme = await readFile(join(repository, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(section);
  if (block === null) throw new Error(`README: no ${language} block after ${heading}`);
  return block[1]!;
}

/**
 * The packages as a user outside the clone gets them: `npm pack --workspaces` (the README's command),
 * the tarballs installed into a new empty project, the README's library example run there and
 * `mnemo serve` started from it. Dependencies come from npm's cache first (`--prefer-offline`; CI's
 * `npm ci` filled it); better-sqlite3's native build is the clone's (same version, same Node), so the
 * test does not compile it again (`--ignore-scripts`): a user's install compiles or downloads it.
 */
beforeAll(async () => {
  work = await makeWorkDirectory();
  const tarballs = join(work.path, 'mnemo-packages');
  app = join(work.path, 'app');
  await mkdir(tarballs);
  await mkdir(app);
  await timed('pack', () =>
    run('npm', ['pack', '--workspaces', '--pack-destination', tarballs, '--silent'], { cwd: repository, env }),
  );
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({ name: 'bot', version: '1.0.0', private: true, type: 'module' }),
  );
  const files = (await readdir(tarballs)).filter((file) => file.endsWith('.tgz')).map((file) => join(tarballs, file));
  await timed('install', () =>
    run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', ...files], {
      cwd: app,
      env,
      timeout: 170_000,
    }),
  );
  const binary = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  await mkdir(join(app, 'node_modules', 'better-sqlite3', 'build', 'Release'), { recursive: true });
  await copyFile(join(repository, binary), join(app, binary));
}, 180_000);

afterAll(async () => {
  console.log(`packed install (ms): ${JSON.stringify(timings)}`);
  await work?.remove();
});

describe('the packages, packed and installed into a new project', () => {
  it('installs every package with its types and the mnemo bin', async () => {
    const installed = JSON.parse(await readFile(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(installed.dependencies).sort()).toEqual([
      '@mnemo/ai-sdk',
      '@mnemo/core',
      '@mnemo/models',
      '@mnemo/postgres',
      '@mnemo/server',
      '@mnemo/sqlite',
      'mnemo',
    ]);
    await writeFile(
      join(app, 'check.ts'),
      [
        "import { createMemory, type Memory } from '@mnemo/core';",
        "import { createSqliteStore } from '@mnemo/sqlite';",
        "import { createPostgresStore } from '@mnemo/postgres';",
        "import { UseLiteEmbedder } from '@mnemo/models';",
        "import { createServerApp } from '@mnemo/server';",
        "import { createMcpTools } from '@mnemo/server/mcp';",
        "import { mnemoMiddleware } from '@mnemo/ai-sdk';",
        "const memory: Memory = createMemory({ store: createSqliteStore({ path: ':memory:' }) });",
        'export const used = [memory, createPostgresStore, UseLiteEmbedder, createServerApp, createMcpTools, mnemoMiddleware];',
      ].join('\n'),
    );
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['check.ts'],
      }),
    );
    await timed('typecheck', () =>
      run(process.execPath, [join(repository, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], {
        cwd: app,
        env,
      }),
    );
    const bin = await run(join(app, 'node_modules', '.bin', 'mnemo'), ['--version'], { cwd: app, env });
    expect(bin.stdout.trim()).toBe('0.1.0');
  }, 60_000);

  it("runs the README's library example", async () => {
    await writeFile(join(app, 'example.mjs'), await readmeBlock('## As a library', 'ts'));
    const { stdout } = await timed('example', () => run(process.execPath, ['example.mjs'], { cwd: app, env }));
    // report.sentTokens, report.fullHistoryTokens, report.savedPercent
    expect(stdout.trim()).toMatch(/^\d+ \d+ -?\d+(\.\d+)?$/);
  }, 60_000);

  it('starts mnemo serve through npx, which answers /health', async () => {
    const child = spawn('npx', ['mnemo', 'serve', '--port', '0', '--workers', '0', '--db', 'bot.db'], {
      cwd: app,
      env,
    });
    try {
      const url = await timed(
        'serve',
        () =>
          new Promise<string>((resolve, reject) => {
            let stdout = '';
            child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
              stdout += chunk;
              const line = /^mnemo listening on (http:\/\/\S+)$/m.exec(stdout);
              if (line !== null) resolve(line[1]!);
            });
            child.once('close', (code) => reject(new Error(`npx mnemo serve exited with ${code}`)));
          }),
      );
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
    } finally {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('close', resolve));
    }
  }, 60_000);
});
