import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { createMemory, type Message, type Store } from '@mnemo/core';
import { startScriptedOpenAiServer, type ScriptedReply } from '@mnemo/models/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import OpenAI, { APIError } from 'openai';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { UpstreamLlmConfig } from '../app/server-deps.js';
import { readStreamUntilFailure } from '../../test/read-stream-until-failure.js';
import { createServerApp, startServer } from '../index.js';
import { errors as undiciErrors } from 'undici';
import { mountProxyRoutes } from './mount-proxy-routes.js';
import { toUpstreamError, UpstreamTimeoutError } from './upstream.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface FaultFixture {
  readonly url: string;
  readonly store: Store;
  readonly client: OpenAI;
  /** JSON log lines the server wrote at warn and above. */
  readonly logs: Record<string, unknown>[];
  /** The conversation `node-7` as role: content lines. */
  stored(): Promise<string[]>;
  storedMessages(): Promise<readonly Message[]>;
  /** POSTs a chat-completions body to the proxy with plain fetch. */
  post(body: unknown): Promise<Response>;
}

/** The proxy (real SQLite file, real HTTP on loopback) in front of `upstreamUrl`, with the given timeouts. */
async function startProxy(
  upstreamUrl: string,
  timeouts: Pick<UpstreamLlmConfig, 'connectTimeoutMs' | 'firstByteTimeoutMs' | 'idleTimeoutMs'>,
): Promise<FaultFixture> {
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-proxy-faults-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const store = createSqliteStore({ path: join(directory, 'mnemo.db') });
  const memory = createMemory({ store, compaction: false });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const app = createServerApp({
    memory,
    logger: pino({ level: 'warn' }, sink),
    limits: { rateLimit: false },
    llm: { baseUrl: upstreamUrl, apiKey: 'sk-upstream', ...timeouts },
    routes: [mountProxyRoutes],
  });
  const server = await startServer({ app, port: 0, shutdownTimeoutMs: 100 });
  cleanups.push(async () => {
    await server.close();
    await memory.close();
  });
  const scope = { tenantId: 'default', userId: 'node-7', conversationId: 'node-7' };
  return {
    url: server.url,
    store,
    logs,
    client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-client', maxRetries: 0 }),
    stored: async () => (await store.listMessages(scope)).map((message) => `${message.role}: ${message.content}`),
    storedMessages: () => store.listMessages(scope),
    post: (body) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
  };
}

async function startScripted(replies: readonly ScriptedReply[]): Promise<string> {
  const upstream = await startScriptedOpenAiServer({ replies, apiKey: 'sk-upstream' });
  cleanups.push(() => upstream.close());
  return upstream.baseUrl;
}

/** An upstream on loopback that answers every request with `handle` (for faults the scripted server has no mode for). */
async function startRawUpstream(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => handle(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** A stall that ends when the test does, so no upstream is left waiting. */
function stallUntilCleanup(): Promise<void> {
  return new Promise<void>((resolve) => cleanups.push(async () => resolve()));
}

const ask = { model: 'm', messages: [{ role: 'user' as const, content: 'Count to three' }], user: 'node-7' };

describe('proxy upstream timeouts', () => {
  it('answers 504 upstream_timeout when the upstream sends no headers within the first-byte timeout, and a retry stores the turn once', async () => {
    const upstream = await startScripted([{ delayMs: 60_000 }, { content: 'one two three' }]);
    const proxy = await startProxy(upstream, { firstByteTimeoutMs: 300 });

    const response = await proxy.post(ask);

    expect(response.status).toBe(504);
    const body = (await response.json()) as {
      error: { code: string; message: string; details: Record<string, unknown> };
    };
    expect(body.error.code).toBe('upstream_timeout');
    expect(body.error.message).toContain('took longer than 300 ms to start its answer');
    expect(body.error.details).toMatchObject({ timeout: 'first_byte', timeoutMs: 300 });
    expect(await proxy.stored()).toEqual(['user: Count to three']);

    const retry = await proxy.client.chat.completions.create(ask);
    expect(retry.choices[0]?.message.content).toBe('one two three');
    expect(await proxy.stored()).toEqual(['user: Count to three', 'assistant: one two three']);
  });

  it('answers 504 when a non-streamed body stalls past the idle timeout', async () => {
    const upstream = await startRawUpstream((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      response.write('{"id":"chatcmpl-1","choices":[');
    });
    const proxy = await startProxy(upstream, { idleTimeoutMs: 300 });

    const response = await proxy.post(ask);

    expect(response.status).toBe(504);
    const body = (await response.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error).toMatchObject({ code: 'upstream_timeout', details: { timeout: 'idle', timeoutMs: 300 } });
    expect(await proxy.stored()).toEqual(['user: Count to three']);
  });

  it('ends a stream that stalls past the idle timeout with an upstream_timeout event, stores the partial reply marked incomplete, and a retry stores the turn once', async () => {
    const upstream = await startScripted([
      { content: 'one two three', pause: { afterChunks: 2, until: stallUntilCleanup() } },
      { content: 'one two three' },
    ]);
    const proxy = await startProxy(upstream, { idleTimeoutMs: 300 });

    const { text, failure } = await readStreamUntilFailure(
      await proxy.client.chat.completions.create({ ...ask, stream: true }),
    );

    expect(text).toBe('one two ');
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).message).toContain('took longer than 300 ms between two pieces of its answer');
    expect((failure as APIError).code).toBe('upstream_timeout');
    await vi.waitFor(async () => expect(await proxy.stored()).toEqual(['user: Count to three', 'assistant: one two ']));
    expect((await proxy.storedMessages())[1]?.metadata).toEqual({ proxy: { model: 'm', incomplete: true } });

    const { failure: none } = await readStreamUntilFailure(
      await proxy.client.chat.completions.create({ ...ask, stream: true }),
    );
    expect(none).toBeUndefined();
    await vi.waitFor(async () =>
      expect((await proxy.stored()).filter((line) => line.startsWith('user: '))).toEqual(['user: Count to three']),
    );
    await vi.waitFor(async () =>
      expect(await proxy.stored()).toEqual(['user: Count to three', 'assistant: one two ', 'assistant: one two three']),
    );
  });
});

describe('proxy upstream timeouts: GET /v1/models', () => {
  it('answers 504 upstream_timeout when the upstream does not answer the model list in time', async () => {
    const upstream = await startRawUpstream(() => undefined);
    const proxy = await startProxy(upstream, { firstByteTimeoutMs: 300 });

    const response = await fetch(`${proxy.url}/v1/models`);

    expect(response.status).toBe(504);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('upstream_timeout');
  });
});

describe('proxy upstream failures', () => {
  it('answers 502 model_failed when the upstream cuts a non-streamed reply', async () => {
    const upstream = await startRawUpstream((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      response.write('{"id":"chatcmpl-1","choices":[', () => response.destroy());
    });
    const proxy = await startProxy(upstream, {});

    const response = await proxy.post(ask);

    expect(response.status).toBe(502);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('model_failed');
    expect(body.error.message).toContain('reading the answer of the upstream');
    expect(await proxy.stored()).toEqual(['user: Count to three']);
  });

  it('answers 502 model_failed, storing no reply, when the upstream answers 200 with a malformed or an empty body', async () => {
    const upstream = await startScripted([
      { raw: 'not json' },
      { raw: '' },
      { status: 200, body: { choices: [] } },
      // An event stream to a request that did not ask for one (its client's SDK would choke on it).
      {
        raw: 'data: {"choices":[{"index":0,"delta":{"content":"fine"}}]}\n\ndata: [DONE]\n\n',
        contentType: 'text/event-stream',
      },
      { content: 'fine' },
    ]);
    const proxy = await startProxy(upstream, {});

    for (const expected of [
      'a body that is not a chat completion',
      'an empty body',
      'a body that is not a chat completion',
      'a body that is not a chat completion',
    ]) {
      const response = await proxy.post(ask);
      expect(response.status).toBe(502);
      expect(response.headers.get('x-mnemo-tokens-sent')).not.toBeNull();
      const body = (await response.json()) as {
        error: { code: string; message: string; details: Record<string, unknown> };
      };
      expect(body.error.code).toBe('model_failed');
      expect(body.error.message).toContain(expected);
      expect(body.error.details).toMatchObject({ upstreamStatus: 200 });
    }
    expect(await proxy.stored()).toEqual(['user: Count to three']);
    const recorded = proxy.logs.filter(
      (line) => line.msg === 'proxy: the upstream answered with no chat completion; nothing stored',
    );
    expect(recorded.map((line) => line.bodyStart)).toEqual([
      'not json',
      '',
      '{"choices":[]}',
      'data: {"choices":[{"index":0,"delta":{"content":"fine"}}]}\n\ndata: [DONE]\n\n',
    ]);
    expect(recorded.every((line) => line.status === 200 && line.conversationId === 'node-7')).toBe(true);

    const retry = await proxy.client.chat.completions.create(ask);
    expect(retry.choices[0]?.message.content).toBe('fine');
    expect(await proxy.stored()).toEqual(['user: Count to three', 'assistant: fine']);
  });

  it('stores the user turn once when a client retries after a stream cut mid-way or a broken event stream', async () => {
    const upstream = await startScripted([
      { content: 'one two three', breakAfterChunks: 1 },
      { raw: 'data: {"choices":[{"delta":{"content"\n\ndata: garbage\n\n', contentType: 'text/event-stream' },
      { content: 'one two three' },
    ]);
    const proxy = await startProxy(upstream, {});

    const cut = await readStreamUntilFailure(await proxy.client.chat.completions.create({ ...ask, stream: true }));
    expect(cut.failure).toBeInstanceOf(APIError);
    await vi.waitFor(async () => expect(await proxy.stored()).toEqual(['user: Count to three', 'assistant: one ']));
    await readStreamUntilFailure(await proxy.client.chat.completions.create({ ...ask, stream: true }));
    const whole = await readStreamUntilFailure(await proxy.client.chat.completions.create({ ...ask, stream: true }));

    expect(whole).toEqual({ text: 'one two three', failure: undefined });
    await vi.waitFor(async () =>
      expect(await proxy.stored()).toEqual(['user: Count to three', 'assistant: one ', 'assistant: one two three']),
    );
  });

  it('ends a stream the upstream closed without a finish reason or [DONE] with an upstream_stream_broken event, and stores the partial reply marked', async () => {
    const upstream = await startScripted([
      {
        raw: 'data: {"choices":[{"index":0,"delta":{"content":"one "}}]}\n\ndata: garbage\n\n',
        contentType: 'text/event-stream',
      },
    ]);
    const proxy = await startProxy(upstream, {});

    const response = await proxy.post({ ...ask, stream: true });
    const text = await response.text();

    expect(response.status).toBe(200);
    expect(text.startsWith('data: {"choices"')).toBe(true);
    expect(text).toMatch(
      /data: \{"error":\{"message":"mnemo: the upstream stream broke off \(the upstream ended its event stream without a finish reason or \[DONE\]\); the reply is incomplete","type":"upstream_error","code":"upstream_stream_broken"\}\}\n\n$/,
    );
    await vi.waitFor(async () => expect(await proxy.stored()).toEqual(['user: Count to three', 'assistant: one ']));
    expect((await proxy.storedMessages())[1]?.metadata).toEqual({ proxy: { incomplete: true } });
  });

  it('stores the user turn once when a client sending only its new turn retries after a reply it never got', async () => {
    const upstream = await startScripted([
      { raw: 'data: garbage\n\n', contentType: 'text/event-stream' },
      { content: 'three' },
    ]);
    const proxy = await startProxy(upstream, {});

    await readStreamUntilFailure(await proxy.client.chat.completions.create({ ...ask, stream: true }));
    await vi.waitFor(async () => expect(await proxy.stored()).toEqual(['user: Count to three']));
    const retry = await proxy.client.chat.completions.create(ask);

    expect(retry.choices[0]?.message.content).toBe('three');
    expect(await proxy.stored()).toEqual(['user: Count to three', 'assistant: three']);
  });
});

describe('toUpstreamError', () => {
  const llm = { baseUrl: 'http://127.0.0.1:1/v1', connectTimeoutMs: 1_500 };

  it('names the connect phase and its configured timeout when undici gives up connecting', () => {
    // A connect that stalls cannot be provoked on loopback (the kernel completes the handshake), so the error is undici's own, wrapped as its fetch wraps it.
    const error = toUpstreamError(
      new TypeError('fetch failed', { cause: new undiciErrors.ConnectTimeoutError() }),
      llm,
      'http://127.0.0.1:1/v1/chat/completions',
      'reaching the upstream',
    );
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error.details).toEqual({
      upstream: 'http://127.0.0.1:1/v1/chat/completions',
      timeout: 'connect',
      timeoutMs: 1_500,
    });
    expect(error.message).toBe(
      'the upstream http://127.0.0.1:1/v1/chat/completions took longer than 1500 ms to connect',
    );
  });

  it("gives model_failed with the socket's reason for any other failure", () => {
    const error = toUpstreamError(
      new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') }),
      llm,
      'http://127.0.0.1:1/v1/models',
      'reaching the upstream',
    );
    expect(error).not.toBeInstanceOf(UpstreamTimeoutError);
    expect(error.code).toBe('model_failed');
    expect(error.message).toBe(
      'reaching the upstream http://127.0.0.1:1/v1/models failed: connect ECONNREFUSED 127.0.0.1:1',
    );
  });
});
