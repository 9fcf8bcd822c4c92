// Erasing a large user while another user keeps being served (issue 26).
//
//   npm run bench:erase -- [--messages 100000] [--stores sqlite,postgres] [--db postgres://…]
//
// For each store: seeds user "big" with N messages (hashed vectors for all of them) and user "small"
// with 200, then starts a separate process that serves "small" (append + hybrid context, back to back,
// on its own connection to the same store, as another `mnemo serve` process would), and erases "big"
// twice over: `deleteUser` and, after seeding again, `memory.eraseMessages({ before })` (a retention-style
// erase of every message, as REST, MCP and the retention sweep call it: in steps of 2,000 messages). A
// request of the other user that fails (a 503 a client would retry) is counted, not fatal. Prints the erase times and the other user's request latencies during each
// erase next to those before it, as a table and JSON.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, HashedEmbedder, type Store } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import { createPostgresStore } from '@mnemo/postgres';
import { createSqliteStore } from '@mnemo/sqlite';

const argument = (name: string, fallback: string) => {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : process.argv[index + 1]!;
};

const big = { tenantId: 'bench', userId: 'big' };
const small = { tenantId: 'bench', userId: 'small', conversationId: 'small-1' };
const embedder = new HashedEmbedder({ dimensions: 64 });

async function openStore(kind: string, location: string): Promise<Store> {
  return kind === 'sqlite'
    ? createSqliteStore({ path: location })
    : createPostgresStore({ connectionString: location.split('#')[0]!, schema: location.split('#')[1]! });
}

// The serving child: "small" appends and builds a hybrid context back to back until told to stop, and
// reports every request's start time and duration.
async function serveSmall(kind: string, location: string): Promise<void> {
  const store = await openStore(kind, location);
  const memory = createMemory({ store, embedder, worker: { autoStart: false } });
  const samples: [number, number, number][] = [];
  let stop = false;
  process.on('message', (message) => {
    if (message === 'stop') stop = true;
  });
  process.send!('ready');
  let turn = 0;
  while (!stop) {
    const started = Date.now();
    let failed = 0;
    try {
      await memory.append(small, { role: 'user', content: `small turn ${turn} about the harbour relay` });
      await memory.buildContext(small, { policy: 'hybrid', maxTokens: 600, query: 'harbour relay' });
    } catch {
      failed = 1;
    }
    samples.push([started, Date.now() - started, failed]);
    turn += 1;
    // A synchronous store resolves every call at once: yield to the event loop so the stop message is read.
    await new Promise((resolve) => setImmediate(resolve));
  }
  process.send!(samples);
  await memory.close();
}

async function seedBig(store: Store, messages: number): Promise<void> {
  const perConversation = 10_000;
  for (let start = 0; start < messages; start += 1000) {
    const scope = { ...big, conversationId: `big-${Math.floor(start / perConversation)}` };
    const batch = Array.from({ length: Math.min(1000, messages - start) }, (_, index) =>
      makeNewMessage(`message ${start + index} on the ridge relay, battery ${(start + index) % 97} percent`, {
        createdAt: new Date(Date.UTC(2024, 0, 1) + (start + index) * 1000).toISOString(),
      }),
    );
    const stored = await store.appendMessages(scope, batch);
    const vectors = await embedder.embed(stored.map((message) => message.content));
    await store.upsertEmbeddings(
      scope,
      embedder.model,
      stored.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })),
    );
  }
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Row {
  store: string;
  erase: string;
  messages: number;
  seedS: number;
  eraseS: number;
  requestsBefore: number;
  p50BeforeMs: number;
  requestsDuring: number;
  p50DuringMs: number;
  maxDuringMs: number;
  failedDuring: number;
}

async function measure(
  kind: string,
  location: string,
  messages: number,
  how: 'deleteUser' | 'eraseMessages',
): Promise<Row> {
  const store = await openStore(kind, location);
  const seedStarted = Date.now();
  await seedBig(store, messages);
  const seedS = (Date.now() - seedStarted) / 1000;
  console.error(`seeded ${messages} on ${kind} in ${seedS} s`);
  const child = fork(new URL(import.meta.url).pathname, ['--serve', kind, location], { execArgv: ['--import', 'tsx'] });
  child.on('exit', (code) => console.error(`serving process exited with ${code}`));
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  console.error('serving process ready');
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const eraseStarted = Date.now();
  if (how === 'deleteUser') await store.deleteUser(big);
  else
    await createMemory({ store, worker: { autoStart: false } }).eraseMessages({
      ...big,
      before: new Date(Date.UTC(2030, 0, 1)).toISOString(),
    });
  const eraseEnded = Date.now();
  console.error(`erased in ${eraseEnded - eraseStarted} ms`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const samples = await new Promise<[number, number, number][]>((resolve) => {
    child.once('message', (message) => resolve(message as [number, number, number][]));
    child.send('stop');
  });
  await store.close();
  const before = samples.filter(([started]) => started < eraseStarted).map(([, ms]) => ms);
  // A request that overlapped the erase at all counts as during it.
  const overlapping = samples.filter(([started, ms]) => started + ms >= eraseStarted && started <= eraseEnded);
  const during = overlapping.map(([, ms]) => ms);
  return {
    store: kind,
    erase: how,
    messages,
    seedS,
    eraseS: (eraseEnded - eraseStarted) / 1000,
    requestsBefore: before.length,
    p50BeforeMs: percentile(before, 50),
    requestsDuring: during.length,
    p50DuringMs: percentile(during, 50),
    maxDuringMs: Math.max(...during, 0),
    failedDuring: overlapping.filter(([, , failed]) => failed === 1).length,
  };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--serve') return serveSmall(process.argv[3]!, process.argv[4]!);
  const messages = Number(argument('messages', '100000'));
  const stores = argument('stores', 'sqlite,postgres').split(',');
  const rows: Row[] = [];
  for (const kind of stores) {
    for (const how of ['deleteUser', 'eraseMessages'] as const) {
      const directory = mkdtempSync(join(tmpdir(), 'mnemo-erase-bench-'));
      const location =
        kind === 'sqlite'
          ? join(directory, 'mnemo.db')
          : `${argument('db', process.env['MNEMO_TEST_DATABASE_URL'] ?? 'postgres://mnemo:mnemo@127.0.0.1:5432/mnemo_test')}#bench_erase_${process.pid}_${how.toLowerCase()}`;
      try {
        rows.push(await measure(kind, location, messages, how));
        console.error(JSON.stringify(rows.at(-1)));
      } finally {
        rmSync(directory, { recursive: true, force: true });
        if (kind === 'postgres') {
          const { default: pg } = await import('pg');
          const client = new pg.Client({ connectionString: location.split('#')[0] });
          await client.connect();
          await client.query(`DROP SCHEMA IF EXISTS "${location.split('#')[1]}" CASCADE`);
          await client.end();
        }
      }
    }
  }
  console.log(
    '| store | erase | messages | seed s | erase s | other user: requests before (p50 ms) | during the erase (p50 / max ms) | failed during |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    console.log(
      `| ${row.store} | ${row.erase} | ${row.messages} | ${row.seedS.toFixed(1)} | ${row.eraseS.toFixed(2)} | ${row.requestsBefore} (${row.p50BeforeMs}) | ${row.requestsDuring} (${row.p50DuringMs} / ${row.maxDuringMs}) | ${row.failedDuring} |`,
    );
  }
  console.log(JSON.stringify(rows));
}

await main();
