import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMemory } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, runMnemo, startMnemo } from './run-mnemo.js';

const day = 86_400_000;
let work: { path: string; remove: () => Promise<void> };

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

/**
 * Two users, each with a message every ten days back from today (100 days to 0), one with a unique
 * phrase in its oldest message; the clock is the real one, the messages' times are in the past.
 */
async function storeAgedMessages(db: string): Promise<void> {
  const memory = createMemory({ store: createSqliteStore({ path: db }), worker: { autoStart: false } });
  try {
    for (const userId of ['alice', 'bob']) {
      const messages = Array.from({ length: 11 }, (_, index) => ({
        role: 'user' as const,
        content:
          index === 0 ? `the zorblaxian passphrase of ${userId} is kept here` : `day ${index * 10} note of ${userId}`,
        createdAt: new Date(Date.now() - (100 - index * 10) * day - 60_000).toISOString(),
      }));
      await memory.append({ userId, conversationId: `${userId}-chat` }, messages);
    }
    await memory.runPendingJobs();
  } finally {
    await memory.close();
  }
}

async function messageCount(db: string, userId: string): Promise<number> {
  const memory = createMemory({
    store: createSqliteStore({ path: db, readonly: true }),
    compaction: false,
    worker: { autoStart: false },
  });
  try {
    return (await memory.listMessages({ userId, conversationId: `${userId}-chat` })).length;
  } finally {
    await memory.close();
  }
}

describe('mnemo retention', () => {
  it('reports with --dry-run, then erases messages past the policy per user, with a per-user override from the config file', async () => {
    const db = join(work.path, 'aged.db');
    await storeAgedMessages(db);
    await writeFile(
      join(work.path, 'mnemo.config.json'),
      JSON.stringify({ retention: { maxAgeDays: 45, tenants: { default: { users: { bob: null } } } } }),
    );

    const dry = await runMnemo(['retention', '--db', 'aged.db', '--dry-run', '--json'], { cwd: work.path });
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, users: [{ tenantId: 'default', userId: 'alice' }] });
    expect(await messageCount(db, 'alice')).toBe(11);

    const run = await runMnemo(['retention', '--db', 'aged.db'], { cwd: work.path });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/default\s+alice\s+\S+\s+6\b/);
    expect(await messageCount(db, 'alice')).toBe(5);
    expect(await messageCount(db, 'bob')).toBe(11);
    const again = await runMnemo(['retention', '--db', 'aged.db'], { cwd: work.path });
    expect(again.stdout).toMatch(/nothing to erase/);

    // --max-age-days overrides the settings for one run; --user limits it.
    const bob = await runMnemo(['retention', '--db', 'aged.db', '--max-age-days', '25', '--user', 'bob', '--json'], {
      cwd: work.path,
    });
    expect((JSON.parse(bob.stdout) as { users: unknown }).users).toMatchObject([
      { userId: 'bob', receipt: { messages: 8 } },
    ]);
    expect(await messageCount(db, 'bob')).toBe(3);
  });

  it('is run by the worker processes when MNEMO_RETENTION_DAYS is set, leaving the phrase in no byte of the file', async () => {
    const db = join(work.path, 'aged.db');
    await storeAgedMessages(db);
    const worker = await startMnemo(['worker', '--db', 'aged.db'], {
      cwd: work.path,
      env: { MNEMO_RETENTION_DAYS: '30' },
      ready: /worker started/,
    });
    try {
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && !/retention: erased/.test(worker.stdout()))
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect(worker.stdout()).toMatch(/retention: erased messages past their policy/);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    // Older than 30 days: the messages of days 0 to 70 (the one of day 70 is 30 days and a minute old).
    expect(await messageCount(db, 'alice')).toBe(3);
    expect(await messageCount(db, 'bob')).toBe(3);
    const bytes = Buffer.concat([await readFile(db), await readFile(`${db}-wal`).catch(() => Buffer.alloc(0))]);
    expect(bytes.includes('zorblaxian')).toBe(false);
    const missing = await runMnemo(['retention', '--db', 'aged.db'], { cwd: work.path });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no retention policy/);
  }, 40_000);
});
