// What recall's refiner gap check (decision 0045 item 7) costs in one long conversation, before and after
// it read only the newest `refinerGapWindow` messages (decision 0048), side by side in one run: one
// mesh-radio conversation of each --sizes (default 1,000, 10,000 and 100,000 messages), every message with
// a vector of the embedder and of the refiner (both the hashed bag-of-words embedder at two widths: a
// search costs the same whatever model wrote the vectors), in a SQLite file and in a fresh PostgreSQL schema
// (pgvector tables; --postgres-url, MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL, dropped after).
// For --queries queries (alternating which goes first): the check alone (`listUnembeddedMessages` over the
// whole conversation, as before, against `listUnembeddedNewest`) and `recall()` with the refiner, the
// "before" one through a store whose newest-window read is the whole-conversation one.
// Run: npm run bench:refiner-gap [-- --store sqlite|postgres|both --sizes 1000,100000 --queries 40 --json]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGptTokenCounter, defaultMessageLimits, HashedEmbedder, type Store, type UserScope } from '@mnemo/core';
import { prepareMessages, recall, refinerGapLimit, refinerGapWindow } from '@mnemo/core/internals';
import { createPostgresStore } from '@mnemo/postgres';
import { createSqliteStore } from '@mnemo/sqlite';
import pg from 'pg';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { formatCount, formatTable } from '../packages/cli/dist/output/format-table.js';
import { countFlag } from './flags.js';

const resultsPath = fileURLToPath(new URL('./results/refiner-gap.json', import.meta.url));
const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'both' },
    sizes: { type: 'string', default: '1000,10000,100000' },
    queries: { type: 'string', default: '40' },
    'postgres-url': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
if (!['sqlite', 'postgres', 'both'].includes(values.store))
  throw new RangeError(`--store must be sqlite, postgres or both (got ${values.store})`);
const sizes = values.sizes.split(',').map((size) => countFlag('--sizes', size, 1));
const queries = countFlag('--queries', values.queries, 2);
const postgresUrl =
  values['postgres-url'] ?? process.env['MNEMO_BENCH_DATABASE_URL'] ?? process.env['MNEMO_TEST_DATABASE_URL'];
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
const user: UserScope = { tenantId: 'bench', userId: 'one-node' };
const embedder = new HashedEmbedder({ dimensions: 256 });
const refiner = new HashedEmbedder({ dimensions: 512 });

interface Pair {
  readonly beforeP50Ms: number;
  readonly afterP50Ms: number;
}
interface Row {
  readonly store: 'SQLite' | 'PostgreSQL';
  readonly messages: number;
  readonly check: Pair;
  readonly recall: Pair;
  /** Whether recall() ranked the same hits before and after (every query). */
  readonly sameHits: boolean;
}

const rows: Row[] = [];
const notes: string[] = [];
for (const size of sizes) {
  const chat = prepareMessages(generateMeshChat({ messages: size, seed: 7 }), {
    limits: defaultMessageLimits,
    counter: createGptTokenCounter(),
    now: Date.now,
  });
  const asked = Array.from({ length: queries }, (_, index) =>
    chat[Math.floor(((index + 0.5) * chat.length) / queries)]!.content.split(/\s+/).slice(0, 8).join(' '),
  );
  if (values.store !== 'postgres') {
    const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-gap-'));
    const store = createSqliteStore({ path: join(directory, 'gap.db') });
    try {
      rows.push(await measure('SQLite', store, chat, asked));
    } finally {
      await store.close();
      await rm(directory, { recursive: true, force: true });
    }
  }
  if (values.store !== 'sqlite') {
    if (postgresUrl === undefined) {
      if (!notes.some((note) => note.startsWith('PostgreSQL skipped')))
        notes.push('PostgreSQL skipped: set --postgres-url, MNEMO_BENCH_DATABASE_URL or MNEMO_TEST_DATABASE_URL.');
      continue;
    }
    const schema = `mnemo_gap_${Date.now()}`;
    const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
    const store = await createPostgresStore({ connectionString: postgresUrl, schema });
    try {
      rows.push(
        await measure('PostgreSQL', store, chat, asked, async () => {
          const tables = await admin.query<{ name: string }>(
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND (tablename IN ('messages', 'message_vectors') OR tablename LIKE 'vectors\\_%')",
            [schema],
          );
          for (const { name } of tables.rows) await admin.query(`VACUUM ANALYZE "${schema}"."${name}"`);
        }),
      );
    } finally {
      await store.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }
}

const result = { settings: { sizes, queries, refinerGapWindow, refinerGapLimit }, rows, notes };
await mkdir(join(resultsPath, '..'), { recursive: true });
await writeFile(resultsPath, `${JSON.stringify(result, null, 2)}\n`);
if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
log(
  formatTable(
    [
      { header: 'store' },
      { header: 'messages', align: 'right' },
      { header: 'gap check before p50 ms', align: 'right' },
      { header: 'after', align: 'right' },
      { header: 'recall() before p50 ms', align: 'right' },
      { header: 'after', align: 'right' },
      { header: 'same hits' },
    ],
    rows.map((row) => [
      row.store,
      formatCount(row.messages),
      row.check.beforeP50Ms.toFixed(2),
      row.check.afterP50Ms.toFixed(2),
      row.recall.beforeP50Ms.toFixed(2),
      row.recall.afterP50Ms.toFixed(2),
      row.sameHits ? 'yes' : 'no',
    ]),
  ),
);
log(
  `before: the whole conversation read for messages without the refiner's vector (limit ${refinerGapLimit + 1}); after: its newest ${formatCount(refinerGapWindow)} only.`,
);
for (const note of notes) log(note);
log(`JSON: ${resultsPath}`);

/** Stores the chat with both models' vectors, then times the check and recall() before and after, query by query. */
async function measure(
  name: Row['store'],
  store: Store,
  chat: ReturnType<typeof prepareMessages>,
  asked: readonly string[],
  settle: () => Promise<void> = async () => undefined,
): Promise<Row> {
  const scope = { ...user, conversationId: 'node-0001' };
  for (let offset = 0; offset < chat.length; offset += 500) {
    const appended = await store.appendMessages(scope, chat.slice(offset, offset + 500));
    for (const model of [embedder, refiner]) {
      const vectors = await model.embed(appended.map((message) => message.content));
      await store.upsertEmbeddings(
        scope,
        model.model,
        appended.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })),
      );
    }
  }
  await settle();
  // The check as it was: every message of the conversation read for a missing vector.
  const wholeConversation: Store = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'listUnembeddedNewest')
        return (...[at, model, , limit, options]: Parameters<Store['listUnembeddedNewest']>) =>
          target.listUnembeddedMessages(at, model, limit, options);
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  const check = { before: [] as number[], after: [] as number[] };
  const recalled = { before: [] as number[], after: [] as number[] };
  let sameHits = true;
  for (const [index, query] of asked.entries()) {
    const order = index % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
    const hits: Record<'before' | 'after', string> = { before: '', after: '' };
    for (const side of order) {
      const target = side === 'before' ? wholeConversation : store;
      let started = performance.now();
      await target.listUnembeddedNewest(scope, refiner.model, refinerGapWindow, refinerGapLimit + 1);
      check[side].push(performance.now() - started);
      started = performance.now();
      const found = await recall({ store: target, embedder, refiner }, user, query, { k: 10 });
      recalled[side].push(performance.now() - started);
      hits[side] = found.map((hit) => `${hit.conversationId}:${hit.message.seq}`).join(',');
    }
    sameHits &&= hits.before === hits.after;
  }
  log(`${name}, ${formatCount(chat.length)} messages: measured ${asked.length} queries`);
  return {
    store: name,
    messages: chat.length,
    check: { beforeP50Ms: median(check.before), afterP50Ms: median(check.after) },
    recall: { beforeP50Ms: median(recalled.before), afterP50Ms: median(recalled.after) },
    sameHits,
  };
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
