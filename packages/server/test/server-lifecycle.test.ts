import { createMemory } from '@mnemo/core';
import { InMemoryStore } from '@mnemo/core/testing';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerApp, startServer, type ServerRouteModule } from '../src/index.js';
import { isLoopbackHost } from '../src/auth/request-origin-guard.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function quietApp(keys: { key: string; tenantId: string }[] = []) {
  return createServerApp({
    memory: createMemory({ store: new InMemoryStore() }),
    auth: { keys },
    logger: pino({ level: 'silent' }),
  });
}

/** A mounted route that holds its response until the test releases it. */
function gatedRoute() {
  let entered!: () => void;
  let release!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const mount: ServerRouteModule = (app, deps) => {
    app.get('/v1/slow', async (c) => {
      entered();
      await gate;
      const page = await deps.memory.listConversations({ tenantId: c.get('tenantId') });
      return c.json({ done: true, tenantId: c.get('tenantId'), conversations: page.items.length });
    });
  };
  return { mount, started, release };
}

describe('startServer', () => {
  it('refuses a non-loopback host when no API key is configured', async () => {
    await expect(startServer({ app: quietApp(), host: '0.0.0.0', port: 0 })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/^refusing to listen on 0\.0\.0\.0 without API keys/) as unknown,
    });
    await expect(startServer({ app: quietApp(), host: '::', port: 0 })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });

  it('tells loopback hosts from the others', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com', '128.0.0.1'])
      expect(isLoopbackHost(host)).toBe(false);
  });

  it('fails with unavailable when the port is taken', async () => {
    const first = await startServer({ app: quietApp(), port: 0 });
    try {
      await expect(startServer({ app: quietApp(), port: first.port })).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      await first.close();
    }
  });

  it('finishes an in-flight request on shutdown, refuses new connections, then closes the memory', async () => {
    const slow = gatedRoute();
    server = await startTestServer({ routes: [slow.mount] });
    await server.json('/v1/conversations/c/messages', {
      json: { messages: [{ role: 'user', content: 'stored before shutdown' }] },
    });
    const inFlight = server.json('/v1/slow');
    await slow.started;

    const closing = server.server.close();
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
    slow.release();

    expect((await inFlight).body).toEqual({ done: true, tenantId: 'default', conversations: 1 });
    await closing;
    await expect(server.memory.listConversations()).rejects.toMatchObject({ code: 'unavailable' });
  });
});

describe('mounted route modules', () => {
  it('sit behind the auth middleware and see the tenant of the key', async () => {
    const slow = gatedRoute();
    slow.release();
    server = await startTestServer({ auth: { keys: [{ key: 'proxy-key', tenantId: 'radio' }] }, routes: [slow.mount] });

    expect((await server.json('/v1/slow')).status).toBe(401);
    expect((await server.json('/v1/slow', { key: 'proxy-key' })).body).toEqual({
      done: true,
      tenantId: 'radio',
      conversations: 0,
    });
  });
});
