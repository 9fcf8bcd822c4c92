import { join } from 'node:path';
import type { Message, Store } from '@mnemo/core';
import { createPostgresStore } from '@mnemo/postgres';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePostgresDatabase } from '../../src/store/open-cli-store.js';
import { describeWithPostgres, dropSchemas, freshSchemaUrl } from '../postgres-database.js';
import { makeWorkDirectory } from '../run-mnemo.js';
import { recordFigures } from './reliability-figures.js';
import { postJson, startServe, type ServedMnemo } from './served-mnemo.js';

// Many writers (issue 12): 50 concurrent writers × 40 messages into ONE conversation over HTTP, the
// hardest case for gapless seqs (every append races for the same next seq). 2,000 stored, no error.
const writerCount = 50;
const messagesPerWriter = 40;
const conversationId = 'crowded-room';
const scope = { tenantId: 'default', userId: conversationId, conversationId };

let work: { path: string; remove: () => Promise<void> };
const running: ServedMnemo[] = [];

beforeAll(async () => {
  work = await makeWorkDirectory();
});

afterAll(async () => {
  for (const served of running) await served.crash();
  await work.remove();
}, 60_000);

/** Runs every writer (writer w to urls[w mod n]); returns the statuses that were not 201 and the wall time. */
async function writeAll(
  urls: readonly string[],
): Promise<{ failures: { writer: number; index: number; status: number }[]; wallMs: number }> {
  const failures: { writer: number; index: number; status: number }[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writerCount }, async (_, writer) => {
      for (let index = 0; index < messagesPerWriter; index += 1) {
        const answer = await postJson(`${urls[writer % urls.length]}/v1/conversations/${conversationId}/messages`, {
          messages: [
            {
              role: index % 2 === 0 ? 'user' : 'assistant',
              content: `writer ${writer} message ${index}: the ridge relay answers at ${index % 7} hops`,
            },
          ],
        });
        if (answer.status !== 201) failures.push({ writer, index, status: answer.status });
      }
    }),
  );
  return { failures, wallMs: Math.round(performance.now() - started) };
}

/** Checks the stored conversation: gapless, one copy of each message, each writer's messages in its order. */
function auditConversation(messages: readonly Message[]): {
  stored: number;
  gaps: number;
  duplicates: number;
  outOfOrder: number;
} {
  const contents = new Set(messages.map((message) => message.content));
  let outOfOrder = 0;
  const lastIndex = new Map<number, number>();
  for (const message of messages) {
    const [, writer, index] = /^writer (\d+) message (\d+):/.exec(message.content)!.map(Number) as [
      number,
      number,
      number,
    ];
    if ((lastIndex.get(writer) ?? -1) >= index) outOfOrder += 1;
    lastIndex.set(writer, index);
  }
  return {
    stored: messages.length,
    gaps: messages.filter((message, position) => message.seq !== position + 1).length,
    duplicates: messages.length - contents.size,
    outOfOrder,
  };
}

async function check(
  context: Parameters<typeof recordFigures>[0],
  section: string,
  urls: readonly string[],
  openStore: () => Promise<Store>,
): Promise<void> {
  const { failures, wallMs } = await writeAll(urls);
  const store = await openStore();
  const audit = auditConversation(await store.listMessages(scope));
  await store.close();
  recordFigures(context, section, [
    ['writers × messages', `${writerCount} × ${messagesPerWriter}`],
    ['stored', audit.stored],
    ['errors', failures.length],
    ['seq gaps', audit.gaps],
    ['duplicated', audit.duplicates],
    ['wall time ms (noisy: shared machine)', wallMs],
  ]);
  expect(failures).toEqual([]);
  expect(audit).toEqual({ stored: writerCount * messagesPerWriter, gaps: 0, duplicates: 0, outOfOrder: 0 });
}

describe('many writers into one conversation on a SQLite file', () => {
  it(
    'stores 2,000 of 2,000 appends of 50 concurrent writers, gapless, without an error',
    { timeout: 120_000 },
    async (context) => {
      const db = join(work.path, 'crowded.db');
      const served = await startServe(['--db', db, '--workers', '1'], { cwd: work.path });
      running.push(served);
      await check(context, 'many writers (SQLite)', [served.url], async () => createSqliteStore({ path: db }));
    },
  );
});

describeWithPostgres('many writers into one conversation on PostgreSQL with two replicas', (url) => {
  const target = freshSchemaUrl(url);
  afterAll(async () => dropSchemas(url, [target.schema]), 30_000);

  it(
    'stores 2,000 of 2,000 appends spread over two replicas, gapless, without an error',
    { timeout: 120_000 },
    async (context) => {
      const replicas = await Promise.all(
        [0, 1].map(() => startServe(['--db', target.url, '--workers', '0'], { cwd: work.path })),
      );
      running.push(...replicas);
      const { connectionString, schema } = parsePostgresDatabase(target.url);
      await check(
        context,
        'many writers (PostgreSQL, 2 replicas)',
        replicas.map((replica) => replica.url),
        () => createPostgresStore({ connectionString, ...(schema === undefined ? {} : { schema }), readonly: true }),
      );
    },
  );
});
