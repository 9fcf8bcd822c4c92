// HTTP benchmark: requests per second and latency of the context endpoints of `mnemo serve` over
// loopback, on a SQLite store seeded with 100,000 messages, then the OpenAI-compatible proxy's overhead
// against a scripted upstream (bench/proxy-overhead.ts). Run: npm run bench:http (-- --proxy-only).
// The server runs in a child process (this file with --serve) so that autocannon and the server do not
// share one event loop; both still share the machine's cores, so read the figures as an order of magnitude.
import { fork } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGptTokenCounter, createMemory, defaultMessageLimits } from '@mnemo/core';
import { prepareMessages } from '@mnemo/core/internals';
import { createServerApp, startServer } from '@mnemo/server';
import { createSqliteStore } from '@mnemo/sqlite';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { formatProxyOverheadTable, runProxyOverhead, type ProxyOverheadReport } from './proxy-overhead.js';

const resultsPath = fileURLToPath(new URL('./results/http.json', import.meta.url));
const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    messages: { type: 'string', default: '100000' },
    conversations: { type: 'string', default: '100' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    'max-tokens': { type: 'string', default: '1000' },
    'proxy-conversations': { type: 'string', default: '300' },
    'proxy-only': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

if (values.serve !== undefined) await serveForBenchmark(values.serve);
else if (values['proxy-only']) await runProxyOnly();
else await runBenchmark();

function logLine(line: string): void {
  (values.json ? process.stderr : process.stdout).write(`${line}\n`);
}

async function measureProxy(): Promise<ProxyOverheadReport> {
  return runProxyOverhead(
    {
      durationSeconds: positiveInteger('--duration', values.duration),
      connections: positiveInteger('--connections', values.connections),
      conversations: positiveInteger('--proxy-conversations', values['proxy-conversations']),
    },
    logLine,
  );
}

function printProxy(proxy: ProxyOverheadReport): void {
  logLine('');
  logLine(formatProxyOverheadTable(proxy.rows));
  logLine(
    `\nOpenAI-compatible proxy against a scripted loopback upstream: ${proxy.settings.connections} connections, ${proxy.settings.durationSeconds} s per column, ` +
      `${proxy.settings.conversations} conversations round-robin on an empty SQLite store (${proxy.messagesStored.toLocaleString('en')} messages stored over the run).`,
  );
}

/** --proxy-only: only the proxy rows; they replace `proxyOverhead` in an existing results file and keep its context rows. */
async function runProxyOnly(): Promise<void> {
  const proxy = await measureProxy();
  let report: Record<string, unknown> = { benchmark: 'http' };
  try {
    report = JSON.parse(await readFile(resultsPath, 'utf8')) as Record<string, unknown>;
  } catch {
    // no earlier results: write the proxy rows alone
  }
  report = { ...report, proxyOverhead: { createdAt: new Date().toISOString(), node: process.version, ...proxy } };
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(resultsPath, `${JSON.stringify(report, null, 2)}\n`);
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    printProxy(proxy);
    logLine(`JSON: ${resultsPath}`);
  }
}

/** Child mode: serve the seeded file until the parent disconnects; tell the parent the URL. */
async function serveForBenchmark(db: string): Promise<void> {
  const store = createSqliteStore({ path: db });
  const memory = createMemory({ store });
  const app = createServerApp({ memory, logger: pino({ level: 'silent' }), limits: { rateLimit: false } });
  const server = await startServer({ app, host: '127.0.0.1', port: 0 });
  process.send?.({ url: server.url });
  process.once('disconnect', () => void server.close());
}

interface Scenario {
  readonly name: string;
  readonly path: (conversationId: string) => string;
  readonly body: (conversationId: string) => unknown;
}

interface ScenarioResult {
  readonly name: string;
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
  readonly errors: number;
  readonly non2xx: number;
}

async function runBenchmark(): Promise<void> {
  const messages = positiveInteger('--messages', values.messages);
  const conversations = positiveInteger('--conversations', values.conversations);
  const durationSeconds = positiveInteger('--duration', values.duration);
  const connections = positiveInteger('--connections', values.connections);
  const maxTokens = positiveInteger('--max-tokens', values['max-tokens']);
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-http-'));
  const db = join(directory, 'bench.db');
  const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  try {
    const seeding = await seedStore(db, messages, conversations);
    log(
      `seeded ${messages.toLocaleString('en')} messages in ${conversations} conversations in ${seeding.seedSeconds.toFixed(1)} s; compacted them in ${seeding.compactSeconds.toFixed(1)} s`,
    );
    const child = fork(fileURLToPath(import.meta.url), ['--serve', db], {
      execArgv: process.execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (message) => resolve((message as { url: string }).url));
      child.once('exit', (code) => reject(new Error(`the server exited with ${code} before listening`)));
    });
    const scenarios: Scenario[] = [
      {
        name: 'seed POST /v1/memory/context token_buffer',
        path: () => '/v1/memory/context',
        body: (id) => ({ conversation_id: id, max_tokens: maxTokens, memory_type: 'token_buffer' }),
      },
      {
        name: 'POST /v1/conversations/{id}/context token-window',
        path: (id) => `/v1/conversations/${id}/context`,
        body: () => ({ policy: 'token-window', maxTokens }),
      },
      {
        name: 'POST /v1/conversations/{id}/context summary',
        path: (id) => `/v1/conversations/${id}/context`,
        body: () => ({ policy: 'summary', maxTokens }),
      },
      {
        name: 'POST /v1/conversations/{id}/context full',
        path: (id) => `/v1/conversations/${id}/context`,
        body: () => ({ policy: 'full', maxTokens }),
      },
      {
        name: 'GET /v1/conversations/{id}/messages (100)',
        path: (id) => `/v1/conversations/${id}/messages?limit=100`,
        body: () => undefined,
      },
    ];
    const results: ScenarioResult[] = [];
    try {
      // A short untimed run first, so JIT warm-up and the tokenizer's first load land in no row.
      await measure(url, scenarios[0]!, conversations, 1, connections);
      for (const scenario of scenarios) {
        log(`running ${scenario.name} for ${durationSeconds} s ...`);
        results.push(await measure(url, scenario, conversations, durationSeconds, connections));
      }
    } finally {
      child.disconnect();
    }
    const proxyOverhead = await measureProxy();
    const report = {
      benchmark: 'http',
      createdAt: new Date().toISOString(),
      settings: {
        messages,
        conversations,
        messagesPerConversation: Math.ceil(messages / conversations),
        durationSeconds,
        connections,
        maxTokens,
        store: 'SQLite file (WAL)',
      },
      seeding,
      node: process.version,
      results,
      proxyOverhead,
    };
    await mkdir(new URL('./results/', import.meta.url), { recursive: true });
    await writeFile(resultsPath, `${JSON.stringify(report, null, 2)}\n`);
    if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else {
      log('');
      log(formatTable(results));
      log(
        `\n${connections} connections, ${durationSeconds} s per row, budget ${maxTokens} tokens, each request on one of ${conversations} conversations at random.`,
      );
      printProxy(proxyOverhead);
      log(`JSON: ${resultsPath}`);
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Seeds the store directly (validated and token-counted by core, written in batches of 1,000), then compacts each conversation. */
async function seedStore(
  db: string,
  messages: number,
  conversations: number,
): Promise<{ seedSeconds: number; compactSeconds: number }> {
  const store = createSqliteStore({ path: db });
  const counter = createGptTokenCounter();
  const memory = createMemory({ store, tokenCounter: counter, worker: { autoStart: false } });
  const perConversation = Math.ceil(messages / conversations);
  const started = performance.now();
  let left = messages;
  for (let index = 0; index < conversations && left > 0; index += 1) {
    const chat = generateMeshChat({ messages: Math.min(perConversation, left), seed: index + 1 });
    left -= chat.length;
    for (let offset = 0; offset < chat.length; offset += 1000) {
      const batch = prepareMessages(chat.slice(offset, offset + 1000), {
        limits: defaultMessageLimits,
        counter,
        now: Date.now,
      });
      await store.appendMessages(
        { tenantId: 'default', userId: 'default', conversationId: conversationId(index) },
        batch,
      );
    }
  }
  const seeded = performance.now();
  // Compaction brings each watermark up to date, as a live server's worker would have.
  for (let index = 0; index < conversations; index += 1)
    await memory.compact({ conversationId: conversationId(index) });
  const compacted = performance.now();
  await memory.close();
  return { seedSeconds: (seeded - started) / 1000, compactSeconds: (compacted - seeded) / 1000 };
}

async function measure(
  url: string,
  scenario: Scenario,
  conversations: number,
  durationSeconds: number,
  connections: number,
): Promise<ScenarioResult> {
  const result = await autocannon({
    url,
    connections,
    duration: durationSeconds,
    requests: [
      {
        setupRequest: (request) => {
          const id = conversationId(Math.floor(Math.random() * conversations));
          const body = scenario.body(id);
          return {
            ...request,
            path: scenario.path(id),
            method: body === undefined ? 'GET' : 'POST',
            headers: { 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          };
        },
      },
    ],
  });
  return {
    name: scenario.name,
    requests: result.requests.total,
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

function formatTable(results: readonly ScenarioResult[]): string {
  const header = ['scenario', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors'];
  const rows = results.map((row) => [
    row.name,
    String(row.requestsPerSecond),
    String(row.latencyMs.p50),
    String(row.latencyMs.p90),
    String(row.latencyMs.p99),
    String(row.latencyMs.max),
    String(row.errors + row.non2xx),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

function conversationId(index: number): string {
  return `node-${String(index).padStart(4, '0')}`;
}

function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${flag} must be a positive integer (got ${JSON.stringify(text)})`);
    process.exit(2);
  }
  return value;
}
