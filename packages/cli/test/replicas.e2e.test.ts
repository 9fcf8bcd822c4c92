import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Job } from '@mnemo/core';
import { createPostgresStore, type PostgresStore } from '@mnemo/postgres';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parsePostgresDatabase } from '../src/store/open-cli-store.js';
import { describeWithPostgres, dropSchemas, freshSchemaUrl } from './postgres-database.js';
import { makeWorkDirectory, startMnemo } from './run-mnemo.js';

// Two stateless `mnemo serve` replicas on one PostgreSQL schema, 2,000 appends spread over both while
// their workers compact, embed and extract in the background: what scale-out promises (DESIGN,
// "Scale-out"), checked in the store afterwards.
const conversationCount = 8;
const messagesPerConversation = 250;
const totalMessages = conversationCount * messagesPerConversation;
const inFlight = 32;
const drainTimeoutMs = 180_000;
const embedderModel = 'hashed-bow-256';

interface Replica {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  readonly stderr: () => string;
}

async function startReplica(cwd: string, db: string): Promise<Replica> {
  const started = await startMnemo(['serve', '--port', '0', '--db', db], {
    cwd,
    env: { MNEMO_EMBEDDER: 'hashed' },
    ready: /^mnemo listening on (http:\/\/\S+)$/,
  });
  return { url: started.ready[1]!, child: started.child, exited: started.exited, stderr: started.stderr };
}

/** A message of conversation `conversation`, number `index`: unique text, long enough (~40 tokens) that compaction triggers every few dozen messages. */
function contentOf(conversation: number, index: number): string {
  const places = ['Larch Ridge', 'Hood River', 'the summit cabin', 'Bend', 'the valley relay'];
  return (
    `m-${conversation}-${index}: node ${conversation} reports relay LARCH-RIDGE at ${(index % 7) + 2} hops, battery ${50 + (index % 50)} percent, ` +
    `SNR ${(index % 13) - 6} dB near ${places[index % places.length]}; Maren asked to keep the solar panel facing south until ${(index % 28) + 1} June.`
  );
}

/** Sends every append, `inFlight` at a time, request i to replica i mod 2; a 5xx or a dropped connection is retried with the same idempotency key. */
async function appendAll(replicas: readonly Replica[]): Promise<{ statuses: Map<number, number>; retries: number }> {
  const requests = Array.from({ length: totalMessages }, (_, index) => ({
    index,
    conversation: index % conversationCount,
    position: Math.floor(index / conversationCount),
  }));
  const statuses = new Map<number, number>();
  let retries = 0;
  let next = 0;
  const worker = async () => {
    for (let item = requests[next++]; item !== undefined; item = requests[next++]) {
      const replica = replicas[item.index % replicas.length]!;
      const body = {
        messages: [
          {
            role: item.position % 2 === 0 ? 'user' : 'assistant',
            content: contentOf(item.conversation, item.position),
            idempotencyKey: `m-${item.conversation}-${item.position}`,
          },
        ],
      };
      for (let attempt = 1; ; attempt += 1) {
        const status = await fetch(`${replica.url}/v1/conversations/node-${item.conversation}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then(
          async (response) => (await response.arrayBuffer(), response.status),
          () => 0,
        );
        statuses.set(item.index, status);
        if ((status !== 0 && status < 500) || attempt === 3) break;
        retries += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { statuses, retries };
}

/** The store's job gauge as a replica's /metrics reports it. */
async function jobGauge(replica: Replica): Promise<Record<string, number>> {
  const text = await (await fetch(`${replica.url}/metrics`)).text();
  return Object.fromEntries(
    [...text.matchAll(/^mnemo_jobs\{status="(\w+)"\} (\d+)$/gm)].map((match) => [match[1]!, Number(match[2])]),
  );
}

/** Polls both replicas until neither sees a pending or running job twice in a row; throws past the bound. */
async function waitUntilDrained(replicas: readonly Replica[]): Promise<Record<string, number>> {
  const deadline = Date.now() + drainTimeoutMs;
  let quietPolls = 0;
  for (;;) {
    const gauges = await Promise.all(replicas.map(jobGauge));
    const busy = gauges.some((gauge) => (gauge['pending'] ?? 0) + (gauge['running'] ?? 0) > 0);
    quietPolls = busy ? 0 : quietPolls + 1;
    if (quietPolls >= 2) return gauges[0]!;
    if (Date.now() > deadline)
      throw new Error(`jobs still queued after ${drainTimeoutMs} ms: ${JSON.stringify(gauges)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describeWithPostgres('two mnemo serve replicas on one PostgreSQL schema', (url) => {
  const target = freshSchemaUrl(url);
  let work: { path: string; remove: () => Promise<void> };
  const replicas: Replica[] = [];
  let store: PostgresStore | undefined;

  beforeAll(async () => {
    work = await makeWorkDirectory();
    // Loopback only and no keys; the per-key rate limit would throttle this burst of one client.
    await writeFile(join(work.path, 'mnemo.config.json'), JSON.stringify({ server: { rateLimit: false } }));
    // Started together: both migrate the fresh schema, one waits on the migration lock.
    replicas.push(...(await Promise.all([startReplica(work.path, target.url), startReplica(work.path, target.url)])));
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    for (const replica of replicas) {
      if (replica.child.exitCode === null) replica.child.kill('SIGKILL');
      await replica.exited;
    }
    await dropSchemas(url, [target.schema]);
    await work?.remove();
  }, 60_000);

  it(
    'loses, duplicates and repeats nothing: gapless seqs, one summary per range, every job done once, every message embedded once',
    { timeout: 300_000 },
    async () => {
      const { statuses, retries } = await appendAll(replicas);
      const failed = [...statuses.entries()].filter(([, status]) => status !== 201);
      expect(failed, `appends that did not succeed (after ${retries} retries)`).toEqual([]);
      const gauge = await waitUntilDrained(replicas);

      const { connectionString, schema } = parsePostgresDatabase(target.url);
      store = await createPostgresStore({
        connectionString,
        ...(schema === undefined ? {} : { schema }),
        readonly: true,
      });
      const jobs: Job[] = [];
      let summaryCount = 0;
      for (let conversation = 0; conversation < conversationCount; conversation += 1) {
        const scope = { tenantId: 'default', userId: `node-${conversation}`, conversationId: `node-${conversation}` };
        const messages = await store.listMessages(scope);
        expect(messages.map((message) => message.seq)).toEqual(
          Array.from({ length: messagesPerConversation }, (_, index) => index + 1),
        );
        expect(messages.map((message) => message.content).sort()).toEqual(
          Array.from({ length: messagesPerConversation }, (_, index) => contentOf(conversation, index)).sort(),
        );

        // One summary per range: level-0 summaries never share a toSeq, each folds the one before it, and
        // the newest is where the conversation's watermark stands.
        const summaries = await store.listSummaries(scope);
        const levelZero = summaries.filter((summary) => summary.level === 0);
        expect(new Set(levelZero.map((summary) => summary.toSeq)).size).toBe(levelZero.length);
        summaries.forEach((summary, index) => {
          expect(summary.foldedSummaryIds).toEqual(index === 0 ? [] : [summaries[index - 1]!.id]);
          expect(summary.fromSeq).toBe(1);
          if (index > 0) expect(summary.toSeq).toBeGreaterThanOrEqual(summaries[index - 1]!.toSeq);
        });
        const row = await store.getConversation(scope);
        expect(row?.summarizedThroughSeq).toBe(summaries[summaries.length - 1]?.toSeq ?? 0);
        expect(summaries.length, `summaries of node-${conversation}`).toBeGreaterThanOrEqual(2);
        summaryCount += summaries.length;

        expect(await store.listUnembeddedMessages(scope, embedderModel, 1000)).toEqual([]);
        jobs.push(...(await store.listJobs(scope)));
      }
      // Every job ran to `done` in one lease: none failed, none was retried, none is left.
      expect(jobs.filter((job) => job.status !== 'done' || job.attempts !== 1 || job.lastError !== undefined)).toEqual(
        [],
      );
      expect(new Set(jobs.map((job) => job.kind))).toEqual(new Set(['compact', 'embed', 'extract']));
      expect(summaryCount).toBeGreaterThanOrEqual(2 * conversationCount);
      expect(gauge).toMatchObject({ pending: 0, running: 0, failed: 0 });

      // Exactly one vector per message: the model's table holds 2,000 rows, one per (conversation, seq).
      const admin = new pg.Client({ connectionString });
      await admin.connect();
      try {
        const table = await admin.query<{ id: number }>(`SELECT id FROM "${schema}".vector_tables WHERE model = $1`, [
          embedderModel,
        ]);
        expect(table.rows).toHaveLength(1);
        const vectors = await admin.query<{ rows: string; keys: string }>(
          `SELECT count(*) AS rows, count(DISTINCT (conversation_id, seq)) AS keys FROM "${schema}".vectors_${table.rows[0]!.id}`,
        );
        expect(vectors.rows[0]).toEqual({ rows: String(totalMessages), keys: String(totalMessages) });
      } finally {
        await admin.end();
      }
      for (const replica of replicas) expect(replica.stderr()).toBe('');
    },
  );
});
