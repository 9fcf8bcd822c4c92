// What a served context does when its embedding endpoint misbehaves (decision 0051): the real `mnemo serve`
// with MNEMO_EMBEDDER=openai and nothing else configured, against a local server speaking the OpenAI
// protocol scripted per scenario (healthy, slow, unreachable, stalled, refusing the key, 503 always, 503 a
// while then up). Two users each ask for a context every 200 ms, side by side, for `--seconds`; a third
// user with no messages asks too. Per scenario: how many contexts were answered, with which status, how
// fast, how they recalled, and whether any held another user's words.
// Run: npm run bench:embedding-faults (prints a Markdown table, and JSON with --json).
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startScriptedOpenAiServer, type ScriptedEmbeddingReply } from '@mnemo/models/testing';
import { startServe } from './start-serve.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '12' },
    cli: { type: 'string', default: fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url)) },
  },
});
const seconds = Number(values.seconds);
if (!Number.isFinite(seconds) || seconds <= 0) throw new Error('--seconds must be a positive number');

const always = (reply: ScriptedEmbeddingReply) => Array.from({ length: 100_000 }, () => reply);

/** A scenario: the endpoint's script, or `undefined` for a port nothing listens on. */
interface Scenario {
  readonly name: string;
  readonly replies: readonly ScriptedEmbeddingReply[] | undefined;
}

const scenarios: Scenario[] = [
  { name: 'healthy', replies: [] },
  { name: 'slow: 80 ms a request', replies: always({ delayMs: 80 }) },
  { name: 'unreachable', replies: undefined },
  { name: 'stalled: 3 s a request', replies: always({ delayMs: 3000 }) },
  { name: 'refuses the key (401)', replies: always({ status: 401 }) },
  { name: '503 on every request', replies: always({ status: 503 }) },
  { name: '503 for 12 requests, then up', replies: Array.from({ length: 12 }, () => ({ status: 503 })) },
];

interface Outcome {
  readonly status: number;
  readonly ms: number;
  /** `mode` or `mode/reason`, or the error code when the context failed. */
  readonly recall: string;
  readonly leaked: boolean;
}

interface Row {
  readonly scenario: string;
  readonly contexts: number;
  readonly ok: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly maxMs: number;
  readonly recall: Readonly<Record<string, number>>;
  readonly leaks: number;
}

const users = ['alice', 'bob'] as const;

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function post(url: string, user: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-mnemo-user': user },
    body: JSON.stringify(body),
  });
}

async function askContext(base: string, user: string, conversation: string): Promise<Outcome> {
  const started = performance.now();
  const response = await post(`${base}/v1/conversations/${conversation}/context`, user, {
    query: 'who is my manager on project falcon?',
    recall: 'every-turn',
  });
  const text = await response.text();
  const ms = performance.now() - started;
  const others = users.filter((other) => other !== user).map((other) => `Dana-${other}`);
  const leaked = others.some((word) => text.includes(word));
  if (!response.ok) {
    const code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? 'unknown';
    return { status: response.status, ms, recall: `failed: ${code}`, leaked };
  }
  const recall = (JSON.parse(text) as { report: { recall?: { mode: string; reason?: string } } }).report.recall;
  const label =
    recall === undefined ? 'none' : recall.reason === undefined ? recall.mode : `${recall.mode}/${recall.reason}`;
  return { status: response.status, ms, recall: label, leaked };
}

function percentile(sorted: readonly number[], share: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

async function run(scenario: Scenario): Promise<Row> {
  const endpoint =
    scenario.replies === undefined
      ? undefined
      : await startScriptedOpenAiServer({ replies: [], embeddingReplies: scenario.replies, embeddingDimensions: 16 });
  const baseUrl = endpoint?.baseUrl ?? `http://127.0.0.1:${await unusedPort()}/v1`;
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-faults-'));
  const serve = await startServe({
    cli: values.cli,
    directory,
    db: join(directory, 'mnemo.db'),
    env: {
      MNEMO_EMBEDDER: 'openai',
      MNEMO_EMBEDDING_MODEL: 'embed-model',
      MNEMO_EMBEDDING_DIMENSIONS: '16',
      MNEMO_EMBEDDING_BASE_URL: baseUrl,
    },
  });
  try {
    for (const user of users) {
      const response = await post(`${serve.url}/v1/conversations/c-${user}/messages`, user, {
        messages: [
          { role: 'user', content: `My manager is Dana-${user} and I report to her on project falcon.` },
          { role: 'assistant', content: 'Noted.' },
          ...Array.from({ length: 20 }, (_, index) => ({
            role: index % 2 === 0 ? 'user' : 'assistant',
            content: `signal report ${index}: SNR ${index - 8} dB on the ridge relay`,
          })),
        ],
      });
      if (response.status !== 201) throw new Error(`append answered ${response.status}: ${await response.text()}`);
    }
    const outcomes: Outcome[] = [];
    const until = performance.now() + seconds * 1000;
    // Each client asks, waits for the answer, then 200 ms; alice and bob in their chats, carol with none.
    const client = async (user: string, conversation: string) => {
      while (performance.now() < until) {
        outcomes.push(await askContext(serve.url, user, conversation));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    await Promise.all([client('alice', 'c-alice'), client('bob', 'c-bob'), client('carol', 'c-carol')]);
    const times = outcomes.map((outcome) => outcome.ms).sort((a, b) => a - b);
    const recall: Record<string, number> = {};
    for (const outcome of outcomes) recall[outcome.recall] = (recall[outcome.recall] ?? 0) + 1;
    return {
      scenario: scenario.name,
      contexts: outcomes.length,
      ok: outcomes.filter((outcome) => outcome.status === 200).length,
      p50Ms: Math.round(percentile(times, 0.5)),
      p90Ms: Math.round(percentile(times, 0.9)),
      maxMs: Math.round(times.at(-1) ?? 0),
      recall,
      leaks: outcomes.filter((outcome) => outcome.leaked).length,
    };
  } finally {
    await serve.stop();
    await endpoint?.close();
    await rm(directory, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (const scenario of scenarios) rows.push(await run(scenario));

if (values.json) console.log(JSON.stringify({ seconds, rows }, null, 2));
else {
  console.log(
    `\nServed contexts under a misbehaving embedding endpoint: 3 clients, each one request every 200 ms, ${seconds} s\n`,
  );
  console.log("| endpoint | contexts | answered 200 | p50 / p90 / max ms | how they recalled | another user's words |");
  console.log('|---|---:|---:|---|---|---:|');
  for (const row of rows) {
    const recall = Object.entries(row.recall)
      .sort((a, b) => b[1] - a[1])
      .map(([label, count]) => `${label} ${count}`)
      .join(', ');
    console.log(
      `| ${row.scenario} | ${row.contexts} | ${row.ok} | ${row.p50Ms} / ${row.p90Ms} / ${row.maxMs} | ${recall} | ${row.leaks} |`,
    );
  }
}
