import type { Message } from '@mnemo/core';
import { createPostgresStore } from '@mnemo/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, makeWorkDirectory } from '../run-mnemo.js';
import { AcknowledgedWriters, nothingLost, readWrittenConversations } from './acknowledged-writers.js';
import { recordFigures } from './reliability-figures.js';
import { startServe, waitFor, type ServedMnemo } from './served-mnemo.js';
import { postgresBinDirectory, startThrowawayPostgres, type ThrowawayPostgres } from './throwaway-postgres.js';

// PostgreSQL going away under load (issue 20): `mnemo serve` (with a worker process, then with two HTTP
// processes) on a cluster of the suite's own, restarted with `pg_ctl restart -m fast` ten times while 4
// writers append with idempotency keys (half through the seed API), and then every mnemo connection
// terminated with pg_terminate_backend, in and out of transactions. Before: serve died at the second
// restart ("Unhandled 'error' event", 57P01). Pass: serve and its workers alive after each restart,
// writes acknowledged again within 2 s of PostgreSQL being back, every 503 with Retry-After, and the
// store holding every acknowledged message exactly once.
const bin = await postgresBinDirectory();
const required = process.env['MNEMO_REQUIRE_POSTGRES'] === '1';
const restarts = 10;
const terminations = 5;

let work: { path: string; remove: () => Promise<void> };
let cluster: ThrowawayPostgres | undefined;
const running = new Set<ServedMnemo>();

beforeAll(async () => {
  work = await makeWorkDirectory();
  if (bin !== undefined) cluster = await startThrowawayPostgres(bin);
}, 120_000);

afterAll(async () => {
  for (const served of running) await served.crash();
  await cluster?.remove();
  await work.remove();
}, 60_000);

async function storedMessages(
  url: string,
  schema: string,
  conversationIds: readonly string[],
): Promise<Map<string, Message[]>> {
  const store = await createPostgresStore({ connectionString: url, schema, readonly: true });
  return readWrittenConversations(store, conversationIds).finally(() => store.close());
}

/** Milliseconds from `since` to the first acknowledgement after it (waits up to 10 s for one). */
async function firstAcknowledgementAfter(writersOf: AcknowledgedWriters, since: number): Promise<number> {
  await waitFor(
    async () => writersOf.acknowledgedAt.some((at) => at > since),
    10_000,
    'a write acknowledged after PostgreSQL came back',
  );
  return Math.round(writersOf.acknowledgedAt.find((at) => at > since)! - since);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Terminates every backend of mnemo's pools (application_name mnemo), whatever each is doing. */
async function terminateMnemoBackends(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mnemo' AND pid <> pg_backend_pid()",
    );
    return result.rowCount ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * Runs 4 writers against `served` while `fault()` runs `rounds` times, 700 ms of writes apart; returns the
 * writers and, per round, how long after the fault ended the first write was acknowledged.
 */
async function underFaults(served: ServedMnemo, prefix: string, rounds: number, fault: () => Promise<void>) {
  const writersOf = new AcknowledgedWriters({
    writers: 4,
    conversations: 4,
    prefix,
    api: 'mixed',
    retryUnavailable: { maxWaitMs: 100 },
  });
  let stop = false;
  const writing = writersOf.run([served.url], () => stop);
  const recoveryMs: number[] = [];
  const aliveAfter: boolean[] = [];
  try {
    for (let round = 0; round < rounds; round += 1) {
      await pause(700);
      await fault();
      const back = performance.now();
      recoveryMs.push(await firstAcknowledgementAfter(writersOf, back));
      aliveAfter.push(isRunning(served.pid) && served.workers.every((pid) => isRunning(pid)));
    }
    await pause(300);
  } finally {
    stop = true;
    await writing;
  }
  return { writersOf, recoveryMs, aliveAfter };
}

describe.skipIf(bin === undefined && !required)(
  `PostgreSQL restarts and terminated connections under 4 writers${bin === undefined ? ' (skipped: no initdb/pg_ctl under /usr/lib/postgresql)' : ''}`,
  () => {
    it(
      `keeps serve and its worker alive through ${restarts} restarts, writing again within 2 s, losing and duplicating nothing`,
      { timeout: 180_000 },
      async (context) => {
        expect(
          bin,
          'MNEMO_REQUIRE_POSTGRES=1 but no PostgreSQL server programs (initdb, pg_ctl) are installed',
        ).toBeDefined();
        const db = `${cluster!.url}?schema=restarts`;
        const served = await startServe(['--db', db, '--workers', '1'], { cwd: work.path });
        running.add(served);
        const workersBefore = [...served.workers];
        const restarted = await underFaults(served, 'pg-restart', restarts, () => cluster!.restart());
        const terminated = await underFaults(
          served,
          'pg-terminate',
          terminations,
          async () => void (await terminateMnemoBackends(cluster!.url)),
        );
        const alive = isRunning(served.pid);
        const workersAlive = workersBefore.every((pid) => isRunning(pid));
        const conversationIds = [...restarted.writersOf.conversationIds, ...terminated.writersOf.conversationIds];
        const stored = await storedMessages(cluster!.url, 'restarts', conversationIds);
        const audits = [restarted, terminated].map(({ writersOf }) =>
          writersOf.audit(new Map([...stored].filter(([id]) => writersOf.conversationIds.includes(id)))),
        );
        const log = served.stdout();
        const errorLines = log.split('\n').filter((line) => /"level":(50|60)/.test(line)).length;
        recordFigures(context, 'PostgreSQL restarts (4 writers, serve + 1 worker)', [
          ['restarts (pg_ctl restart -m fast)', restarts],
          [
            'serve and worker alive after each',
            restarted.aliveAfter.every(Boolean) ? 'yes' : `no (${restarted.aliveAfter.join(', ')})`,
          ],
          ['first write after PostgreSQL back, ms (max)', Math.max(...restarted.recoveryMs)],
          ['… each restart, ms', restarted.recoveryMs.join(' ')],
          ['terminations (pg_terminate_backend, all mnemo backends)', terminations],
          ['first write after termination, ms (max)', Math.max(...terminated.recoveryMs)],
          ['acknowledged', restarted.writersOf.acknowledged.size + terminated.writersOf.acknowledged.size],
          ['503 answers (all with Retry-After)', restarted.writersOf.unavailable + terminated.writersOf.unavailable],
          [
            '503 without Retry-After',
            restarted.writersOf.unavailableWithoutRetryAfter + terminated.writersOf.unavailableWithoutRetryAfter,
          ],
          ['connections refused or dropped', restarted.writersOf.dropped + terminated.writersOf.dropped],
          ['lost', audits[0]!.lost + audits[1]!.lost],
          ['duplicated', audits[0]!.duplicated + audits[1]!.duplicated],
          ['seq gaps', audits[0]!.gaps + audits[1]!.gaps],
          ['error log lines of serve and worker', errorLines],
        ]);
        expect(restarted.aliveAfter.every(Boolean) && terminated.aliveAfter.every(Boolean)).toBe(true);
        expect(alive && workersAlive).toBe(true);
        expect(log).not.toMatch(/Unhandled 'error' event/);
        expect(Math.max(...restarted.recoveryMs, ...terminated.recoveryMs)).toBeLessThan(2_000);
        for (const { writersOf } of [restarted, terminated]) {
          expect(writersOf.unexpected).toEqual([]);
          expect(writersOf.unavailableWithoutRetryAfter).toBe(0);
          expect(writersOf.unacknowledged).toEqual([]);
        }
        for (const [index, audit] of audits.entries()) {
          const sent = [restarted, terminated][index]!.writersOf.sent.size;
          expect(audit).toEqual(nothingLost(sent));
        }
        expect(await served.stop()).toBe(0);
        running.delete(served);
      },
    );

    it('keeps both of two HTTP processes serving through restarts', { timeout: 120_000 }, async (context) => {
      expect(bin).toBeDefined();
      const db = `${cluster!.url}?schema=restarts_http`;
      const served = await startServe(['--db', db, '--workers', '1', '--http-processes', '2'], { cwd: work.path });
      running.add(served);
      const { writersOf, recoveryMs, aliveAfter } = await underFaults(served, 'pg-http', 3, () => cluster!.restart());
      const stored = await storedMessages(cluster!.url, 'restarts_http', writersOf.conversationIds);
      const audit = writersOf.audit(stored);
      const exits = (served.stdout().match(/"msg":"HTTP process exited/g) ?? []).length;
      recordFigures(context, 'PostgreSQL restarts (2 HTTP processes)', [
        ['restarts', recoveryMs.length],
        ['first write after PostgreSQL back, ms (max)', Math.max(...recoveryMs)],
        ['HTTP processes that exited', exits],
        ['acknowledged', writersOf.acknowledged.size],
        ['lost', audit.lost],
        ['duplicated', audit.duplicated],
      ]);
      expect(aliveAfter.every(Boolean)).toBe(true);
      expect(exits).toBe(0);
      expect(Math.max(...recoveryMs)).toBeLessThan(2_000);
      expect(writersOf.unexpected).toEqual([]);
      expect(audit).toEqual(nothingLost(writersOf.sent.size));
      expect(await served.stop()).toBe(0);
      running.delete(served);
    });
  },
);
