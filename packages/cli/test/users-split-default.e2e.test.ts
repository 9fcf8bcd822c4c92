import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMnemo } from './run-mnemo.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-split-default-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const turns = (tag: string, count: number) =>
  Array.from({ length: count }, (_, index) => ({
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `${tag} message ${index}`,
    createdAt: new Date(Date.UTC(2026, 10, 1, 12, index)).toISOString(),
    metadata: { index },
    ...(index === 0 ? { idempotencyKey: `${tag}-first` } : {}),
  }));

describe('mnemo users split-default', () => {
  it('moves every conversation of user "default" to its own user, finishes an interrupted copy, skips a clash, and is idempotent', async () => {
    // A store as versions before 0.2 wrote it: every seed and proxy conversation under user "default".
    const path = join(directory, 'mnemo.db');
    const memory = createMemory({ store: createSqliteStore({ path }), worker: { autoStart: false } });
    await memory.append({ conversationId: 'node-1' }, turns('one', 5));
    await memory.append({ conversationId: 'node-2' }, turns('two', 3));
    await memory.append({ conversationId: 'node-3' }, turns('three', 4));
    // An interrupted earlier run had copied two of node-2's messages; node-3's own user holds something else.
    await memory.append({ userId: 'node-2', conversationId: 'node-2' }, turns('two', 2));
    await memory.append({ userId: 'node-3', conversationId: 'node-3' }, [
      { role: 'user', content: 'not the same conversation' },
    ]);
    await memory.close();

    const dryRun = await runMnemo(['users', 'split-default', '--db', 'mnemo.db', '--dry-run', '--json'], {
      cwd: directory,
    });
    expect(dryRun.code).toBe(0);
    expect((JSON.parse(dryRun.stdout) as { conversations: unknown }).conversations).toEqual([
      { conversationId: 'node-1', outcome: 'moved', messages: 5 },
      { conversationId: 'node-2', outcome: 'moved', messages: 3 },
      { conversationId: 'node-3', outcome: 'skipped', messages: 4 },
    ]);

    const run = await runMnemo(['users', 'split-default', '--db', 'mnemo.db'], { cwd: directory });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/node-1\s+moved\s+5/);
    expect(run.stdout).toContain('1 skipped');

    const after = createMemory({ store: createSqliteStore({ path }), worker: { autoStart: false } });
    try {
      const moved = await after.listMessages({ userId: 'node-1', conversationId: 'node-1' });
      expect(
        moved.map(({ seq, role, content, createdAt, metadata, idempotencyKey }) => ({
          seq,
          role,
          content,
          createdAt,
          metadata,
          idempotencyKey,
        })),
      ).toEqual(turns('one', 5).map((turn, index) => ({ seq: index + 1, idempotencyKey: undefined, ...turn })));
      expect(
        (await after.listMessages({ userId: 'node-2', conversationId: 'node-2' })).map((message) => message.content),
      ).toEqual(turns('two', 3).map((turn) => turn.content));
      expect(await after.stats({ conversationId: 'node-1' })).toBeUndefined();
      expect(await after.stats({ conversationId: 'node-2' })).toBeUndefined();
      // The clash stays where it was, untouched on both sides.
      expect((await after.stats({ conversationId: 'node-3' }))?.messageCount).toBe(4);
      expect((await after.stats({ userId: 'node-3', conversationId: 'node-3' }))?.messageCount).toBe(1);
    } finally {
      await after.close();
    }

    const again = await runMnemo(['users', 'split-default', '--db', 'mnemo.db', '--json'], { cwd: directory });
    expect((JSON.parse(again.stdout) as { conversations: unknown }).conversations).toEqual([
      { conversationId: 'node-3', outcome: 'skipped', messages: 4 },
    ]);
  });
});
