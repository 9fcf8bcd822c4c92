import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Job, Message, Scope } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, makeWorkDirectory, runMnemo } from '../run-mnemo.js';
import { AcknowledgedWriters, nothingLost, readWrittenConversations } from './acknowledged-writers.js';
import { recordFigures } from './reliability-figures.js';
import { postJson, startServe, waitFor, type ServedMnemo } from './served-mnemo.js';

// Faults of the machine around a SQLite `mnemo serve` (issue 20), each against the real CLI:
// another process (`sqlite3`) holding the write lock for 10 s, a full disk (an 8 MiB tmpfs), a database
// file that cannot be written (`chattr +i`), and a worker process that stops (SIGSTOP). Before: the held
// lock froze every request (/health 10 s); the full disk answered 500 and logged 18 stack traces a
// second; the unwritable file started "healthy"; the stopped worker was never noticed.
const run = promisify(execFile);
const ci = process.env['CI'] === 'true';

async function works(command: string, args: readonly string[]): Promise<boolean> {
  try {
    await run(command, [...args]);
    return true;
  } catch {
    return false;
  }
}

let work: { path: string; remove: () => Promise<void> };
const running = new Set<ServedMnemo>();
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  work = await makeWorkDirectory();
});

afterAll(async () => {
  for (const served of running) await served.crash();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await work.remove();
}, 60_000);

async function serve(args: readonly string[], cwd = work.path): Promise<ServedMnemo> {
  const served = await startServe(args, { cwd });
  running.add(served);
  return served;
}

async function stop(served: ServedMnemo): Promise<number | null> {
  const code = await served.stop();
  running.delete(served);
  return code;
}

const scopeOf = (conversationId: string): Scope => ({ tenantId: 'default', userId: conversationId, conversationId });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function storedMessages(db: string, conversationIds: readonly string[]): Promise<Map<string, Message[]>> {
  const store = createSqliteStore({ path: db });
  return readWrittenConversations(store, conversationIds).finally(() => store.close());
}

// Requests `path` one after another on a fresh connection each (as a probe does), from a process of its
// own so that the test's writers do not delay the client; prints the durations (ms) and statuses as JSON.
const samplerScript = `
const [url, method, body, durationMs, gapMs] = JSON.parse(process.argv[1]);
const durations = [], statuses = [];
const until = performance.now() + durationMs;
while (performance.now() < until) {
  const started = performance.now();
  try {
    const response = await fetch(url, { method, headers: { connection: 'close', 'content-type': 'application/json' }, ...(body === null ? {} : { body }) });
    await response.arrayBuffer();
    statuses.push(response.status);
  } catch { statuses.push(0); }
  durations.push(performance.now() - started);
  await new Promise((resolve) => setTimeout(resolve, gapMs));
}
process.stdout.write(JSON.stringify({ durations, statuses }));
`;

/** Samples `path` for `durationMs`, one request every `gapMs` after the last answer, from a separate Node process. */
function sample(
  url: string,
  path: string,
  options: { durationMs: number; gapMs: number; body?: unknown },
): Promise<{ durations: number[]; statuses: number[] }> {
  const argument = JSON.stringify([
    `${url}${path}`,
    options.body === undefined ? 'GET' : 'POST',
    options.body === undefined ? null : JSON.stringify(options.body),
    options.durationMs,
    options.gapMs,
  ]);
  return run(process.execPath, ['--input-type=module', '-e', samplerScript, argument], {
    maxBuffer: 16 * 1024 * 1024,
  }).then(({ stdout }) => JSON.parse(stdout) as { durations: number[]; statuses: number[] });
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10;
}

/** Log lines of a served process (and its workers) at warn or above, written between two offsets of its stdout. */
function warnLines(log: string): string[] {
  return log.split('\n').filter((line) => /"level":(40|50|60)/.test(line));
}

const hasSqlite3 = await works('sqlite3', ['-version']);

describe.skipIf(!hasSqlite3 && !ci)(
  `a write lock held by another process for 10 s${hasSqlite3 ? '' : ' (skipped: no sqlite3 command; apt-get install sqlite3)'}`,
  () => {
    it(
      'keeps /health and context reads answering in milliseconds while 4 writers wait, and loses nothing',
      { timeout: 90_000 },
      async (context) => {
        expect(hasSqlite3, 'the sqlite3 command is missing (CI installs it: .ci/run)').toBe(true);
        const db = join(work.path, 'locked.db');
        const served = await serve(['--db', db, '--workers', '1']);
        const writersOf = new AcknowledgedWriters({
          writers: 4,
          conversations: 4,
          prefix: 'lock',
          api: 'mixed',
          retryUnavailable: { maxWaitMs: 200 },
        });
        let stopWriters = false;
        const writing = writersOf.run([served.url], () => stopWriters);
        await pause(800);
        const contextBody = { conversation_id: 'lock-0', max_tokens: 400 };
        // The same probes without a lock first, in the same run: the machine is shared and its load varies.
        const [healthFree, contextsFree] = await Promise.all([
          sample(served.url, '/health', { durationMs: 3_000, gapMs: 20 }),
          sample(served.url, '/v1/memory/context', { durationMs: 3_000, gapMs: 100, body: contextBody }),
        ]);
        // sqlite3 takes the write lock, says so through a file (its stdout to a pipe is buffered), and keeps
        // the lock while its shell sleeps. Its busy timeout is 0 unless set: without `.timeout`, BEGIN
        // IMMEDIATE failed at once (and sqlite3 exited) whenever a writer held the lock at that instant.
        const flag = join(work.path, 'lock-taken');
        const holder = spawn(
          'sqlite3',
          [db, '.timeout 5000', 'BEGIN IMMEDIATE;', `.shell touch ${flag}`, '.shell sleep 10', 'ROLLBACK;'],
          {
            stdio: 'ignore',
          },
        );
        const released = new Promise<number>((resolve) => holder.once('close', () => resolve(performance.now())));
        await waitFor(async () => existsSync(flag), 10_000, 'sqlite3 to hold the lock');
        const lockedAt = performance.now();
        const sampling = Promise.all([
          sample(served.url, '/health', { durationMs: 9_000, gapMs: 20 }),
          sample(served.url, '/v1/memory/context', { durationMs: 9_000, gapMs: 100, body: contextBody }),
        ]);
        await pause(3_000);
        const readyDuringLock = await fetch(`${served.url}/ready`).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { checks: { name: string; message?: string }[] },
        }));
        const [health, contexts] = await sampling;
        const releasedAt = await released;
        // Half a second off each end: on a loaded machine the test sees the flag file, the holder's exit and
        // the answers late, each by its own delay.
        const acknowledgedWhileLocked = writersOf.acknowledgedAt.filter(
          (at) => at > lockedAt + 500 && at < releasedAt - 500,
        ).length;
        await waitFor(
          async () => writersOf.acknowledgedAt.some((at) => at > releasedAt),
          10_000,
          'a write after the lock was released',
        );
        const firstAfterMs = Math.round(writersOf.acknowledgedAt.find((at) => at > releasedAt)! - releasedAt);
        await pause(500);
        stopWriters = true;
        await writing;
        // A writer stopped in its wait after a 503 sends that message once more, as a client would.
        await writersOf.settle([served.url]);
        expect(await stop(served)).toBe(0);
        const audit = writersOf.audit(await storedMessages(db, writersOf.conversationIds));
        recordFigures(context, 'SQLite write lock held 10 s by sqlite3 (4 writers)', [
          ['lock held, s', Math.round((releasedAt - lockedAt) / 100) / 10],
          ['/health p99 ms without a lock (same run)', percentile(healthFree.durations, 99)],
          ['context read p99 ms without a lock (same run)', percentile(contextsFree.durations, 99)],
          ['/health requests during the hold', health.durations.length],
          ['/health p50 ms', percentile(health.durations, 50)],
          ['/health p99 ms', percentile(health.durations, 99)],
          ['/health max ms', percentile(health.durations, 100)],
          ['/health not 200', health.statuses.filter((status) => status !== 200).length],
          ['context reads during the hold', contexts.durations.length],
          ['context read p99 ms', percentile(contexts.durations, 99)],
          ['context reads not 200', contexts.statuses.filter((status) => status !== 200).length],
          [
            '/ready during the hold',
            `${readyDuringLock.status} (${readyDuringLock.body.checks.find((check) => check.name === 'write')?.message ?? 'write ok'})`,
          ],
          ['writes acknowledged while locked (they wait; 0.5 s off each end)', acknowledgedWhileLocked],
          ['503 after the 5 s busy timeout (all with Retry-After)', writersOf.unavailable],
          ['503 without Retry-After', writersOf.unavailableWithoutRetryAfter],
          ['first write after release, ms', firstAfterMs],
          ['acknowledged', writersOf.acknowledged.size],
          ['lost', audit.lost],
          ['duplicated', audit.duplicated],
        ]);
        expect(releasedAt - lockedAt).toBeGreaterThan(9_000);
        expect(health.statuses.every((status) => status === 200)).toBe(true);
        expect(contexts.statuses.every((status) => status === 200)).toBe(true);
        // Before: 10,000 ms for /health, 8,800 ms for a context read (the event loop slept in the driver's
        // busy wait). The target is 50 ms; the bounds leave room for a loaded machine (and for the same
        // probes without a lock, under the writers' load) while failing any synchronous wait on the lock.
        expect(percentile(health.durations, 99)).toBeLessThan(Math.max(250, 2 * percentile(healthFree.durations, 99)));
        expect(percentile(contexts.durations, 99)).toBeLessThan(
          Math.max(1_000, 2 * percentile(contextsFree.durations, 99)),
        );
        expect(readyDuringLock.status).toBe(200);
        expect(acknowledgedWhileLocked).toBe(0);
        expect(writersOf.unavailableWithoutRetryAfter).toBe(0);
        expect(firstAfterMs).toBeLessThan(1_000);
        expect(writersOf.unexpected).toEqual([]);
        expect(writersOf.unacknowledged).toEqual([]);
        expect(audit).toEqual(nothingLost(writersOf.sent.size));
      },
    );
  },
);

const canChattr = await (async () => {
  const probe = join(
    await makeWorkDirectory().then((directory) => (cleanups.push(directory.remove), directory.path)),
    'probe',
  );
  await writeFile(probe, '');
  const ok = await works('chattr', ['+i', probe]);
  if (ok) await run('chattr', ['-i', probe]);
  return ok;
})();

describe.skipIf(!canChattr)(
  `a database file that cannot be written${canChattr ? '' : ' (skipped: chattr +i is not allowed here; it needs root on ext4 or tmpfs)'}`,
  () => {
    it(
      'answers 503 saying so, turns /ready to 503, recovers without a restart once writable, and refuses to start on it',
      { timeout: 90_000 },
      async (context) => {
        const db = join(work.path, 'immutable.db');
        const files = [db, `${db}-wal`];
        cleanups.push(() => run('chattr', ['-i', ...files]));
        const served = await serve(['--db', db, '--workers', '0']);
        const writersOf = new AcknowledgedWriters({
          writers: 2,
          conversations: 2,
          prefix: 'immutable',
          retryUnavailable: { maxWaitMs: 200 },
        });
        let stopWriters = false;
        const writing = writersOf.run([served.url], () => stopWriters);
        await pause(500);
        await run('chattr', ['+i', ...files]);
        await waitFor(async () => (await fetch(`${served.url}/ready`)).status === 503, 5_000, '/ready to fail');
        const refused = await postJson(`${served.url}/v1/conversations/immutable-x/messages`, {
          messages: [{ role: 'user', content: 'refused' }],
        });
        const ready = await fetch(`${served.url}/ready`).then(async (response) => ({
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          body: (await response.json()) as { checks: { name: string; ok: boolean; message?: string }[] },
        }));
        await pause(1_000);
        await run('chattr', ['-i', ...files]);
        const writableAt = performance.now();
        await waitFor(
          async () => writersOf.acknowledgedAt.some((at) => at > writableAt),
          10_000,
          'a write once the file is writable',
        );
        const recoveredMs = Math.round(writersOf.acknowledgedAt.find((at) => at > writableAt)! - writableAt);
        const readyAfter = (await fetch(`${served.url}/ready`)).status;
        stopWriters = true;
        await writing;
        // A writer stopped in its wait after a 503 sends that message once more, as a client would.
        await writersOf.settle([served.url]);
        expect(await stop(served)).toBe(0);

        await run('chattr', ['+i', db]);
        const start = await runMnemo(['serve', '--port', '0', '--db', db, '--workers', '0'], {
          cwd: work.path,
          env: { MNEMO_EMBEDDER: 'hashed' },
        });
        await run('chattr', ['-i', db]);
        const audit = writersOf.audit(await storedMessages(db, writersOf.conversationIds));
        const error = (refused.body as { error?: { code: string; message: string; details?: { reason?: string } } })
          .error;
        recordFigures(context, 'SQLite file made unwritable (chattr +i) while serving', [
          [
            'append answer',
            `${refused.status} ${error?.code ?? ''} (${error?.details?.reason ?? ''}), Retry-After ${refused.headers?.get('retry-after') ?? 'none'}`,
          ],
          ['/ready while unwritable', `${ready.status}, Retry-After ${ready.retryAfter ?? 'none'}`],
          ['first write once writable again, ms (no restart)', recoveredMs],
          ['/ready after', readyAfter],
          ['serve started on an immutable file', `exit ${start.code}: ${start.stderr.trim().split('\n')[0] ?? ''}`],
          ['acknowledged', writersOf.acknowledged.size],
          ['lost', audit.lost],
          ['duplicated', audit.duplicated],
        ]);
        expect(refused.status).toBe(503);
        expect(refused.headers?.get('retry-after')).toBe('30');
        expect(error).toMatchObject({ code: 'unavailable', details: { reason: 'read_only' } });
        expect(error?.message).toMatch(/cannot be written/);
        expect(ready.status).toBe(503);
        expect(ready.body.checks.find((check) => check.name === 'write')).toMatchObject({ ok: false });
        expect(recoveredMs).toBeLessThan(2_000);
        expect(readyAfter).toBe(200);
        expect(start.code).not.toBe(0);
        expect(start.stderr).toMatch(/cannot be written/);
        expect(writersOf.unexpected).toEqual([]);
        expect(writersOf.unacknowledged).toEqual([]);
        expect(audit).toEqual(nothingLost(writersOf.sent.size));
      },
    );
  },
);

// The small disk is mounted up front, so that a machine that does not allow it (no root, no
// CAP_SYS_ADMIN in a container) skips the test with the reason instead of failing it.
const smallDisk = await (async () => {
  const directory = await makeWorkDirectory();
  cleanups.push(directory.remove);
  const path = join(directory.path, 'small-disk');
  await mkdir(path);
  if (!(await works('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', path]))) return undefined;
  cleanups.push(() => run('umount', ['-l', path]));
  return path;
})();

describe.skipIf(smallDisk === undefined)(
  `a full disk (an 8 MiB tmpfs)${smallDisk === undefined ? ' (skipped: mount -t tmpfs is not allowed here; it needs root with CAP_SYS_ADMIN)' : ''}`,
  () => {
    it(
      'answers 503 disk_full with Retry-After, logs under a line a second, recovers without a restart, loses nothing',
      { timeout: 120_000 },
      async (context) => {
        const disk = smallDisk;
        const db = join(disk!, 'full.db');
        const served = await serve(['--db', db, '--workers', '1']);
        const writersOf = new AcknowledgedWriters({
          writers: 2,
          conversations: 2,
          prefix: 'full',
          api: 'mixed',
          retryUnavailable: { maxWaitMs: 250 },
        });
        let stopWriters = false;
        const writing = writersOf.run([served.url], () => stopWriters);
        await pause(1_000);
        // Fill what is left; dd stops at ENOSPC.
        await run('dd', ['if=/dev/zero', `of=${join(disk!, 'filler')}`, 'bs=64k']).catch(() => undefined);
        const fullAt = performance.now();
        const logBefore = served.stdout().length;
        let firstRefusal: Awaited<ReturnType<typeof postJson>> | undefined;
        await waitFor(
          async () => {
            const answer = await postJson(`${served.url}/v1/conversations/full-probe/messages`, {
              messages: [{ role: 'user', content: 'a probe while the disk is full '.repeat(20) }],
            });
            if (answer.status === 503) firstRefusal = answer;
            return answer.status === 503;
          },
          10_000,
          'an append to be refused',
        );
        const ready = await fetch(`${served.url}/ready`).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { checks: { name: string; ok: boolean; message?: string }[] },
        }));
        const fullForMs = 10_000;
        await pause(fullForMs);
        const fullLog = served.stdout().slice(logBefore);
        await rm(join(disk!, 'filler'));
        const freedAt = performance.now();
        await waitFor(
          async () => writersOf.acknowledgedAt.some((at) => at > freedAt),
          15_000,
          'a write once space is free',
        );
        const recoveredMs = Math.round(writersOf.acknowledgedAt.find((at) => at > freedAt)! - freedAt);
        await waitFor(
          async () => (await fetch(`${served.url}/ready`)).status === 200,
          10_000,
          '/ready once space is free',
        );
        await pause(500);
        stopWriters = true;
        await writing;
        // A writer stopped in its wait after a 503 sends that message once more, as a client would.
        await writersOf.settle([served.url]);
        const jobsStore = createSqliteStore({ path: db });
        const jobsOf = async () =>
          (await Promise.all(writersOf.conversationIds.map((id) => jobsStore.listJobs(scopeOf(id))))).flat();
        // Background work the full disk held up runs once it is free, without a restart.
        await waitFor(
          async () => (await jobsOf()).every((job: Job) => job.status === 'done'),
          30_000,
          'every background job to finish',
        ).finally(() => jobsStore.close());
        expect(await stop(served)).toBe(0);
        const audit = writersOf.audit(await storedMessages(db, writersOf.conversationIds));

        // Starting on a full disk.
        await run('dd', ['if=/dev/zero', `of=${join(disk!, 'filler')}`, 'bs=64k']).catch(() => undefined);
        const start = await runMnemo(['serve', '--port', '0', '--db', join(disk!, 'fresh.db'), '--workers', '0'], {
          cwd: work.path,
          env: { MNEMO_EMBEDDER: 'hashed' },
        });
        const seconds = (performance.now() - fullAt) / 1000;
        const warnings = warnLines(fullLog);
        const error = (
          firstRefusal?.body as { error?: { code: string; message: string; details?: { reason?: string } } } | undefined
        )?.error;
        recordFigures(context, 'disk full (8 MiB tmpfs, 2 writers, serve + 1 worker)', [
          [
            'append answer',
            `${firstRefusal?.status} ${error?.code ?? ''} (${error?.details?.reason ?? ''}), Retry-After ${firstRefusal?.headers?.get('retry-after') ?? 'none'}`,
          ],
          ['message', error?.message ?? ''],
          [
            '/ready while full',
            `${ready.status} (${ready.body.checks
              .filter((check) => !check.ok)
              .map((check) => check.name)
              .join(', ')} failing)`,
          ],
          ['seconds full (log measured)', fullForMs / 1000],
          ['warn/error log lines a second while full', Math.round((warnings.length / (fullForMs / 1000)) * 100) / 100],
          ['log bytes a second while full (request lines included)', Math.round(fullLog.length / (fullForMs / 1000))],
          ['first write once space is free, ms (no restart)', recoveredMs],
          ['acknowledged', writersOf.acknowledged.size],
          ['lost', audit.lost],
          ['duplicated', audit.duplicated],
          ['serve started on a full disk', `exit ${start.code}: ${start.stderr.trim().split('\n')[0] ?? ''}`],
          ['fault test wall time, s', Math.round(seconds)],
        ]);
        expect(firstRefusal?.status).toBe(503);
        expect(firstRefusal?.headers?.get('retry-after')).toBe('30');
        expect(error).toMatchObject({ code: 'unavailable', details: { reason: 'disk_full' } });
        expect(error?.message).toMatch(/disk .* is full/);
        expect(ready.status).toBe(503);
        expect(warnings.length / (fullForMs / 1000)).toBeLessThan(1);
        expect(recoveredMs).toBeLessThan(3_000);
        expect(start.code).not.toBe(0);
        expect(start.stderr).toMatch(/disk .* is full/);
        expect(writersOf.unexpected).toEqual([]);
        expect(writersOf.unacknowledged).toEqual([]);
        expect(audit).toEqual(nothingLost(writersOf.sent.size));
      },
    );
  },
);

describe('a database file with damaged pages', () => {
  it(
    'starts, finds the damage in the background and turns /ready to 503 saying so',
    { timeout: 60_000 },
    async (context) => {
      const db = join(work.path, 'damaged.db');
      const store = createSqliteStore({ path: db });
      for (let index = 0; index < 300; index += 1) {
        await store.appendMessages(scopeOf('damaged'), [
          makeNewMessage(`node ${index} reports ${'battery and hop counts '.repeat(8)}`),
        ]);
      }
      await store.close();
      // Three pages in the middle of the file overwritten, as a failing disk or a bad copy leaves them.
      const file = await open(db, 'r+');
      const { size } = await file.stat();
      await file.write(Buffer.alloc(3 * 4096, 0x5a), 0, 3 * 4096, Math.floor(size / 4096 / 2) * 4096);
      await file.close();
      const served = await serve(['--db', db, '--workers', '0']);
      const health = (await fetch(`${served.url}/health`)).status;
      const startedAt = performance.now();
      await waitFor(
        async () => (await fetch(`${served.url}/ready`)).status === 503,
        20_000,
        '/ready to report the damage',
      );
      const foundMs = Math.round(performance.now() - startedAt);
      const ready = (await (await fetch(`${served.url}/ready`)).json()) as {
        checks: { name: string; ok: boolean; message?: string }[];
      };
      const integrity = ready.checks.find((check) => check.name === 'integrity');
      // The check of every page logs the damage as an error (the start's count of vectors per model, which
      // may read a damaged page first, only warns that it could not count).
      const damageLine = () =>
        served
          .stdout()
          .split('\n')
          .find((line) => line.includes('restored from a backup'));
      await waitFor(async () => damageLine() !== undefined, 20_000, 'the damage to be logged');
      const logged = damageLine();
      recordFigures(context, 'SQLite file with 3 damaged pages', [
        ['/health at start', health],
        ['/ready 503 after, ms', foundMs],
        ['integrity check', integrity?.message ?? ''],
      ]);
      expect(integrity).toMatchObject({ ok: false, message: expect.stringMatching(/damaged/) as unknown });
      expect(logged).toMatch(/"level":50/);
      await stop(served);
    },
  );
});

describe('a worker process that stops (SIGSTOP)', () => {
  it(
    'is noticed by its heartbeat, killed, started again, and background work goes on',
    { timeout: 90_000 },
    async (context) => {
      const directory = join(work.path, 'stuck');
      await mkdir(directory);
      const config = join(directory, 'mnemo.config.json');
      await writeFile(config, JSON.stringify({ server: { workerHeartbeatTimeoutMs: 3_000 } }));
      const db = join(directory, 'stuck.db');
      const served = await serve(['--db', db, '--workers', '1', '--config', config], directory);
      const [worker] = served.workers;
      expect(worker).toBeDefined();
      await waitFor(
        async () =>
          served.stdout().includes(`"pid":${worker},"msg":"worker started"`) ||
          /"msg":"worker started"/.test(served.stdout()),
        20_000,
        'the worker to start',
      );
      // Its first heartbeats reach serve (a worker that never beat gets the 60 s start-up allowance).
      await pause(1_500);
      process.kill(worker!, 'SIGSTOP');
      const stoppedAt = performance.now();
      await waitFor(
        async () => /stopped answering \(no heartbeat\)/.test(served.stdout()),
        20_000,
        'the stuck worker to be noticed',
      );
      const noticedMs = Math.round(performance.now() - stoppedAt);
      const startedLines = () =>
        served
          .stdout()
          .split('\n')
          .filter((line) => line.includes('"msg":"worker started"'));
      await waitFor(
        async () => startedLines().some((line) => !line.includes(`"pid":${worker},`)),
        20_000,
        'another worker to start',
      );
      const restartedMs = Math.round(performance.now() - stoppedAt);
      const oldGone = !isRunning(worker!);
      // Background work runs again: an append's jobs (embed, extract) finish.
      const appended = await postJson(`${served.url}/v1/conversations/after-stop/messages`, {
        messages: [{ role: 'user', content: 'Relay LARCH-RIDGE runs on battery since Monday.' }],
      });
      const store = createSqliteStore({ path: db });
      try {
        await waitFor(
          async () => {
            const jobs = await store.listJobs(scopeOf('after-stop'));
            return jobs.length > 0 && jobs.every((job) => job.status === 'done');
          },
          30_000,
          'the new jobs to be done by the new worker',
        );
      } finally {
        await store.close();
      }
      const warning = served
        .stdout()
        .split('\n')
        .find((line) => line.includes('stopped answering'));
      const killedPid = warning === undefined ? undefined : (JSON.parse(warning) as { pid: number }).pid;
      recordFigures(context, 'worker stopped (SIGSTOP), heartbeat timeout 3 s', [
        ['noticed after, ms', noticedMs],
        ['new worker started after, ms', restartedMs],
        ['stopped worker killed', oldGone ? 'yes' : 'no'],
        ['jobs of a later append', 'done'],
      ]);
      expect(appended.status).toBe(201);
      expect(oldGone).toBe(true);
      expect(warning).toMatch(/"level":40/);
      expect(killedPid).toBe(worker);
      expect(noticedMs).toBeLessThan(10_000);
      expect(await stop(served)).toBe(0);
    },
  );
});
