import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMemoryError, type Scope } from '@mnemo/core';
import { makeNewMessage, runStoreConformance } from '@mnemo/core/testing';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from './sqlite-store.js';

// Every store of a test gets its own directory; the lifecycle test opens a second store, so cleanup
// removes all directories made since the last cleanup.
const temporaryDirectories: string[] = [];

function freshDatabasePath(): string {
  const directory = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-'));
  temporaryDirectories.push(directory);
  return join(directory, 'mnemo.db');
}

function removeTemporaryDirectories(): void {
  for (const directory of temporaryDirectories.splice(0)) rmSync(directory, { recursive: true, force: true });
}

runStoreConformance({
  name: 'SqliteStore (file)',
  createStore: () => createSqliteStore({ path: freshDatabasePath() }),
  cleanup: removeTemporaryDirectories,
});

runStoreConformance({ name: 'SqliteStore (:memory:)', createStore: () => createSqliteStore({ path: ':memory:' }) });

const scope: Scope = { tenantId: 'tenant-a', userId: 'user-1', conversationId: 'conv-1' };

describe('createSqliteStore', () => {
  const opened: SqliteStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    removeTemporaryDirectories();
  });

  it('refuses a path whose directory does not exist with invalid_input naming the directory', () => {
    const missing = join(freshDatabasePath(), '..', 'no-such-dir', 'mnemo.db');
    expect(() => createSqliteStore({ path: missing })).toThrow(
      expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining('no-such-dir') as unknown }),
    );
  });

  it('refuses bad options with invalid_input when the path is empty or the timeout negative', () => {
    expect(() => createSqliteStore({ path: '' })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(() => createSqliteStore({ path: ':memory:', busyTimeoutMs: -1 })).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
  });

  it('puts a file database in WAL mode so readers and a writer of several processes can share it', async () => {
    const path = freshDatabasePath();
    opened.push(createSqliteStore({ path }));
    const raw = new Database(path);
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      raw.close();
    }
  });

  it('reads but refuses writes when opened read-only', async () => {
    const path = freshDatabasePath();
    const writer = createSqliteStore({ path });
    opened.push(writer);
    await writer.appendMessages(scope, [makeNewMessage('kept')]);
    const reader = createSqliteStore({ path, readonly: true });
    opened.push(reader);
    expect((await reader.listMessages(scope)).map((message) => message.content)).toEqual(['kept']);
    await expect(reader.appendMessages(scope, [makeNewMessage('refused')])).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'storage_failed'),
    );
    expect((await writer.listMessages(scope)).map((message) => message.content)).toEqual(['kept']);
  });

  it('reports a missing file opened read-only as not_found instead of creating it', () => {
    const path = freshDatabasePath();
    expect(() => createSqliteStore({ path, readonly: true })).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('SqliteStore', () => {
  const opened: SqliteStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    removeTemporaryDirectories();
  });

  it('fails with retryable unavailable and stores nothing when another connection holds the write lock past the timeout', async () => {
    const path = freshDatabasePath();
    const store = createSqliteStore({ path, busyTimeoutMs: 0 });
    opened.push(store);
    const other = new Database(path);
    try {
      other.exec('BEGIN IMMEDIATE');
      const attempt = store.appendMessages(scope, [makeNewMessage('blocked')]);
      await expect(attempt).rejects.toSatisfy(
        (error: unknown) => isMemoryError(error, 'unavailable') && error.cause !== undefined,
      );
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    expect(await store.listMessages(scope)).toEqual([]);
    expect(await store.getConversation(scope)).toBeUndefined();
  });

  it('waits for a lock held by another connection off the event loop, then stores the write once', async () => {
    const path = freshDatabasePath();
    const store = createSqliteStore({ path, busyTimeoutMs: 10_000 });
    opened.push(store);
    const other = new Database(path);
    try {
      other.exec('BEGIN IMMEDIATE');
      const events: string[] = [];
      const attempt = store.appendMessages(scope, [makeNewMessage('waited')]).then(() => events.push('appended'));
      // Timers run and other calls are answered while the write waits: nothing sleeps in the driver.
      await new Promise((resolve) => setTimeout(resolve, 30));
      events.push('timer');
      expect(await store.listMessages(scope)).toEqual([]);
      expect((await store.checkReadiness()).checks.find((check) => check.name === 'write')).toMatchObject({
        ok: true,
        message: expect.stringMatching(/write lock/) as unknown,
      });
      other.exec('ROLLBACK');
      await attempt;
      expect(events).toEqual(['timer', 'appended']);
    } finally {
      other.close();
    }
    expect((await store.listMessages(scope)).map((message) => message.content)).toEqual(['waited']);
  });

  it('reads and writes in its readiness, and says how much of the disk is free', async () => {
    const store = createSqliteStore({ path: freshDatabasePath() });
    opened.push(store);
    const readiness = await store.checkReadiness();
    expect(readiness.ready).toBe(true);
    expect(readiness.checks.map((check) => [check.name, check.ok])).toEqual([
      ['read', true],
      ['write', true],
      ['disk', true],
      ['integrity', true],
    ]);
    expect(readiness.checks[2]!.message).toMatch(/^\d+ bytes free$/);
  });

  it('finds damaged pages on a thread and fails readiness from then on; a sound file has none', async () => {
    const path = freshDatabasePath();
    const writer = createSqliteStore({ path });
    for (let index = 0; index < 200; index += 1)
      await writer.appendMessages(scope, [makeNewMessage(`message ${index} ${'of some length '.repeat(12)}`)]);
    expect(await writer.checkIntegrity()).toEqual([]);
    expect((await writer.checkReadiness()).ready).toBe(true);
    await writer.close();
    const bytes = readFileSync(path);
    const middle = Math.floor(bytes.length / 4096 / 2) * 4096;
    bytes.fill(0x5a, middle, middle + 3 * 4096);
    writeFileSync(path, bytes);
    const store = createSqliteStore({ path });
    opened.push(store);
    expect((await store.checkIntegrity()).length).toBeGreaterThan(0);
    expect((await store.checkReadiness()).checks.find((check) => check.name === 'integrity')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/damaged/) as unknown,
    });
  });

  it('does nothing and fails with unavailable when the signal is already aborted', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    opened.push(store);
    const controller = new AbortController();
    controller.abort();
    const attempt = store.appendMessages(scope, [makeNewMessage('late')], { signal: controller.signal });
    await expect(attempt).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'unavailable'));
    expect(await store.listMessages(scope)).toEqual([]);
  });

  it('refuses a non-canonical createdAt with invalid_input rather than storing an altered time', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    opened.push(store);
    const attempt = store.appendMessages(scope, [
      makeNewMessage('ok'),
      makeNewMessage('bad', { createdAt: '2024-05-01T12:00:00+02:00' }),
    ]);
    await expect(attempt).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'invalid_input'));
    expect(await store.listMessages(scope)).toEqual([]);
  });

  it('returns the first stored message for a key repeated inside one batch and stores it once', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    opened.push(store);
    const [first, repeat, other] = await store.appendMessages(scope, [
      makeNewMessage('same', { idempotencyKey: 'k' }),
      makeNewMessage('same', { idempotencyKey: 'k' }),
      makeNewMessage('other'),
    ]);
    expect(repeat).toEqual(first);
    expect(other?.seq).toBe(2);
    expect(await store.getConversation(scope)).toMatchObject({ messageCount: 2, totalTokens: 9 });
  });

  it('keeps every message, counter and ledger entry when the file is closed and reopened', async () => {
    const path = freshDatabasePath();
    const first = createSqliteStore({ path });
    const appended = await first.appendMessages(scope, [
      makeNewMessage('one', { metadata: { a: [1, 2] } }),
      makeNewMessage('two'),
    ]);
    await first.insertUsage(scope, {
      kind: 'context',
      policy: 'full',
      sentTokens: 3,
      fullHistoryTokens: 6,
      createdAt: new Date().toISOString(),
    });
    await first.close();
    const second = createSqliteStore({ path });
    opened.push(second);
    expect(await second.listMessages(scope)).toEqual(appended);
    expect(await second.getConversation(scope)).toMatchObject({ messageCount: 2, totalTokens: 6 });
    expect(await second.getUsageTotals(scope)).toMatchObject({
      requests: 1,
      sentTokens: 3,
      fullHistoryTokens: 6,
      savedTokens: 3,
    });
  });

  it('ignores a second close', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.close();
    await expect(store.close()).resolves.toBeUndefined();
    await expect(store.getConversation(scope)).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'unavailable'),
    );
  });
});
