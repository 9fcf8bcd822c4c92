// Times the bundled USE-lite model: load, first pass, and ms per sentence at batch sizes 1, 16 and 64; then
// a server's query thread (`UseLiteThreadEmbedder` with serve's 30 ms deadline) right after its load, without
// and with its warm-up passes, one query each 200 ms; then the real `mnemo serve` (defaults: static embedder,
// USE-lite refiner) just started on a refined mesh-radio chat, one context request each 200 ms: how many
// ranked in the refiner's space.
// Run: npm run bench:use-lite (prints Markdown tables, and JSON with --json; numbers depend on the machine).
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { UseLiteEmbedder, UseLiteThreadEmbedder } from '@mnemo/models';
import { startServe } from './start-serve.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    cli: { type: 'string', default: fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url)) },
    mesh: { type: 'string', default: fileURLToPath(new URL('../examples/mesh-radio-node-7.jsonl', import.meta.url)) },
  },
});

const subjects = [
  'my battery',
  'the relay on the ridge',
  'our trip to Lisbon',
  'the new radio',
  'my sister Ana',
  'the spare antenna',
];
const complaints = [
  'is almost empty again',
  'needs a firmware update before Friday',
  'was moved to the second week of June',
  'keeps dropping packets at night',
];
// Ten-ish words each, like chat messages; distinct so no cache could help.
const sentences = Array.from(
  { length: 256 },
  (_, index) => `${subjects[index % subjects.length]} ${complaints[index % complaints.length]} (note ${index})`,
);

async function time(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

const embedder = new UseLiteEmbedder({ batchSize: 64 });
const loadMs = await time(() => embedder.load());
const firstMs = await time(() => embedder.embed([sentences[0]!]));

const rows: string[] = [];
for (const batchSize of [1, 16, 64]) {
  const sized = new UseLiteEmbedder({ batchSize });
  const count = batchSize === 1 ? 64 : 256;
  await sized.embed(sentences.slice(0, batchSize)); // warm-up pass at this shape
  const elapsed = await time(() => sized.embed(sentences.slice(0, count)));
  rows.push(`| ${batchSize} | ${count} | ${(elapsed / count).toFixed(2)} | ${Math.round((count * 1000) / elapsed)} |`);
}

console.log(`USE-lite (${embedder.model}) on ${cpus().length} cores, Node ${process.version}`);
console.log(`load (import + weights): ${loadMs.toFixed(0)} ms; first forward pass: ${firstMs.toFixed(0)} ms\n`);
console.log('| batch size | sentences | ms / sentence | sentences / s |');
console.log('| ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);

const deadlineMs = 30;
const queryGapMs = 200;
const queries = [
  'Where did we move the repeater?',
  'What battery voltage did the ridge relay show this morning?',
  'Who runs the north mast node?',
  'did the solar controller come back after the storm',
];

interface ThreadRun {
  readonly warmUpPasses: number;
  readonly loadMs: number;
  readonly ms: readonly number[];
}

/** A fresh query thread: its load, then 40 queries one each `queryGapMs`, each timed. */
async function timeQueryThread(warmUpPasses: number): Promise<ThreadRun> {
  const thread = new UseLiteThreadEmbedder({ callerDeadlineMs: deadlineMs, warmUpPasses });
  try {
    const loadMs = await time(() => thread.load());
    const ms: number[] = [];
    for (let index = 0; index < 40; index += 1) {
      ms.push(await time(() => thread.embed([queries[index % queries.length]!])));
      await sleep(queryGapMs);
    }
    return { warmUpPasses, loadMs, ms };
  } finally {
    await thread.close();
  }
}

const threadRuns = [await timeQueryThread(0), await timeQueryThread(30)];
console.log(
  `\nA query thread (deadline ${deadlineMs} ms) right after its load, one query each ${queryGapMs} ms: ms per query\n`,
);
console.log(
  '| warm-up passes | load ms | first 10: p50 / max | first 10 within deadline | all 40: p50 / p90 | all 40 within deadline |',
);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
for (const run of threadRuns) {
  const first = run.ms.slice(0, 10);
  console.log(
    `| ${run.warmUpPasses} | ${run.loadMs.toFixed(0)} | ${quantile(first, 0.5)} / ${quantile(first, 1)} | ${within(first)} | ${quantile(run.ms, 0.5)} / ${quantile(run.ms, 0.9)} | ${within(run.ms)} |`,
  );
}

const served = await servedRefinerShare();
console.log(
  `\n\`mnemo serve\` (defaults) just started on a refined ${served.messages}-message mesh-radio chat, one context request each ${queryGapMs} ms: requests ranked in the refiner's space\n`,
);
console.log("| requests | in the refiner's space |");
console.log('| ---: | ---: |');
for (let start = 0; start < served.refined.length; start += 10) {
  const window = served.refined.slice(start, start + 10);
  console.log(`| ${start + 1}–${start + window.length} | ${window.filter(Boolean).length} / ${window.length} |`);
}

if (values.json)
  console.log(
    JSON.stringify({
      model: embedder.model,
      loadMs,
      firstMs,
      threadRuns: threadRuns.map((run) => ({ ...run, ms: run.ms.map(round) })),
      served,
    }),
  );

/**
 * Feeds the mesh-radio example to a fresh `mnemo serve`, waits for its jobs (embedding, refining), restarts
 * it (a cold query thread), then asks 50 contexts one each `queryGapMs` from the moment it listens.
 */
async function servedRefinerShare(): Promise<{ messages: number; refined: boolean[] }> {
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-use-lite-'));
  try {
    const db = join(directory, 'mnemo.db');
    const messages = readFileSync(values.mesh, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { role: string; content: string });
    const filling = await startServe({ cli: values.cli, directory, db });
    try {
      await post(`${filling.url}/v1/conversations/node-7/messages`, {
        userId: 'maren',
        messages: messages.map(({ role, content }) => ({ role, content })),
      });
      await waitForRefined(filling.url);
    } finally {
      await filling.stop();
    }
    const serving = await startServe({ cli: values.cli, directory, db });
    try {
      const refined: boolean[] = [];
      for (let index = 0; index < 50; index += 1) {
        refined.push((await askContext(serving.url, queries[index % queries.length]!)) !== 'static');
        await sleep(queryGapMs);
      }
      return { messages: messages.length, refined };
    } finally {
      await serving.stop();
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** The vector space a context's recall ranked in: `refiner`, or `static` (the static embedder, or none). */
async function askContext(url: string, query: string): Promise<'refiner' | 'static'> {
  const built = (await post(`${url}/v1/conversations/node-7/context?user_id=maren`, { maxTokens: 1000, query })) as {
    report: { recall?: { model?: string } };
  };
  return built.report.recall?.model === new UseLiteEmbedder().model ? 'refiner' : 'static';
}

/** Waits (at most 120 s) until a context ranks in the refiner's space: every message embedded and refined. */
async function waitForRefined(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if ((await askContext(url, queries[0]!)) === 'refiner') return;
    await sleep(500);
  }
  throw new Error('the mesh-radio chat was not refined within 120 s');
}

async function post(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url}: ${response.status} ${text}`);
  return JSON.parse(text);
}

function within(ms: readonly number[]): string {
  return `${ms.filter((value) => value <= deadlineMs).length} / ${ms.length}`;
}

function quantile(ms: readonly number[], q: number): number {
  const sorted = [...ms].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolvePromise) => setTimeout(resolvePromise, ms));
}
