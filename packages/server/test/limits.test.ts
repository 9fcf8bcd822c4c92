import { Agent, request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@mnemo/models/testing';
import { defaultKeyRateLimit, resolveServerLimits } from '../src/app/server-limits.js';
import type { ErrorBody } from '../src/index.js';
import { mountProxyRoutes } from '../src/proxy/index.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer | undefined;

/** An invalid_input answer that names the fields of the request that failed. */
type FieldsErrorBody = {
  readonly error: { readonly message: string; readonly details: { readonly fields: readonly string[] } };
};

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function storedConversations(target: TestServer): Promise<unknown[]> {
  return (await target.json<{ items: unknown[] }>('/v1/conversations')).body.items;
}

describe('malformed and oversize input', () => {
  it('answers 400 invalid_input for a body that is not JSON, storing nothing', async () => {
    server = await startTestServer();
    for (const path of ['/v1/memory/add', '/v1/conversations/c/messages', '/v1/conversations/c/context']) {
      const response = await server.json<ErrorBody>(path, {
        method: 'POST',
        body: '{"conversation_id": "c", "role": ',
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_input');
      expect(response.body.error.message).toMatch(/^request body is not valid JSON/);
    }
    expect(await storedConversations(server)).toEqual([]);
  });

  it('answers 400 invalid_input for a body that is not UTF-8, and for ids that are not printable text, storing nothing', async () => {
    server = await startTestServer();
    const invalid = Buffer.concat([
      Buffer.from('{"messages":[{"role":"user","content":"caf'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('"}]}'),
    ]);
    for (const path of ['/v1/conversations/c/messages', '/v1/memory/add']) {
      const response = await server.json<ErrorBody>(path, {
        method: 'POST',
        body: invalid,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        code: 'invalid_input',
        message: 'request body is not valid UTF-8',
        details: { field: 'body' },
      });
    }
    for (const id of ['%FF', 'node-%EF%BF%BD', 'a%C2%85b']) {
      const response = await server.json<ErrorBody>(`/v1/conversations/${id}/messages`, {
        json: { messages: [{ role: 'user', content: 'hello' }] },
      });
      expect(response.status, id).toBe(400);
      expect(response.body.error.code).toBe('invalid_input');
    }
    const badUser = await server.json<ErrorBody>('/v1/memory/add', {
      json: { conversation_id: 'c', user_id: 'u\uFFFD', role: 'user', content: 'hello' },
    });
    expect(badUser.status).toBe(400);
    expect(badUser.body.error.details).toEqual({ field: 'userId' });
    expect(await storedConversations(server)).toEqual([]);

    const unicode = await server.json(`/v1/conversations/${encodeURIComponent('nœud-📡')}/messages`, {
      json: { messages: [{ role: 'user', content: 'café 📡' }] },
    });
    expect(unicode.status).toBe(201);
    expect(
      (
        await server.json<{ items: { content: string }[] }>(
          `/v1/conversations/${encodeURIComponent('nœud-📡')}/messages`,
        )
      ).body.items[0]!.content,
    ).toBe('café 📡');
  });

  it('answers 400 invalid_input for metadata nested deeper than the limit, storing nothing', async () => {
    server = await startTestServer();
    let metadata: Record<string, unknown> = { leaf: true };
    for (let level = 0; level < 1_000; level += 1) metadata = { inner: metadata };
    const response = await server.json<ErrorBody>('/v1/conversations/c/messages', {
      json: { messages: [{ role: 'user', content: 'hello', metadata }] },
    });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_input');
    expect(response.body.error.message).toContain('nested deeper than 32 levels');
    expect(await storedConversations(server)).toEqual([]);
  });

  it('names the failing field of a body that does not match the schema', async () => {
    server = await startTestServer();
    const wrongType = await server.json<FieldsErrorBody>('/v1/conversations/c/messages', {
      json: {
        messages: [
          { role: 'user', content: 'ok' },
          { role: 'user', content: 42 },
        ],
      },
    });
    const unknownField = await server.json<FieldsErrorBody>('/v1/conversations/c/messages', {
      json: { messages: [{ role: 'user', content: 'ok', colour: 'red' }] },
    });
    const badQuery = await server.json<FieldsErrorBody>('/v1/conversations/c/messages?limit=0');
    const badPolicy = await server.json<FieldsErrorBody>('/v1/conversations/c/context', {
      json: { policy: 'everything' },
    });

    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.details.fields).toEqual(['body.messages[1].content']);
    expect(wrongType.body.error.message).toMatch(/^body\.messages\[1\]\.content: /);
    expect(unknownField.body.error.message).toMatch(/^body\.messages\[0\]: .*colour/);
    expect(badQuery.body.error.details.fields).toEqual(['query.limit']);
    expect(badPolicy.body.error.details.fields).toEqual(['body.policy']);
    expect(await storedConversations(server)).toEqual([]);
  });

  it('answers 413 payload_too_large for a body over the limit, by Content-Length or streamed, storing nothing', async () => {
    server = await startTestServer({ limits: { maxBodyBytes: 2048 } });
    const big = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(4096) }] });
    const sized = await server.json<ErrorBody>('/v1/conversations/c/messages', {
      method: 'POST',
      body: big,
      headers: { 'content-type': 'application/json' },
    });
    const encoder = new TextEncoder();
    const streamed = await server.json<ErrorBody>('/v1/conversations/c/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(encoder.encode(big.slice(0, 1500)));
          controller.enqueue(encoder.encode(big.slice(1500)));
          controller.close();
        },
      }),
      duplex: 'half',
    });

    for (const response of [sized, streamed]) {
      expect(response.status).toBe(413);
      expect(response.body.error).toMatchObject({ code: 'payload_too_large', details: { limit: 2048 } });
    }
    const small = await server.json('/v1/conversations/c/messages', {
      json: { messages: [{ role: 'user', content: 'fits' }] },
    });
    expect(small.status).toBe(201);
    expect((await server.json<{ messageCount: number }>('/v1/conversations/c')).body.messageCount).toBe(1);
  });

  it('reads the body of an answer that did not need it (404, a route that takes none, a body over the limit: 413) and keeps the connection; a keep-alive client always gets an answer', async () => {
    server = await startTestServer({ limits: { maxBodyBytes: 2048 } });
    const { port } = new URL(server.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body: string | Buffer) =>
      new Promise<{ status: number; connection: string | undefined } | { error: string }>((resolve) => {
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port: Number(port),
            method,
            path,
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (response) => {
            response.resume();
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }),
            );
          },
        );
        request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
        request.end(body);
      });
    try {
      for (let round = 0; round < 5; round += 1) {
        expect(await send('POST', '/v1/conversations/c/messages', Buffer.alloc(1_000_000, 'a'))).toEqual({
          status: 413,
          connection: 'keep-alive',
        });
        expect(await send('GET', '/health', '')).toMatchObject({ status: 200 });
        expect(await send('POST', '/v1/no-such-route', Buffer.alloc(1_500, 'a'))).toEqual({
          status: 404,
          connection: 'keep-alive',
        });
        expect(await send('GET', '/v1/conversations', '{"unread": true}')).toEqual({
          status: 200,
          connection: 'keep-alive',
        });
        expect(await send('DELETE', '/v1/facts/%7B%7D', '['.repeat(2_000))).toMatchObject({ connection: 'keep-alive' });
        // A body that was read leaves the connection open for the next request.
        expect(await send('POST', '/v1/conversations/c/messages', '{"messages": [')).toEqual({
          status: 400,
          connection: 'keep-alive',
        });
        expect(await send('GET', '/health', '')).toEqual({ status: 200, connection: 'keep-alive' });
      }
    } finally {
      agent.destroy();
    }
  });

  it("lets Node's own HTTP client read the 413 of a large body, sized or streamed, instead of a reset", async () => {
    server = await startTestServer({ limits: { maxBodyBytes: 2048 } });
    const { port } = new URL(server.url);
    const send = (body: Buffer, chunked: boolean) =>
      new Promise<number | string>((resolve) => {
        const headers = {
          'content-type': 'application/json',
          ...(chunked ? {} : { 'content-length': body.byteLength }),
        };
        const request = httpRequest(
          { host: '127.0.0.1', port: Number(port), method: 'POST', path: '/v1/conversations/c/messages', headers },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          },
        );
        request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        // Written in pieces, as a client streams an upload: the server answers while the client still writes.
        for (let offset = 0; offset < body.byteLength; offset += 65_536)
          request.write(body.subarray(offset, offset + 65_536));
        request.end();
      });
    const outcomes: (number | string)[] = [];
    for (const size of [100_000, 1_000_000, 8_000_000])
      for (const chunked of [false, true]) outcomes.push(await send(Buffer.alloc(size, 'a'), chunked));
    expect(outcomes).toEqual([413, 413, 413, 413, 413, 413]);
  });

  it('rejects content over the engine limit and batches over the message limit with 400, storing nothing', async () => {
    server = await startTestServer({ limits: { maxBatchMessages: 3 } });
    const tooLong = await server.json<ErrorBody>('/v1/conversations/c/messages', {
      json: { messages: [{ role: 'user', content: 'y'.repeat(200_001) }] },
    });
    const tooMany = await server.json<ErrorBody>('/v1/conversations/c/messages', {
      json: { messages: Array.from({ length: 4 }, () => ({ role: 'user', content: 'hi' })) },
    });
    const halfBad = await server.json('/v1/conversations/c/messages', {
      json: {
        messages: [
          { role: 'user', content: 'good' },
          { role: 'user', content: '' },
        ],
      },
    });

    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toMatch(/over the limit of 200000/);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/over the limit of 3/);
    expect(halfBad.status).toBe(400);
    expect(await storedConversations(server)).toEqual([]);
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After once a key spends its burst, per key, and lets it through after the refill', async () => {
    let nowMs = 1_000_000;
    server = await startTestServer({
      auth: {
        keys: [
          { key: 'key-one', tenantId: 't1' },
          { key: 'key-two', tenantId: 't2' },
        ],
      },
      limits: { rateLimit: { requestsPerSecond: 0.5, burst: 2 } },
      now: () => nowMs,
    });
    const statuses = [];
    for (let attempt = 0; attempt < 3; attempt += 1)
      statuses.push((await server.request('/v1/conversations', { key: 'key-one' })).status);
    const limited = await server.json<ErrorBody>('/v1/conversations', { key: 'key-one' });
    const otherKey = await server.request('/v1/conversations', { key: 'key-two' });
    const health = await server.request('/health');

    expect(statuses).toEqual([200, 200, 429]);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(otherKey.status).toBe(200);
    expect(health.status).toBe(200);
    nowMs += 2000;
    expect((await server.request('/v1/conversations', { key: 'key-one' })).status).toBe(200);
    expect((await server.request('/v1/conversations', { key: 'key-one' })).status).toBe(429);
  });
});

describe('default limits', () => {
  it('rate-limits only a server with API keys, unless told otherwise', () => {
    expect(resolveServerLimits({}, 0).rateLimit).toBe(false);
    expect(resolveServerLimits({}, 2).rateLimit).toEqual(defaultKeyRateLimit);
    expect(resolveServerLimits({ rateLimit: { requestsPerSecond: 5, burst: 5 } }, 0).rateLimit).toEqual({
      requestsPerSecond: 5,
      burst: 5,
    });
    expect(resolveServerLimits({ rateLimit: false }, 2).rateLimit).toBe(false);
    expect(() => resolveServerLimits({ maxConcurrentRequests: 0 })).toThrow(/maxConcurrentRequests/);
  });
});

describe('overload', () => {
  let upstream: ScriptedOpenAiServer | undefined;

  afterEach(async () => {
    await upstream?.close();
    upstream = undefined;
  });

  it('answers 503 with Retry-After at once past maxConcurrentRequests, while /health still answers, and serves again after', async () => {
    upstream = await startScriptedOpenAiServer({
      replies: [{ content: 'slow answer', delayMs: 400 }, { content: 'later answer' }],
    });
    server = await startTestServer({
      limits: { maxConcurrentRequests: 1 },
      llm: { baseUrl: upstream.baseUrl },
      routes: [mountProxyRoutes],
    });
    const chat = () =>
      server!.json('/v1/chat/completions', {
        json: { model: 'm', user: 'maren', messages: [{ role: 'user', content: 'status of node 7?' }] },
      });

    const slow = chat();
    await waitUntil(() => upstream!.requests.length === 1);
    const refused = await server.json<ErrorBody>('/v1/conversations');
    const health = await server.request('/health');

    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('unavailable');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(health.status).toBe(200);
    expect((await slow).status).toBe(200);
    expect((await server.json('/v1/conversations')).status).toBe(200);
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let round = 0; round < 200 && !done(); round += 1) await new Promise((resolve) => setTimeout(resolve, 10));
}
