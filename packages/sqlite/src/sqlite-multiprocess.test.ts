import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scope } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from './sqlite-store.js';

// The workers import the built package, as another program would; `npm run build` precedes the tests.
const fixtures = fileURLToPath(new URL('../test-fixtures/', import.meta.url));
const builtEntry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const scope: Scope = { tenantId: 'tenant-mp', userId: 'user-mp', conversationId: 'shared' };
const writerCount = 4;
const appendsPerWriter = 100;
const total = writerCount * appendsPerWriter;
// Generous: five Node processes start here, and CI may run other test files beside this one.
const processTestTimeoutMs = 120_000;

interface Returned {
  readonly key: string;
  readonly id: string;
  readonly seq: number;
}
interface WriterReport {
  readonly appended: Returned[];
  readonly retried: Returned[];
}
interface ReaderReport {
  readonly reads: number;
  readonly finalCount: number;
  readonly distinctCounts: number;
  readonly violations: unknown[];
}

interface Worker<T> {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly done: Promise<T>;
}

const children: ChildProcess[] = [];

function startWorker<T>(script: string, args: readonly string[]): Worker<T> {
  // No inherited execArgv: the test runner's loader flags have no business in a plain Node child.
  const child = fork(join(fixtures, script), args, { execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: { type: string }) => {
      if (message.type === 'ready') resolve();
    });
    void exited.then((code) => reject(new Error(`${script} exited with ${code} before it was ready:\n${stderr}`)));
  });
  const done = new Promise<T>((resolve, reject) => {
    let report: T | undefined;
    child.on('message', (message: { type: string }) => {
      if (message.type === 'done') report = message as T;
    });
    void exited.then((code) => {
      if (code === 0 && report !== undefined) resolve(report);
      else reject(new Error(`${script} exited with ${code} without a report:\n${stderr}`));
    });
  });
  return { child, ready, done };
}

function startWriters(path: string): Worker<WriterReport>[] {
  return Array.from({ length: writerCount }, (_, writer) =>
    startWorker<WriterReport>('append-worker.mjs', [path, String(writer), String(appendsPerWriter)]),
  );
}

describe('SqliteStore across processes', () => {
  let directory: string;
  let path: string;
  let store: SqliteStore;

  beforeAll(() => {
    if (!existsSync(builtEntry)) throw new Error(`${builtEntry} is missing: run \`npm run build\` before the tests`);
  });
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-mp-'));
    path = join(directory, 'mnemo.db');
    // Created and migrated here, and kept open, so every child opens a current WAL database.
    store = createSqliteStore({ path });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it(
    'stores exactly 400 messages with gapless seqs when 4 processes append 100 each to one conversation with retries',
    async () => {
      const writers = startWriters(path);
      await Promise.all(writers.map((writer) => writer.ready));
      for (const writer of writers) writer.child.send({ type: 'go' });
      const reports = await Promise.all(writers.map((writer) => writer.done));

      const stored = await store.listMessages(scope);
      expect(stored.map((message) => message.seq)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
      expect(new Set(stored.map((message) => message.id)).size).toBe(total);
      expect(new Set(stored.map((message) => message.content)).size).toBe(total);
      expect(await store.getConversation(scope)).toMatchObject({ messageCount: total });

      const byKey = new Map(stored.map((message) => [message.idempotencyKey, message]));
      reports.forEach((report, writer) => {
        // What each process was told matches what is stored, and a retry got the original back.
        for (const entry of [...report.appended, ...report.retried]) {
          expect(byKey.get(entry.key)).toMatchObject({ id: entry.id, seq: entry.seq, content: entry.key });
        }
        expect(report.retried.length).toBeGreaterThan(0);
        const own = stored
          .filter((message) => message.content.startsWith(`w${writer}-`))
          .map((message) => message.content);
        expect(own).toEqual(report.appended.map((entry) => entry.key));
        expect(own).toHaveLength(appendsPerWriter);
      });

      // A retry from yet another process, long after, still returns the stored messages and adds none.
      const sample = [stored[0], stored[total - 1]].map((message) =>
        makeNewMessage(message?.content ?? '', { idempotencyKey: message?.idempotencyKey }),
      );
      const replayed = await store.appendMessages(scope, sample);
      expect(replayed.map((message) => message.seq)).toEqual([1, total]);
      expect((await store.getConversation(scope))?.messageCount).toBe(total);
    },
    processTestTimeoutMs,
  );

  it(
    'never shows a reader process a gap, a duplicate or a shrinking history while 4 processes append',
    async () => {
      const reader = startWorker<ReaderReport>('read-worker.mjs', [path]);
      const writers = startWriters(path);
      await Promise.all([reader, ...writers].map((worker) => worker.ready));
      reader.child.send({ type: 'go' });
      for (const writer of writers) writer.child.send({ type: 'go' });
      await Promise.all(writers.map((writer) => writer.done));
      reader.child.send({ type: 'stop' });
      const report = await reader.done;

      expect(report.violations).toEqual([]);
      expect(report.reads).toBeGreaterThanOrEqual(1);
      expect(report.finalCount).toBe(total);
      expect((await store.listMessages(scope)).map((message) => message.seq)).toEqual(
        Array.from({ length: total }, (_, index) => index + 1),
      );
    },
    processTestTimeoutMs,
  );
});
