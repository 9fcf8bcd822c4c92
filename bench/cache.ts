// npm run bench:cache — what a bot that resends its whole history pays through mnemo against sending the
// history itself, once providers cache prompt prefixes (issue 22, invariant 7). The real `mnemo serve`
// (defaults, its own SQLite file) and a logging upstream run as separate processes; the bot replays a
// conversation one request per exchange, the upstream answers with the recorded reply and logs the
// prompt mnemo sent. Both request streams are then priced the same way:
//   OpenAI-style: the prefix shared with the previous request is cached when it is ≥ 1,024 tokens, in
//   128-token steps; cost = uncached + cached × the cached price ratio (100 / 50 / 25 / 10 %).
//   Anthropic-style: a breakpoint at the stable boundary (mnemo: X-Mnemo-Stable-Messages; full history:
//   before the newest user turn), cache writes at 125 %, reads at 10 %, a written prefix lives 5 minutes
//   from its last use (LoCoMo turns are taken 30 s apart within a session, sessions days apart).
// Conversations: LoCoMo (read from /work/shared/data/locomo/, never copied; --locomo, --conversations) and
// the mesh-radio example. Prints a table per conversation and length (20, 50, 100, 200, all exchanges),
// the cheapest sliding window of raw turns within the same budget as a floor, and JSON with --json.
import { fork } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGptTokenCounter, type MessageInput } from '@mnemo/core';
import { recalledBlockHeader } from '@mnemo/core/internals';
import { loadJsonlConversation } from './load-jsonl-conversation.js';
import { loadLocomoConversation } from './load-locomo-conversation.js';
import { startServe, type ServeProcess } from './start-serve.js';

const { values } = parseArgs({
  options: {
    locomo: {
      type: 'string',
      default: fileURLToPath(new URL('../../shared/data/locomo/locomo10.json', import.meta.url)),
    },
    conversations: { type: 'string', default: '0' },
    mesh: { type: 'string', default: fileURLToPath(new URL('../examples/mesh-radio-node-7.jsonl', import.meta.url)) },
    cli: { type: 'string', default: fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url)) },
    'max-exchanges': { type: 'string' },
    'serve-args': { type: 'string' },
    json: { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});

interface WireMessage {
  readonly role: string;
  readonly content: string | null;
  readonly name?: string;
}

/** The logging upstream: answers each chat completion with the reply the bench scripted, logs every prompt. */
async function runUpstream(): Promise<void> {
  let next = 'ok';
  let log: { messages: WireMessage[]; body: unknown }[] = [];
  const read = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
  };
  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method === 'POST' && request.url === '/script') {
      next = String((await read(request)).content);
      return json(200, {});
    }
    if (request.method === 'GET' && request.url === '/log') {
      const taken = log;
      log = [];
      return json(200, taken);
    }
    if (request.method === 'POST' && request.url === '/v1/chat/completions') {
      const body = await read(request);
      log.push({ messages: body.messages as WireMessage[], body });
      return json(200, {
        id: `chatcmpl-${log.length}`,
        object: 'chat.completion',
        created: 0,
        model: String(body.model),
        choices: [{ index: 0, message: { role: 'assistant', content: next }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      });
    }
    json(404, { error: { message: `no route ${request.method} ${request.url}` } });
  };
  // The server does not await its listener; an answer that fails is a crash of this bench process.
  const server = createServer((request, response) => void answer(request, response));
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const address = server.address() as { port: number };
  process.send?.({ url: `http://127.0.0.1:${address.port}` });
  process.once('disconnect', () => server.close());
}

interface Exchange {
  readonly user: readonly MessageInput[];
  readonly reply: string;
  readonly at: number;
}

/** Runs of user messages and the assistant messages after them (joined: the upstream answers once). */
function exchangesOf(messages: readonly MessageInput[]): Exchange[] {
  const exchanges: Exchange[] = [];
  let users: MessageInput[] = [];
  let replies: string[] = [];
  let at = 0;
  let lastSession = '';
  const flush = () => {
    if (users.length > 0 && replies.length > 0) exchanges.push({ user: users, reply: replies.join('\n'), at });
    users = [];
    replies = [];
  };
  for (const message of messages) {
    if (message.role === 'user') {
      if (replies.length > 0) flush();
      users.push({ role: 'user', content: message.content });
      // Times for the 5-minute cache lifetime: the message's own time when it has minutes, else 30 s after the previous turn of its session.
      const stamp = message.createdAt ?? '';
      if (stamp !== lastSession) {
        lastSession = stamp;
        at = Math.max(at + 30_000, Date.parse(stamp) || 0);
      } else at += 30_000;
    } else if (message.role === 'assistant' && users.length > 0) replies.push(message.content);
  }
  flush();
  return exchanges;
}

interface Priced {
  readonly prompt: number;
  readonly messageTokens: readonly number[];
  readonly messages: readonly WireMessage[];
  /** Leading messages behind the Anthropic-style breakpoint. */
  readonly breakpoint: number;
  readonly at: number;
}

const ratios = [1, 0.5, 0.25, 0.1] as const;
const lengths = [20, 50, 100, 200] as const;

function sameMessage(a: WireMessage, b: WireMessage): boolean {
  return a.role === b.role && a.content === b.content && a.name === b.name;
}

function sharedTokens(previous: Priced | undefined, current: Priced): number {
  if (previous === undefined) return 0;
  let tokens = 0;
  for (let index = 0; index < Math.min(previous.messages.length, current.messages.length); index += 1) {
    if (!sameMessage(previous.messages[index]!, current.messages[index]!)) break;
    tokens += current.messageTokens[index]!;
  }
  return tokens;
}

/** OpenAI's rule: a shared prefix of at least 1,024 tokens is cached in 128-token steps. */
function openAiCached(shared: number, prompt: number): number {
  return shared < 1024 ? 0 : Math.min(prompt, Math.floor(shared / 128) * 128);
}

interface StreamCosts {
  readonly prompt: number[];
  readonly cached: number[];
  /** Anthropic-style cost per request, in base-price tokens. */
  readonly anthropic: number[];
  /** Tokens of the recalled snippets' message per request (0 where there is none), never cached. */
  readonly snippets: number[];
}

function priceStream(stream: readonly Priced[]): StreamCosts {
  const prompt: number[] = [];
  const cached: number[] = [];
  const anthropic: number[] = [];
  const snippets: number[] = [];
  // Anthropic-style: prefixes written at a breakpoint (message count → expiry), read when the current request starts with one.
  const written: { messages: readonly WireMessage[]; count: number; tokens: number; expires: number }[] = [];
  for (const [index, current] of stream.entries()) {
    prompt.push(current.prompt);
    snippets.push(
      current.messages.reduce(
        (sum, message, at) =>
          sum + (message.content?.startsWith(recalledBlockHeader) === true ? current.messageTokens[at]! : 0),
        0,
      ),
    );
    cached.push(openAiCached(sharedTokens(stream[index - 1], current), current.prompt));
    let read = 0;
    for (const entry of written) {
      if (entry.expires < current.at || entry.count > current.messages.length) continue;
      let same = true;
      for (let m = 0; m < entry.count && same; m += 1) same = sameMessage(entry.messages[m]!, current.messages[m]!);
      if (same && entry.tokens > read) {
        read = entry.tokens;
        entry.expires = current.at + 300_000;
      }
    }
    const breakpointTokens = current.messageTokens
      .slice(0, current.breakpoint)
      .reduce((sum, tokens) => sum + tokens, 0);
    const writeTokens = breakpointTokens >= 1024 && breakpointTokens > read ? breakpointTokens - read : 0;
    if (writeTokens > 0)
      written.push({
        messages: current.messages,
        count: current.breakpoint,
        tokens: breakpointTokens,
        expires: current.at + 300_000,
      });
    anthropic.push(read * 0.1 + writeTokens * 1.25 + (current.prompt - read - writeTokens));
  }
  return { prompt, cached, anthropic, snippets };
}

interface Row {
  readonly exchanges: number;
  readonly fullHistoryTokensAtEnd: number;
  readonly mnemoCachedShare: number;
  /** mnemo's recalled snippets' tokens per request, and its cached share of the prompt tokens that are not snippets. */
  readonly snippetsPerRequest: number;
  readonly mnemoCachedShareBesideSnippets: number;
  readonly fullCachedShare: number;
  /** mnemo / full history cost at each cached price ratio (keys '100', '50', '25', '10'). */
  readonly ratio: Readonly<Record<string, number>>;
  /** Worst running (cumulative) ratio at 10 % from the 10th request on. */
  readonly worstRunningAt10: number;
  readonly uncachedPerRequest: { readonly mnemo: number; readonly full: number };
  readonly anthropicRatio: number;
  /** The summarizer's tokens (prompt + output) of the compactions up to this request. */
  readonly summarizerTokens: number;
  /**
   * mnemo / full history at a 10 % cached price with the summarizer's tokens added to mnemo's cost at the
   * base price, as a user of an LLM summarizer pays them (output priced as input: a lower bound).
   */
  readonly ratioWithSummarizerAt10: number;
}

function rowFor(mnemo: StreamCosts, full: StreamCosts, count: number, summarizerTokens: number): Row {
  const sum = (values: readonly number[]) => values.slice(0, count).reduce((total, value) => total + value, 0);
  const cost = (costs: StreamCosts, ratio: number, upTo = count) =>
    costs.prompt
      .slice(0, upTo)
      .reduce((total, prompt, index) => total + (prompt - costs.cached[index]!) + costs.cached[index]! * ratio, 0);
  let worst = 0;
  for (let upTo = 10; upTo <= count; upTo += 1) worst = Math.max(worst, cost(mnemo, 0.1, upTo) / cost(full, 0.1, upTo));
  return {
    exchanges: count,
    fullHistoryTokensAtEnd: full.prompt[count - 1] ?? 0,
    mnemoCachedShare: sum(mnemo.cached) / sum(mnemo.prompt),
    snippetsPerRequest: sum(mnemo.snippets) / count,
    mnemoCachedShareBesideSnippets: sum(mnemo.cached) / (sum(mnemo.prompt) - sum(mnemo.snippets)),
    fullCachedShare: sum(full.cached) / sum(full.prompt),
    ratio: Object.fromEntries(ratios.map((ratio) => [String(ratio * 100), cost(mnemo, ratio) / cost(full, ratio)])),
    worstRunningAt10: worst,
    uncachedPerRequest: {
      mnemo: (sum(mnemo.prompt) - sum(mnemo.cached)) / count,
      full: (sum(full.prompt) - sum(full.cached)) / count,
    },
    anthropicRatio: sum(mnemo.anthropic) / sum(full.anthropic),
    summarizerTokens,
    ratioWithSummarizerAt10: (cost(mnemo, 0.1) + summarizerTokens) / cost(full, 0.1),
  };
}

function startCacheServe(directory: string, db: string, upstream: string): Promise<ServeProcess> {
  const args = values['serve-args']?.split(' ').filter((argument) => argument !== '') ?? [];
  return startServe({ cli: values.cli, directory, db, env: { MNEMO_LLM_BASE_URL: `${upstream}/v1` }, args });
}

interface ConversationResult {
  readonly name: string;
  readonly rows: readonly Row[];
  readonly requests: number;
  readonly compactions: number;
  /** The cheapest sliding window of raw turns over the whole conversation (no memory), beside mnemo. */
  readonly windowFloor: WindowFloor;
}

async function replay(
  name: string,
  messages: readonly MessageInput[],
  system: string,
  upstream: string,
  directory: string,
  log: (line: string) => void,
): Promise<ConversationResult> {
  const counter = createGptTokenCounter();
  const count = (message: WireMessage) =>
    counter.countMessage({
      role: message.role as 'user',
      content: message.content ?? '',
      ...(message.name === undefined ? {} : { name: message.name }),
    });
  const priced = (list: readonly WireMessage[], breakpoint: number, at: number): Priced => {
    const messageTokens = list.map(count);
    return {
      messages: list,
      messageTokens,
      prompt: counter.requestOverheadTokens + messageTokens.reduce((sum, tokens) => sum + tokens, 0),
      breakpoint,
      at,
    };
  };
  const limit = values['max-exchanges'] === undefined ? Number.POSITIVE_INFINITY : Number(values['max-exchanges']);
  const exchanges = exchangesOf(messages).slice(0, limit);
  const db = join(directory, `${name.replace(/\W+/g, '-')}.db`);
  const serve = await startCacheServe(directory, db, upstream);
  const bot: WireMessage[] = [{ role: 'system', content: system }];
  const mnemoStream: Priced[] = [];
  const fullStream: Priced[] = [];
  const summarizedBy = new Map<number, number>();
  try {
    for (const [index, exchange] of exchanges.entries()) {
      bot.push(...exchange.user.map((message) => ({ role: 'user', content: message.content })));
      fullStream.push(priced([...bot], bot.length - 1, exchange.at));
      await fetch(`${upstream}/script`, { method: 'POST', body: JSON.stringify({ content: exchange.reply }) });
      const response = await fetch(`${serve.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mnemo-conversation': name },
        body: JSON.stringify({ model: 'bench-model', user: name, messages: bot }),
      });
      if (!response.ok) throw new Error(`request ${index + 1} of ${name}: ${response.status} ${await response.text()}`);
      await response.json();
      const stable = Number(response.headers.get('x-mnemo-stable-messages') ?? '0');
      const logged = (await (await fetch(`${upstream}/log`)).json()) as { messages: WireMessage[] }[];
      const prompt = logged.find((entry) => entry.messages.some((message) => message.role === 'user'))?.messages;
      if (prompt === undefined) throw new Error(`request ${index + 1} of ${name}: the upstream saw no prompt`);
      mnemoStream.push(priced(prompt, stable, exchange.at));
      if (process.env.BENCH_CACHE_DEBUG !== undefined) {
        const previous = mnemoStream[mnemoStream.length - 2];
        const current = mnemoStream[mnemoStream.length - 1]!;
        log(
          `#${index + 1} stable ${stable} msgs ${prompt.length} tokens ${current.prompt} shared ${sharedTokens(previous, current)} heads ${prompt
            .map((message) => `${message.role[0]}:${(message.content ?? '').slice(0, 24).replace(/\n/g, ' ')}`)
            .slice(0, 4)
            .join(' | ')}`,
        );
      }
      bot.push({ role: 'assistant', content: exchange.reply });
      if ((index + 1) % 50 === 0) log(`  ${name}: ${index + 1}/${exchanges.length} requests`);
      await waitForJobs(serve.url);
      // The compactions this request's jobs ran count towards it.
      if ((lengths as readonly number[]).includes(index + 1))
        summarizedBy.set(index + 1, (await readSummaries(db)).summarizerTokens);
    }
  } finally {
    await serve.stop();
  }
  const { summarizerTokens, compactions } = await readSummaries(db);
  const mnemo = priceStream(mnemoStream);
  const full = priceStream(fullStream);
  const counts = [...lengths.filter((length) => length < exchanges.length), exchanges.length];
  return {
    name,
    requests: exchanges.length,
    compactions,
    rows: counts.map((length) => rowFor(mnemo, full, length, summarizedBy.get(length) ?? summarizerTokens)),
    windowFloor: windowFloor(fullStream, exchanges.length),
  };
}

/**
 * Waits (at most 30 s) until the serve's background jobs (embedding, extraction, compaction) are done, as
 * they are between the turns of a real chat, where a person takes longer to answer than a job to run.
 */
async function waitForJobs(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const busy = [...text.matchAll(/^mnemo_jobs\{[^}]*status="(pending|running)"[^}]*\} (\d+)/gm)].reduce(
      (sum, match) => sum + Number(match[2]),
      0,
    );
    if (busy === 0) return;
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 50));
  }
}

/** The summarizer's tokens (prompt + output; for the offline summarizer what an LLM call would have cost) and the number of compactions, from the serve's file. */
async function readSummaries(db: string): Promise<{ summarizerTokens: number; compactions: number }> {
  const { default: Database } = await import('better-sqlite3');
  const file = new Database(db, { readonly: true });
  try {
    const row = file
      .prepare('SELECT COUNT(*) AS count, COALESCE(SUM(input_tokens + output_tokens), 0) AS tokens FROM summaries')
      .get() as {
      count: number;
      tokens: number;
    };
    return { summarizerTokens: row.tokens, compactions: row.count };
  } finally {
    file.close();
  }
}

function formatResult(result: ConversationResult): string {
  const pct = (value: number) => `${(value * 100).toFixed(1)} %`;
  const x = (value: number) => value.toFixed(2);
  const lines = [
    `${result.name} (${result.requests} requests, ${result.compactions} compactions)`,
    '| exchanges | full history at the end | mnemo cached | beside its snippets | snippets/request | full cached | mnemo/full at 100 % | 50 % | 25 % | 10 % | worst running at 10 % (from 10th) | uncached/request mnemo | full | Anthropic-style mnemo/full | summarizer tokens | mnemo/full at 10 % with an LLM summarizer |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of result.rows) {
    lines.push(
      `| ${row.exchanges} | ${row.fullHistoryTokensAtEnd.toLocaleString('en-US')} | ${pct(row.mnemoCachedShare)} | ${pct(row.mnemoCachedShareBesideSnippets)} | ${Math.round(row.snippetsPerRequest)} | ${pct(row.fullCachedShare)} | ${x(row.ratio['100']!)} | ${x(row.ratio['50']!)} | ${x(row.ratio['25']!)} | ${x(row.ratio['10']!)} | ${x(row.worstRunningAt10)} | ${Math.round(row.uncachedPerRequest.mnemo)} | ${Math.round(row.uncachedPerRequest.full)} | ${x(row.anthropicRatio)} | ${row.summarizerTokens.toLocaleString('en-US')} | ${x(row.ratioWithSummarizerAt10)} |`,
    );
  }
  const { cheapest, steadiest, mostCached, largestSteady } = result.windowFloor;
  lines.push(
    `The cheapest sliding window of raw turns within ${budget.toLocaleString('en-US')} tokens that reaches the cache's 1,024 (no memory at all; fold marks the best of a grid): ${x(cheapest.ratioAt10)} of full history at 10 % (high ${cheapest.high}, low ${cheapest.low}; worst running ${x(cheapest.worstRunningAt10)}, cached ${pct(cheapest.cachedShare)}); its least worst running ratio ${x(steadiest.worstRunningAt10)} (high ${steadiest.high}, low ${steadiest.low}; ${x(steadiest.ratioAt10)} overall); its largest cached share ${pct(mostCached.cachedShare)} (high ${mostCached.high}, low ${mostCached.low}; ${x(mostCached.ratioAt10)} overall).`,
    largestSteady === undefined
      ? 'No window of any size keeps the running ratio at 10 % at or below 1.0 from the 10th request on.'
      : `The largest window of any size whose running ratio at 10 % stays at or below 1.0 from the 10th request on: high ${largestSteady.high}, low ${largestSteady.low} (${x(largestSteady.ratioAt10)} overall, cached ${pct(largestSteady.cachedShare)}).`,
  );
  return lines.join('\n');
}

/** The context budget `mnemo serve` assembles within by default (`context.maxTokens`). */
const budget = 2000;

/** One pair of a window's fold marks (raw tokens) and what it costs (see {@link windowFloor}). */
interface WindowMarks {
  readonly high: number;
  readonly low: number;
  /** Cost at a 10 % cached price / full history's. */
  readonly ratioAt10: number;
  readonly worstRunningAt10: number;
  /** Share of the window's prompt tokens that are cached. */
  readonly cachedShare: number;
}

/** The best a sliding window of raw turns does under the budget (see {@link windowFloor}). */
interface WindowFloor {
  /** The marks with the least cost at 10 %. */
  readonly cheapest: WindowMarks;
  /** The marks with the least worst running ratio at 10 % from the 10th request on. */
  readonly steadiest: WindowMarks;
  /** The marks with the largest cached share of the prompt tokens. */
  readonly mostCached: WindowMarks;
  /**
   * The largest high mark of any window, the cache's minimum not required, whose running ratio at 10 % stays
   * ≤ 1.0 from the 10th request on (with the cheapest low mark for it); none if no window does.
   */
  readonly largestSteady?: WindowMarks;
}

/**
 * A yardstick for mnemo's cost: the cheapest context that keeps nothing but the newest turns. The bot's own
 * requests are cut to [system] + the raw messages from a window start on; the start stays put (append-only,
 * cached) until the kept messages pass a high mark, then moves forward to the first user message that leaves
 * at most the low mark (a fold with no summary). Every high mark from 1,024 (the cache's minimum) to what
 * the budget allows and every low mark below it, in 32-token steps, priced as mnemo is; the floor is the
 * best of them. A context with memory adds its blocks to this, so mnemo cannot be cheaper than the floor by
 * much. Windows that never reach the cache's minimum (high marks from 64) are searched too, for one answer
 * only: the largest of them that keeps the running ratio ≤ 1.0 (such a window is never cached, so it pays
 * its whole size on every request, and it holds no more than a few turns).
 */
function windowFloor(full: readonly Priced[], upTo: number): WindowFloor {
  const requests = full.slice(0, upTo);
  const fullCosts = priceStream(requests);
  const systemTokens = requests[0]!.messageTokens[0]!;
  const overhead = requests[0]!.prompt - requests[0]!.messageTokens.reduce((sum, tokens) => sum + tokens, 0);
  // The bot's requests grow append-only: request i holds the first messages of the last one, so one table of
  // suffix sums (tokens from message m to the end of request i) serves them all.
  const last = requests[requests.length - 1]!;
  const before = [0];
  for (const tokens of last.messageTokens) before.push(before[before.length - 1]! + tokens);
  const candidates: WindowMarks[] = [];
  for (let high = 64; high <= budget - systemTokens - overhead; high += 32) {
    for (let low = 0; low < high; low += 32) {
      let start = 1;
      let previousStart = 1;
      let previousLength = 0;
      const prompt: number[] = [];
      const cached: number[] = [];
      for (const request of requests) {
        const length = request.messages.length;
        const kept = (from: number) => before[length]! - before[from]!;
        if (kept(start) > high) {
          // The fold: the first user message from which at most the low mark is left (at least the newest turn).
          while (start < length - 1 && (kept(start) > low || last.messages[start]!.role !== 'user')) start += 1;
        }
        // The previous window is a prefix of this one unless the start moved; then only the system prompt is shared.
        const shared = start === previousStart ? systemTokens + before[previousLength]! - before[start]! : systemTokens;
        const tokens = overhead + systemTokens + kept(start);
        prompt.push(tokens);
        cached.push(openAiCached(previousLength === 0 ? 0 : shared, tokens));
        previousStart = start;
        previousLength = length;
      }
      const row = rowFor({ prompt, cached, anthropic: prompt, snippets: prompt.map(() => 0) }, fullCosts, upTo, 0);
      candidates.push({
        high,
        low,
        ratioAt10: row.ratio['10']!,
        worstRunningAt10: row.worstRunningAt10,
        cachedShare: row.mnemoCachedShare,
      });
    }
  }
  const least = (among: readonly WindowMarks[], score: (marks: WindowMarks) => number) =>
    among.reduce((winner, candidate) => (score(candidate) < score(winner) ? candidate : winner));
  const cacheable = candidates.filter((marks) => marks.high >= 1024);
  // ≤ 1.0 up to rounding: a window that is the bot's own requests until its first fold runs at exactly 1.
  const steady = candidates.filter((marks) => marks.worstRunningAt10 <= 1 + 1e-9);
  const largestHigh = Math.max(...steady.map((marks) => marks.high));
  return {
    cheapest: least(cacheable, (marks) => marks.ratioAt10),
    steadiest: least(cacheable, (marks) => marks.worstRunningAt10),
    mostCached: least(cacheable, (marks) => -marks.cachedShare),
    ...(steady.length === 0
      ? {}
      : {
          largestSteady: least(
            steady.filter((marks) => marks.high === largestHigh),
            (marks) => marks.ratioAt10,
          ),
        }),
  };
}

async function main(): Promise<void> {
  const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-bench-cache-'));
  const upstreamChild = fork(fileURLToPath(import.meta.url), ['--child', 'upstream'], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const upstream = await new Promise<string>((resolvePromise) =>
      upstreamChild.once('message', (message) => resolvePromise((message as { url: string }).url)),
    );
    const results: ConversationResult[] = [];
    for (const index of values.conversations
      .split(',')
      .filter((item) => item !== '')
      .map(Number)) {
      const conversation = await loadLocomoConversation(values.locomo, index);
      if (conversation === undefined) {
        log(`LoCoMo skipped: ${values.locomo} not found`);
        break;
      }
      log(`LoCoMo conv ${index} (${conversation.sampleId}): ${conversation.messages.length} turns`);
      const system = `You are ${conversation.assistantName}, chatting with your friend ${conversation.userName}. Reply as ${conversation.assistantName} would.`;
      results.push(await replay(`locomo-conv-${index}`, conversation.messages, system, upstream, directory, log));
    }
    const mesh = await loadJsonlConversation(values.mesh);
    log(`mesh-radio example: ${mesh.length} messages`);
    results.push(
      await replay(
        'mesh-radio-node-7',
        mesh,
        'You are a mesh-radio bot. Reply in 150 characters or less.',
        upstream,
        directory,
        log,
      ),
    );
    for (const result of results) log(`\n${formatResult(result)}`);
    if (values.json) process.stdout.write(`${JSON.stringify({ results }, null, 2)}\n`);
  } finally {
    if (upstreamChild.connected) upstreamChild.disconnect();
    await rm(directory, { recursive: true, force: true });
  }
}

if (values.child === 'upstream') await runUpstream();
else await main();
