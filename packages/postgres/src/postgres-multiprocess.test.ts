import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Job, type Scope } from '@mnemo/core';
import { readJobBacklog } from '@mnemo/core/internals';
import { makeNewMessage } from '@mnemo/core/testing';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { createTestSchemas, describeWithPostgres } from '../test/postgres-test-database.js';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';

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

interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  /** Resolves with the first message of `type` the child sends. */
  message<T>(type: string): Promise<T>;
  /** Resolves with the child's `done` report once it exited cleanly. */
  readonly done: Promise<Record<string, unknown>>;
}

const children: ChildProcess[] = [];

function startWorker(script: string, args: readonly string[]): Worker {
  // No inherited execArgv: the test runner's loader flags have no business in a plain Node child.
  const child = fork(join(fixtures, script), args, { execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const message = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      child.on('message', (received: { type: string }) => {
        if (received.type === type) resolve(received as T);
      });
      void exited.then((code) => reject(new Error(`${script} exited with ${code} before sending ${type}:\n${stderr}`)));
    });
  const ready = message<void>('ready').then(() => undefined);
  const report = message<Record<string, unknown>>('done');
  const done = Promise.all([report, exited]).then(([received, code]) => {
    if (code !== 0) throw new Error(`${script} exited with ${code}:\n${stderr}`);
    return received;
  });
  // A worker the test kills never reports; its unawaited `done` must not count as an unhandled rejection.
  done.catch(() => undefined);
  return { child, ready, message, done };
}

describeWithPostgres('PostgresStore across processes', (url) => {
  const schemas = createTestSchemas(url);
  let schema: string;
  let store: PostgresStore;

  beforeAll(() => {
    if (!existsSync(builtEntry)) throw new Error(`${builtEntry} is missing: run \`npm run build\` before the tests`);
  });
  beforeEach(async () => {
    schema = schemas.fresh();
    // Created and migrated here, so the children find a current schema (their own migration is a no-op).
    store = await createPostgresStore({ connectionString: url, schema });
  });
  afterEach(async () => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await store.close();
    await schemas.dropAll();
  });
  afterAll(() => schemas.close());

  it(
    'stores exactly 400 messages with gapless seqs when 4 processes append 100 each to one conversation with retries',
    async () => {
      const writers = Array.from({ length: writerCount }, (_, writer) =>
        startWorker('append-worker.mjs', [url, schema, String(writer), String(appendsPerWriter)]),
      );
      await Promise.all(writers.map((writer) => writer.ready));
      for (const writer of writers) writer.child.send({ type: 'go' });
      const reports = (await Promise.all(writers.map((writer) => writer.done))) as unknown as {
        appended: Returned[];
        retried: Returned[];
      }[];

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
        const own = stored.filter((message) => message.content.startsWith(`w${writer}-`));
        expect(own).toHaveLength(appendsPerWriter);
        // Each of the process's two appenders wrote its keys in order.
        for (const parity of [0, 1]) {
          const keys = own.map((message) => message.content).filter((key) => Number(key.slice(-3)) % 2 === parity);
          expect(keys).toEqual([...keys].sort());
        }
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
    'leases each of 60 jobs to exactly one of two processes draining the queue at once',
    async () => {
      const jobCount = 60;
      for (let index = 0; index < jobCount; index += 1) {
        await store.enqueueJob(
          { ...scope, conversationId: `c${index}` },
          { kind: 'compact', runAt: new Date(0).toISOString(), maxAttempts: 3 },
        );
      }
      const workers = ['p1', 'p2'].map((workerId) => startWorker('lease-worker.mjs', [url, schema, workerId, 'drain']));
      await Promise.all(workers.map((worker) => worker.ready));
      for (const worker of workers) worker.child.send({ type: 'go' });
      const reports = (await Promise.all(workers.map((worker) => worker.done))) as unknown as { leased: string[] }[];
      const leased = reports.flatMap((report) => report.leased);
      expect(leased).toHaveLength(jobCount);
      expect(new Set(leased).size).toBe(jobCount);
      expect((await readJobBacklog(store, {})).byStatus).toEqual({ pending: 0, running: 0, done: jobCount, failed: 0 });
    },
    processTestTimeoutMs,
  );

  it(
    'hands the job of a process killed while holding its lease to another worker once the lease expired',
    async () => {
      const queued = await store.enqueueJob(scope, {
        kind: 'compact',
        runAt: new Date(0).toISOString(),
        maxAttempts: 3,
      });
      const doomed = startWorker('lease-worker.mjs', [url, schema, 'doomed', 'hold']);
      await doomed.ready;
      doomed.child.send({ type: 'go' });
      const { job } = await doomed.message<{ job: Job }>('holding');
      expect(job).toMatchObject({ id: queued.id, leaseOwner: 'doomed', attempts: 1 });
      doomed.child.kill('SIGKILL');

      expect(
        await store.leaseJob({
          workerId: 'survivor',
          leaseMs: 60_000,
          now: new Date(Date.parse(job.leaseExpiresAt!) - 1).toISOString(),
        }),
      ).toBeUndefined();
      const taken = await store.leaseJob({ workerId: 'survivor', leaseMs: 60_000, now: job.leaseExpiresAt! });
      expect(taken).toMatchObject({ id: queued.id, leaseOwner: 'survivor', attempts: 2 });
      await store.completeJob(taken!, new Date().toISOString());
      expect((await store.listJobs(scope)).map((item) => item.status)).toEqual(['done']);
    },
    processTestTimeoutMs,
  );
});
