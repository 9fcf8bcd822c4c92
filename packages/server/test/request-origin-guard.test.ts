import { request as httpRequest } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/index.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});

afterEach(async () => {
  await server.close();
});

/** A raw HTTP/1.1 request, so the Host header is exactly what a rebinding page's browser would send. */
function rawRequest(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers: options.headers ?? {} },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

const injected = JSON.stringify({ conversation_id: 'x', role: 'user', content: 'injected' });

describe('a keyless local server that web pages cannot reach into', () => {
  it('refuses a JSON body sent as text/plain, form data or without a type (a CORS-simple request), and stores nothing', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      undefined,
    ]) {
      const response = await server.json<ErrorBody>('/v1/memory/add', {
        method: 'POST',
        body: injected,
        headers: type === undefined ? {} : { 'content-type': type },
      });
      expect(response.status, String(type)).toBe(415);
      expect(response.body.error.code).toBe('unsupported_media_type');
      expect(response.body.error.message).toContain('Content-Type: application/json');
    }
    expect((await server.json<{ items: unknown[] }>('/v1/conversations')).body.items).toEqual([]);
    // JSON with a charset, and the +json family, are JSON.
    expect(
      (
        await server.json('/v1/memory/add', {
          method: 'POST',
          body: injected,
          headers: { 'content-type': 'application/json; charset=utf-8' },
        })
      ).status,
    ).toBe(200);
  });

  it('answers only loopback Host names, so a DNS-rebinding page cannot read the store', async () => {
    await server.json('/v1/memory/add', { json: { conversation_id: 'x', role: 'user', content: 'SECRET of x' } });
    const rebound = await rawRequest('/v1/export?conversation=x', { headers: { host: 'evil.example:8787' } });
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain('SECRET');
    expect((JSON.parse(rebound.body) as ErrorBody).error.code).toBe('misdirected_request');
    expect((await rawRequest('/health', { headers: { host: 'evil.example' } })).status).toBe(421);
    for (const host of ['127.0.0.1:8787', 'localhost:8787', '[::1]:8787', 'localhost']) {
      expect((await rawRequest('/v1/export?conversation=x', { headers: { host } })).status, host).toBe(200);
    }
  });

  it('answers a configured host name besides the loopback ones', async () => {
    const named = await startTestServer({ allowedHosts: ['mnemo.internal'] });
    try {
      const url = new URL(named.url);
      const ask = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const request = httpRequest(
            { host: url.hostname, port: url.port, path: '/health', headers: { host } },
            (response) => {
              response.resume();
              resolve(response.statusCode ?? 0);
            },
          );
          request.on('error', reject);
          request.end();
        });
      expect(await ask('mnemo.internal:8787')).toBe(200);
      expect(await ask('evil.example')).toBe(421);
    } finally {
      await named.close();
    }
  });

  it("refuses state-changing requests from another browser origin, allows the server's own and configured ones", async () => {
    const json = { 'content-type': 'application/json' };
    for (const origin of ['https://evil.example', 'null', `http://localhost.evil.example`]) {
      const response = await server.json<ErrorBody>('/v1/memory/add', {
        method: 'POST',
        body: injected,
        headers: { ...json, origin },
      });
      expect(response.status, origin).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
      expect((await server.json('/v1/memory/x', { method: 'DELETE', headers: { origin } })).status).toBe(403);
    }
    expect((await server.json<{ items: unknown[] }>('/v1/conversations')).body.items).toEqual([]);
    // Reading needs no Origin check (the browser keeps the answer from a page without CORS), and the page mnemo serves is same-origin.
    expect((await server.json('/v1/conversations', { headers: { origin: 'https://evil.example' } })).status).toBe(200);
    expect(
      (
        await server.json('/v1/memory/add', {
          method: 'POST',
          body: injected,
          headers: { ...json, origin: server.url },
        })
      ).status,
    ).toBe(200);
    const allowing = await startTestServer({ cors: { origins: ['https://app.example'] } });
    try {
      expect(
        (
          await allowing.json('/v1/memory/add', {
            method: 'POST',
            body: injected,
            headers: { ...json, origin: 'https://app.example' },
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await allowing.json('/v1/memory/add', {
            method: 'POST',
            body: injected,
            headers: { ...json, origin: 'https://evil.example' },
          })
        ).status,
      ).toBe(403);
    } finally {
      await allowing.close();
    }
  });
});
