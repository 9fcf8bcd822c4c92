// Inspector benchmark: the size of what the page loads, and how long each view takes to appear in a real
// Chromium against a real `mnemo serve` (the built CLI, a separate process) on a SQLite store of
// 100 conversations × 1,000 messages (10 users × 10 conversations, each compacted, 5 context builds each
// in the ledger). Run: npm run bench:inspector (-- --conversations 20 --messages 1000 --runs 5 --json).
// The server and the browser share the machine's cores; read the times as an order of magnitude.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { createGptTokenCounter, createMemory, defaultMessageLimits } from '@mnemo/core';
import { prepareMessages } from '@mnemo/core/internals';
import { createSqliteStore } from '@mnemo/sqlite';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { launchInspectorBrowser, missingChromium, showView } from '../packages/cli/test/inspector-browser.js';
import { formatCount, formatTable } from '../packages/cli/dist/output/format-table.js';

const resultsPath = fileURLToPath(new URL('./results/inspector.json', import.meta.url));
const cliPath = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));
const usersCount = 10;
const key = 'bench-inspector-key';
const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '100' },
    messages: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '5' },
    json: { type: 'boolean', default: false },
  },
});

const conversations = positiveInteger('--conversations', values.conversations);
const messagesPerConversation = positiveInteger('--messages', values.messages);
const runs = positiveInteger('--runs', values.runs);
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
const userOf = (index: number) => `user-${String(index % usersCount).padStart(2, '0')}`;
const conversationOf = (index: number) => `node-${String(index).padStart(3, '0')}`;

const missing = missingChromium();
if (missing !== undefined) {
  log(`bench:inspector needs Chromium: ${missing}`);
  process.exit(2);
}
await run();

async function run(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'mnemo-bench-inspector-'));
  const db = join(work, 'inspector.db');
  const serve = { kill: () => {} };
  try {
    const seeding = await seedStore(db);
    log(
      `seeded ${formatCount(conversations * messagesPerConversation)} messages in ${conversations} conversations in ${seeding.toFixed(1)} s`,
    );
    const { url, stop } = await startServe(db, work);
    serve.kill = stop;
    const bundle = await measureBundle(url);
    const views = await measureViews(url);
    const report = { settings: { conversations, messagesPerConversation, users: usersCount, runs }, bundle, views };
    log('');
    log(
      formatTable(
        [{ header: 'asset' }, { header: 'bytes', align: 'right' }, { header: 'gzip', align: 'right' }],
        bundle.map((row) => [row.asset, formatCount(row.bytes), formatCount(row.gzipBytes)]),
      ),
    );
    log('');
    log(
      formatTable(
        [
          { header: 'view' },
          { header: 'median ms', align: 'right' },
          { header: 'max ms', align: 'right' },
          { header: 'html bytes', align: 'right' },
        ],
        views.map((row) => [row.view, row.medianMs.toFixed(0), row.maxMs.toFixed(0), formatCount(row.htmlBytes)]),
      ),
    );
    log(
      `\nTime from navigation (first view: page load with the key already entered) until the view is on screen, ${runs} runs each.`,
    );
    await mkdir(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
    await writeFile(resultsPath, `${JSON.stringify(report, null, 2)}\n`);
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    serve.kill();
    await rm(work, { recursive: true, force: true });
  }
}

/** Seeds the store directly (validated and token-counted by core, in batches of 1,000), compacts each conversation and records 5 context builds each. */
async function seedStore(db: string): Promise<number> {
  const started = performance.now();
  const store = createSqliteStore({ path: db });
  const counter = createGptTokenCounter();
  const memory = createMemory({ store, tokenCounter: counter, worker: { autoStart: false }, knowledge: false });
  try {
    for (let index = 0; index < conversations; index += 1) {
      const scope = { tenantId: 'bench', userId: userOf(index), conversationId: conversationOf(index) };
      const chat = generateMeshChat({ messages: messagesPerConversation, seed: index + 1 });
      for (let offset = 0; offset < chat.length; offset += 1000) {
        await store.appendMessages(
          scope,
          prepareMessages(chat.slice(offset, offset + 1000), { limits: defaultMessageLimits, counter, now: Date.now }),
        );
      }
      await memory.compact(scope);
      for (let build = 0; build < 5; build += 1)
        await memory.buildContext(scope, { policy: 'summary', maxTokens: 1000 + build * 500 });
    }
    await memory.facts.put(
      { tenantId: 'bench', userId: userOf(0) },
      { attribute: 'home_town', value: 'Hood River', text: 'I live in Hood River' },
    );
  } finally {
    await memory.close();
  }
  return (performance.now() - started) / 1000;
}

async function startServe(db: string, cwd: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--db', db], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: cwd, MNEMO_API_KEYS: `${key}:bench` },
  });
  let stdout = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const first = /^mnemo listening on (http:\/\/\S+)\n/.exec(stdout);
      if (first !== null) resolve(first[1]!);
    });
    child.once('close', (code) => reject(new Error(`mnemo serve exited with ${code} before listening`)));
  });
  return { url, stop: () => void child.kill('SIGTERM') };
}

async function measureBundle(url: string): Promise<{ asset: string; bytes: number; gzipBytes: number }[]> {
  const rows = [];
  for (const asset of ['/inspect', '/inspect/inspector.js', '/inspect/inspector.css']) {
    const body = Buffer.from(await (await fetch(`${url}${asset}`)).arrayBuffer());
    rows.push({ asset, bytes: body.length, gzipBytes: gzipSync(body).length });
  }
  return [
    ...rows,
    {
      asset: 'total',
      bytes: rows.reduce((sum, row) => sum + row.bytes, 0),
      gzipBytes: rows.reduce((sum, row) => sum + row.gzipBytes, 0),
    },
  ];
}

async function measureViews(
  url: string,
): Promise<{ view: string; medianMs: number; maxMs: number; htmlBytes: number }[]> {
  const browser = await launchInspectorBrowser();
  const last = conversations - 1;
  const routes: [string, string, string][] = [
    ['conversations (first page, 50)', '#/conversations', 'conversations'],
    [
      `conversation (${formatCount(Math.min(200, messagesPerConversation))} of ${formatCount(messagesPerConversation)} messages)`,
      `#/conversation/${userOf(last)}/${conversationOf(last)}`,
      'conversation',
    ],
    [
      'next request (hybrid, 2,000 tokens)',
      `#/context/${userOf(last)}/${conversationOf(last)}?policy=hybrid&maxTokens=2000`,
      'context',
    ],
    ['savings', `#/savings/${userOf(last)}/${conversationOf(last)}`, 'savings'],
    ['facts', `#/facts/${userOf(0)}`, 'facts'],
    ['background', '#/background', 'background'],
  ];
  try {
    const { page, problems } = await browser.open();
    await page.goto(`${url}/inspect`);
    await page.fill('#key-input', key);
    await page.click('#key-form button[type=submit]');
    await page.locator('[data-view="conversations"]').waitFor();
    const rows = [];
    for (const [view, route, name] of routes) {
      const times: number[] = [];
      let htmlBytes = 0;
      for (let attempt = 0; attempt < runs; attempt += 1) {
        const started = performance.now();
        if (view.startsWith('conversations')) {
          // A full page load: the HTML, script and stylesheet, then the first view (the key is in sessionStorage).
          await page.goto('about:blank');
          await page.goto(`${url}/inspect${route}`);
          await page.locator(`[data-view="${name}"]`).waitFor({ timeout: 60_000 });
        } else {
          await showView(page, route, name, 60_000);
        }
        times.push(performance.now() - started);
        htmlBytes = await page.evaluate<number>("document.getElementById('view').innerHTML.length");
        // Somewhere else between runs, so the next run's hash is a change the page renders.
        await showView(page, `#/background?run=${attempt}`, 'background', 60_000);
      }
      times.sort((a, b) => a - b);
      rows.push({ view, medianMs: times[Math.floor(times.length / 2)]!, maxMs: times.at(-1)!, htmlBytes });
    }
    if (problems.filter((problem) => !problem.includes('status of 404')).length > 0)
      throw new Error(`the page reported problems: ${problems.join('; ')}`);
    return rows;
  } finally {
    await browser.close();
  }
}

function positiveInteger(flag: string, value: string | undefined): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`${flag} must be a positive integer (got ${value})`);
  return parsed;
}
