import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory, type MemoryOptions, type Message, type Store } from '@mnemo/core';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer, type ScriptedReply } from '@mnemo/models/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import OpenAI, { APIError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readStreamUntilFailure } from '../../test/read-stream-until-failure.js';
import { createServerApp, startServer, type RunningServer, type ServerAppOptions } from '../index.js';
import { mountProxyRoutes } from './mount-proxy-routes.js';

interface ProxyFixture {
  readonly upstream: ScriptedOpenAiServer;
  readonly memory: Memory;
  readonly store: Store;
  readonly url: string;
  /** An official OpenAI client pointed at the proxy. */
  client(options?: { apiKey?: string; headers?: Record<string, string> }): OpenAI;
  /** Stored messages of a conversation (of the default tenant; its user is the conversation's own, as the proxy names it), as role: content lines. */
  stored(conversationId: string, tenantId?: string, userId?: string): Promise<string[]>;
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface FixtureOptions {
  readonly replies: readonly ScriptedReply[];
  readonly upstreamKey?: string;
  /** The key mnemo sends upstream; default the upstream's key. `null`: none configured. */
  readonly proxyKey?: string | null;
  /** The server's `llm.passClientKey`. */
  readonly passClientKey?: boolean;
  readonly context?: MemoryOptions['context'];
  readonly auth?: ServerAppOptions['auth'];
  /** Wraps the app's fetch, e.g. to observe the client hanging up. */
  readonly wrapFetch?: (
    fetch: (request: Request) => Response | Promise<Response>,
  ) => (request: Request) => Response | Promise<Response>;
}

async function startProxy(options: FixtureOptions): Promise<ProxyFixture> {
  const upstreamKey = options.upstreamKey ?? 'sk-upstream';
  const upstream = await startScriptedOpenAiServer({ replies: options.replies, apiKey: upstreamKey });
  cleanups.push(() => upstream.close());
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-proxy-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const store = createSqliteStore({ path: join(directory, 'mnemo.db') });
  const memory = createMemory({
    store,
    compaction: false,
    ...(options.context === undefined ? {} : { context: options.context }),
  });
  const proxyKey = options.proxyKey === undefined ? upstreamKey : options.proxyKey;
  const app = createServerApp({
    memory,
    logger: pino({ level: 'silent' }),
    limits: { rateLimit: false },
    llm: {
      baseUrl: upstream.baseUrl,
      ...(proxyKey === null ? {} : { apiKey: proxyKey }),
      ...(options.passClientKey === undefined ? {} : { passClientKey: options.passClientKey }),
    },
    routes: [mountProxyRoutes],
    ...(options.auth === undefined ? {} : { auth: options.auth }),
  });
  const fetch = options.wrapFetch?.(app.fetch) ?? app.fetch;
  // A fetch aborted mid-response leaves undici with a fresh connection that never sends a request, which
  // graceful shutdown waits for until its timeout: keep that wait short.
  const server: RunningServer = await startServer({ app: { fetch }, port: 0, shutdownTimeoutMs: 100 });
  cleanups.push(async () => {
    await server.close();
    await memory.close();
  });
  return {
    upstream,
    memory,
    store,
    url: server.url,
    client: ({ apiKey = 'sk-client', headers = {} } = {}) =>
      new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0, defaultHeaders: headers }),
    stored: async (conversationId, tenantId = 'default', userId = conversationId) =>
      (await store.listMessages({ tenantId, userId, conversationId })).map(
        (message: Message) => `${message.role}: ${message.content}`,
      ),
  };
}

const system: ChatCompletionMessageParam = {
  role: 'system',
  content: 'You are a mesh-radio bot. Reply in 150 characters or less.',
};
const questions = ['Is relay LARCH-RIDGE up?', 'What is the SNR to the gateway?', 'Should I move the antenna?'];
const answers = [
  'LARCH-RIDGE was heard 2 min ago, 3 hops.',
  'SNR is -4 dB: workable.',
  'Raise it 2 m; the ridge blocks the south path.',
];

function sentMessages(upstream: ScriptedOpenAiServer, index: number): { role: string; content: string | null }[] {
  return (
    upstream.requests.filter((request) => request.method === 'POST')[index]!.body as {
      messages: { role: string; content: string | null }[];
    }
  ).messages;
}

describe('mountProxyRoutes: POST /v1/chat/completions', () => {
  it('stores each message once when the client re-sends the whole history every turn', async () => {
    const proxy = await startProxy({ replies: answers.map((content) => ({ content })) });
    const client = proxy.client();
    const history: ChatCompletionMessageParam[] = [system];

    for (const question of questions) {
      history.push({ role: 'user', content: question });
      const completion = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: history,
        user: 'node-7',
      });
      history.push({ role: 'assistant', content: completion.choices[0]!.message.content });
    }

    expect(await proxy.stored('node-7')).toEqual(
      questions.flatMap((question, index) => [`user: ${question}`, `assistant: ${answers[index]}`]),
    );
    // The system prompt is used, never stored; the model saw the conversation in order, each turn once.
    expect(sentMessages(proxy.upstream, 2).map((message) => message.content)).toEqual([
      system.content,
      questions[0],
      answers[0],
      questions[1],
      answers[1],
      questions[2],
    ]);
    expect((proxy.upstream.requests[0]!.body as { model: string; user: string }).model).toBe('gpt-4o-mini');
  });

  it('stores the same conversation, and sends the model the history, when the client sends only the new turn', async () => {
    const proxy = await startProxy({ replies: answers.map((content) => ({ content })) });
    const client = proxy.client({ headers: { 'X-Mnemo-Conversation': 'node-9' } });

    for (const question of questions) {
      await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [system, { role: 'user', content: question }],
      });
    }

    expect(await proxy.stored('node-9')).toEqual(
      questions.flatMap((question, index) => [`user: ${question}`, `assistant: ${answers[index]}`]),
    );
    expect(sentMessages(proxy.upstream, 2).map((message) => message.content)).toEqual([
      system.content,
      questions[0],
      answers[0],
      questions[1],
      answers[1],
      questions[2],
    ]);
  });

  it('does not store a regenerated or retried history twice', async () => {
    const proxy = await startProxy({
      replies: [
        { content: answers[0]! },
        { content: answers[1]! },
        { status: 500 },
        { content: 'second try' },
        { content: 'again' },
      ],
    });
    const client = proxy.client();
    const first = { role: 'user', content: questions[0]! } as const;
    const second = { role: 'user', content: questions[1]! } as const;
    await client.chat.completions.create({ model: 'm', messages: [first], user: 'node-7' });
    await client.chat.completions.create({
      model: 'm',
      messages: [first, { role: 'assistant', content: answers[0]! }, second],
      user: 'node-7',
    });

    // The third question fails upstream, is retried as is, then the client regenerates the last answer.
    const third = { role: 'user', content: questions[2]! } as const;
    const full = [
      first,
      { role: 'assistant', content: answers[0]! },
      second,
      { role: 'assistant', content: answers[1]! },
      third,
    ] as const;
    await expect(
      client.chat.completions.create({ model: 'm', messages: [...full], user: 'node-7' }),
    ).rejects.toBeInstanceOf(APIError);
    await client.chat.completions.create({ model: 'm', messages: [...full], user: 'node-7' });
    await client.chat.completions.create({
      model: 'm',
      messages: [first, { role: 'assistant', content: answers[0]! }, second],
      user: 'node-7',
    });

    expect(await proxy.stored('node-7')).toEqual([
      `user: ${questions[0]}`,
      `assistant: ${answers[0]}`,
      `user: ${questions[1]}`,
      `assistant: ${answers[1]}`,
      `user: ${questions[2]}`,
      'assistant: second try',
      'assistant: again',
    ]);
  });

  it('recognizes a regenerate of the newest turn: stores no turn again, builds as of that turn, keeps both replies', async () => {
    const proxy = await startProxy({
      replies: [
        { content: 'first reply' },
        { content: 'regenerated reply' },
        { content: 'next reply' },
        { content: 'single 1' },
        { content: 'single 2' },
      ],
    });
    const client = proxy.client();
    const question = { role: 'user', content: questions[0]! } as const;
    await client.chat.completions.create({ model: 'm', messages: [system, question], user: 'node-7' });
    // The regenerate button: exactly the same request again.
    await client.chat.completions.create({ model: 'm', messages: [system, question], user: 'node-7' });
    await client.chat.completions.create({
      model: 'm',
      messages: [
        system,
        question,
        { role: 'assistant', content: 'regenerated reply' },
        { role: 'user', content: questions[1]! },
      ],
      user: 'node-7',
    });

    const stored = await proxy.store.listMessages({ tenantId: 'default', userId: 'node-7', conversationId: 'node-7' });
    expect(stored.map((message) => `${message.role}: ${message.content}`)).toEqual([
      `user: ${questions[0]}`,
      'assistant: first reply',
      'assistant: regenerated reply',
      `user: ${questions[1]}`,
      'assistant: next reply',
    ]);
    expect(stored[2]!.metadata).toMatchObject({ mnemo: { supersedes: [stored[1]!.id] } });
    // The regenerate was built as of the user turn (the old reply left out), and so is every later context.
    expect(sentMessages(proxy.upstream, 1).map((message) => message.content)).toEqual([system.content, questions[0]]);
    expect(sentMessages(proxy.upstream, 2).map((message) => message.content)).toEqual([
      system.content,
      questions[0],
      'regenerated reply',
      questions[1],
    ]);

    // A client that sends only the new turn regenerates (or retries after a lost reply) the same way.
    await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'ping?' }],
      user: 'node-9',
    });
    await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'ping?' }],
      user: 'node-9',
    });
    expect(await proxy.stored('node-9')).toEqual(['user: ping?', 'assistant: single 1', 'assistant: single 2']);
  });

  it('never sends more than the conversation itself while it fits the budget: savings stay at or above zero', async () => {
    const turns = [
      'My name is Maren and I live in Tromso.',
      'My callsign is LARCH-RIDGE and I like fishing.',
      'My sister Ingrid visits on Fridays.',
      'The relay battery is at 45 percent.',
      'I prefer replies under 150 characters.',
      'What is the weather tomorrow?',
      'Is the gateway SNR fine?',
      'My favourite food is fish soup.',
      'Remind me about the battery.',
      'What did I say my name was?',
    ];
    const proxy = await startProxy({
      replies: turns.flatMap(() => [{ content: 'Noted.' }, { content: 'Noted.' }]),
      context: { policy: 'hybrid' },
    });
    // The default budget (the whole conversation fits), and one it outgrows by the fourth turn.
    for (const [user, budget] of [
      ['node-11', undefined],
      ['node-12', 120],
    ] as const) {
      const savings: number[] = [];
      const history: ChatCompletionMessageParam[] = [system];
      for (const content of turns) {
        history.push({ role: 'user', content });
        const headers: Record<string, string> = budget === undefined ? {} : { 'X-Mnemo-Max-Tokens': String(budget) };
        const { response } = await proxy
          .client({ headers })
          .chat.completions.create({ model: 'm', messages: [...history], user })
          .withResponse();
        history.push({ role: 'assistant', content: 'Noted.' });
        savings.push(Number(response.headers.get('x-mnemo-tokens-saved')));
        // Facts are extracted in the background between turns.
        await proxy.memory.runPendingJobs();
      }
      expect((await proxy.memory.facts.list({ userId: user })).length).toBeGreaterThan(2);
      expect(
        savings.every((saved) => saved >= 0),
        `${user}: ${savings.join(' ')}`,
      ).toBe(true);
      if (budget !== undefined) expect(savings.at(-1), savings.join(' ')).toBeGreaterThan(0);
    }
  });

  it('streams the reply through unchanged and stores it', async () => {
    const proxy = await startProxy({ replies: [{ content: 'Rain after 14:00, 6 °C at the ridge.' }] });

    const { data: stream, response } = await proxy
      .client()
      .chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'Weather tomorrow?' }],
        user: 'node-7',
        stream: true,
      })
      .withResponse();
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? '');

    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(Number(response.headers.get('x-mnemo-tokens-sent'))).toBeGreaterThan(0);
    expect(pieces.filter((piece) => piece !== '').length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('Rain after 14:00, 6 °C at the ridge.');
    await vi.waitFor(async () =>
      expect(await proxy.stored('node-7')).toEqual([
        'user: Weather tomorrow?',
        'assistant: Rain after 14:00, 6 °C at the ridge.',
      ]),
    );
    expect((proxy.upstream.requests[0]!.body as { stream: boolean }).stream).toBe(true);
  });

  it('stores the whole streamed reply when the client hangs up mid-stream', async () => {
    let resumeUpstream: () => void = () => undefined;
    let clientGone: () => void = () => undefined;
    const hungUp = new Promise<void>((resolve) => (clientGone = resolve));
    const proxy = await startProxy({
      replies: [
        {
          content: 'one two three four',
          pause: { afterChunks: 1, until: new Promise<void>((resolve) => (resumeUpstream = resolve)) },
        },
      ],
      wrapFetch: (fetch) => (request) => {
        request.signal.addEventListener('abort', () => clientGone());
        return fetch(request);
      },
    });
    const abort = new AbortController();

    const stream = await proxy
      .client()
      .chat.completions.create(
        { model: 'm', messages: [{ role: 'user', content: 'Count to four' }], user: 'node-7', stream: true },
        { signal: abort.signal },
      );
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content === 'one ') break;
    }
    abort.abort();
    await hungUp;
    resumeUpstream();

    await vi.waitFor(async () =>
      expect(await proxy.stored('node-7')).toEqual(['user: Count to four', 'assistant: one two three four']),
    );
  });

  it('relays what arrived and then an error event when the upstream breaks off mid-stream, and stores the partial reply marked incomplete', async () => {
    const proxy = await startProxy({ replies: [{ content: 'one two three', breakAfterChunks: 2 }] });

    const stream = await proxy.client().chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Count' }],
      user: 'node-7',
      stream: true,
    });
    const { text, failure } = await readStreamUntilFailure(stream);

    expect(text).toBe('one two ');
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).message).toContain('the upstream stream broke off');
    await vi.waitFor(async () => expect(await proxy.stored('node-7')).toEqual(['user: Count', 'assistant: one two ']));
    const [, reply] = await proxy.store.listMessages({
      tenantId: 'default',
      userId: 'node-7',
      conversationId: 'node-7',
    });
    expect(reply?.metadata).toEqual({ proxy: { model: 'm', incomplete: true } });
  });

  it('stores tool calls as the assistant message and recognizes them when the client sends them back', async () => {
    const toolCalls = [{ id: 'call_1', name: 'get_weather', arguments: '{"place":"LARCH-RIDGE"}' }];
    const proxy = await startProxy({
      replies: [
        { content: '', toolCalls },
        { content: '', toolCalls: [{ ...toolCalls[0]!, id: 'call_2' }] },
        { content: 'Rain after 14:00.' },
      ],
    });
    const client = proxy.client();
    const question: ChatCompletionMessageParam = { role: 'user', content: 'Weather at the ridge?' };

    const first = await client.chat.completions.create({ model: 'm', messages: [question], user: 'node-7' });
    const call = first.choices[0]!.message;
    // The same for a streamed tool call, then the client answers both calls, re-sending the whole history.
    const streamed = await client.chat.completions.create({
      model: 'm',
      messages: [question, call, { role: 'tool', tool_call_id: 'call_1', content: 'rain' }],
      user: 'node-7',
      stream: true,
    });
    for await (const chunk of streamed) void chunk;
    await vi.waitFor(async () => expect(await proxy.stored('node-7')).toHaveLength(4));
    const secondCall: ChatCompletionMessageParam = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"place":"LARCH-RIDGE"}' } },
      ],
    };
    await client.chat.completions.create({
      model: 'm',
      messages: [
        question,
        call,
        { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
        secondCall,
        { role: 'tool', tool_call_id: 'call_2', content: 'rain, 6 °C' },
      ],
      user: 'node-7',
    });

    const stored = await proxy.store.listMessages({ tenantId: 'default', userId: 'node-7', conversationId: 'node-7' });
    expect(
      stored.map((message) => [
        message.role,
        message.content,
        message.toolCalls?.[0]?.id ?? message.toolCallId ?? null,
      ]),
    ).toEqual([
      ['user', 'Weather at the ridge?', null],
      ['assistant', '', 'call_1'],
      ['tool', 'rain', 'call_1'],
      ['assistant', '', 'call_2'],
      ['tool', 'rain, 6 °C', 'call_2'],
      ['assistant', 'Rain after 14:00.', null],
    ]);
    expect(stored[3]!.toolCalls).toEqual([
      { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"place":"LARCH-RIDGE"}' } },
    ]);
  });

  it('relays upstream errors with their status and body, and stores no reply', async () => {
    const proxy = await startProxy({
      replies: [
        { status: 500, body: { error: { message: 'upstream exploded', type: 'server_error' } } },
        { status: 429, body: { error: { message: 'slow down', type: 'rate_limit' } }, headers: { 'retry-after': '7' } },
      ],
    });
    const request = () =>
      fetch(`${proxy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mnemo-conversation': 'node-7' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] }),
      });

    const failed = await request();
    const limited = await request();

    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: { message: 'upstream exploded', type: 'server_error' } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await limited.json()).toEqual({ error: { message: 'slow down', type: 'rate_limit' } });
    expect(await proxy.stored('node-7')).toEqual(['user: hello']);
  });

  it('reports consistent usage headers and honours X-Mnemo-Policy and X-Mnemo-Max-Tokens', async () => {
    const proxy = await startProxy({
      replies: [...answers.map((content) => ({ content })), { content: 'window' }, { content: 'budget' }],
      context: { windowTurns: 1 },
    });
    const client = proxy.client({ headers: { 'X-Mnemo-Conversation': 'node-7' } });
    for (const question of questions)
      await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: question }] });

    const { response: windowed } = await proxy
      .client({ headers: { 'X-Mnemo-Conversation': 'node-7', 'X-Mnemo-Policy': 'window' } })
      .chat.completions.create({ model: 'm', messages: [system, { role: 'user', content: 'And now?' }] })
      .withResponse();
    const { response: budgeted } = await proxy
      .client({ headers: { 'X-Mnemo-Conversation': 'node-7', 'X-Mnemo-Max-Tokens': '60' } })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Summarize.' }] })
      .withResponse();

    expect(sentMessages(proxy.upstream, 3).map((message) => message.content)).toEqual([system.content, 'And now?']);
    expect(windowed.headers.get('x-mnemo-policy')).toBe('window');
    for (const response of [windowed, budgeted]) {
      const sent = Number(response.headers.get('x-mnemo-tokens-sent'));
      const full = Number(response.headers.get('x-mnemo-tokens-full'));
      expect(sent).toBeGreaterThan(0);
      expect(sent).toBeLessThanOrEqual(full);
      expect(Number(response.headers.get('x-mnemo-tokens-saved'))).toBe(full - sent);
    }
    expect(Number(windowed.headers.get('x-mnemo-tokens-saved'))).toBeGreaterThan(0);
    expect(Number(budgeted.headers.get('x-mnemo-tokens-sent'))).toBeLessThanOrEqual(60);
  });

  it('answers 400 invalid_input without calling the upstream when no conversation is named, or a header is bad', async () => {
    const proxy = await startProxy({ replies: [] });
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`${proxy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const request = { model: 'm', messages: [{ role: 'user', content: 'hello' }] };

    const missing = await post({}, request);
    const badPolicy = await post({ 'x-mnemo-conversation': 'c', 'x-mnemo-policy': 'everything' }, request);
    const badBudget = await post({ 'x-mnemo-conversation': 'c', 'x-mnemo-max-tokens': '12k' }, request);
    const image = await post(
      { 'x-mnemo-conversation': 'c' },
      { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] },
    );

    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      error: { code: 'invalid_input', message: expect.stringContaining('X-Mnemo-Conversation') as unknown },
    });
    for (const response of [badPolicy, badBudget, image]) {
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_input');
    }
    expect(proxy.upstream.requests).toEqual([]);
  });

  it("sends the configured upstream key, never the client's Authorization, unless pass-through is enabled", async () => {
    const configured = await startProxy({ replies: [{ content: 'ok' }], upstreamKey: 'sk-upstream' });
    const unset = await startProxy({ replies: [{ content: 'ok' }], upstreamKey: 'sk-client-own', proxyKey: null });
    const passthrough = await startProxy({
      replies: [{ content: 'ok' }],
      upstreamKey: 'sk-client-own',
      proxyKey: null,
      passClientKey: true,
    });
    const keyed = await startProxy({
      replies: [{ content: 'ok' }],
      upstreamKey: 'sk-client-own',
      proxyKey: null,
      passClientKey: true,
      auth: { keys: [{ key: 'mnemo-key-1', tenantId: 't1' }] },
    });
    const ask = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }], user: 'u' };

    await configured.client({ apiKey: 'sk-something-else' }).chat.completions.create(ask);
    await expect(unset.client({ apiKey: 'sk-client-own' }).chat.completions.create(ask)).rejects.toMatchObject({
      status: 401,
    });
    await passthrough.client({ apiKey: 'sk-client-own' }).chat.completions.create(ask);
    // Behind mnemo's own keys, Authorization is a mnemo key: only the explicit header passes the provider key.
    await expect(keyed.client({ apiKey: 'mnemo-key-1' }).chat.completions.create(ask)).rejects.toMatchObject({
      status: 401,
    });
    await keyed
      .client({ apiKey: 'mnemo-key-1', headers: { 'X-Mnemo-Upstream-Authorization': 'Bearer sk-client-own' } })
      .chat.completions.create(ask);

    expect(configured.upstream.requests[0]!.headers.authorization).toBe('Bearer sk-upstream');
    expect(unset.upstream.requests[0]!.headers.authorization).toBeUndefined();
    expect(passthrough.upstream.requests[0]!.headers.authorization).toBe('Bearer sk-client-own');
    expect(keyed.upstream.requests.map((request) => request.headers.authorization)).toEqual([
      undefined,
      'Bearer sk-client-own',
    ]);
    expect(JSON.stringify(keyed.upstream.requests)).not.toContain('mnemo-key-1');
  });

  it('keeps the conversations of two tenants apart behind API keys', async () => {
    const proxy = await startProxy({
      replies: [{ content: 'for a' }, { content: 'for b' }],
      auth: {
        keys: [
          { key: 'key-a', tenantId: 'tenant-a' },
          { key: 'key-b', tenantId: 'tenant-b' },
        ],
      },
    });

    await proxy
      .client({ apiKey: 'key-a' })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'secret of a' }], user: 'node-7' });
    await proxy
      .client({ apiKey: 'key-b' })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'question of b' }], user: 'node-7' });

    expect(await proxy.stored('node-7', 'tenant-a')).toEqual(['user: secret of a', 'assistant: for a']);
    expect(await proxy.stored('node-7', 'tenant-b')).toEqual(['user: question of b', 'assistant: for b']);
    expect(sentMessages(proxy.upstream, 1).map((message) => message.content)).toEqual(['question of b']);
    await expect(
      proxy.client({ apiKey: 'key-c' }).chat.completions.create({ model: 'm', messages: [], user: 'node-7' }),
    ).rejects.toMatchObject({ status: 401 });
  });
});

describe('mountProxyRoutes: GET /v1/models', () => {
  it("relays the upstream's model list", async () => {
    const proxy = await startProxy({ replies: [] });

    const models = await proxy.client().models.list();

    expect(models.data.map((model) => model.id)).toEqual(['scripted-model']);
  });
});
