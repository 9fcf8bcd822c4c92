import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/index.js';
import { startTestServer, type TestServer } from './test-server.js';

const keyA = 'key-tenant-a-0123456789';
const keyB = 'key-tenant-b-9876543210';
let server: TestServer;

beforeEach(async () => {
  server = await startTestServer({
    auth: {
      keys: [
        { key: keyA, tenantId: 'tenant-a' },
        { key: keyB, tenantId: 'tenant-b' },
      ],
    },
  });
});

afterEach(async () => {
  await server.close();
});

function secretTurns(tag: string) {
  return Array.from({ length: 8 }, (_, index) => [
    {
      role: 'user',
      content: `${tag} turn ${index}: relay LARCH-RIDGE reports ${index + 3} hops and SNR ${index - 5} dB. Healthy?`,
    },
    { role: 'assistant', content: `${tag} turn ${index}: workable; keep the ridge relay powered until 18:00.` },
  ]).flat();
}

describe('API keys', () => {
  it('answers 401 with a typed error for a missing, malformed or unknown key, and stores nothing', async () => {
    const body = { json: { conversation_id: 'c', role: 'user', content: 'hello' } };
    const missing = await server.json<ErrorBody>('/v1/memory/add', body);
    const malformed = await server.json<ErrorBody>('/v1/memory/add', {
      ...body,
      headers: { authorization: `Basic ${keyA}` },
    });
    const unknown = await server.json<ErrorBody>('/v1/memory/add', { ...body, key: `${keyA}x` });
    const prefix = await server.json<ErrorBody>('/v1/memory/add', { ...body, key: keyA.slice(0, -1) });

    for (const response of [missing, malformed, unknown, prefix]) {
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('unauthorized');
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect(missing.body.error.message).toMatch(/Authorization: Bearer/);
    expect((await server.json<{ items: unknown[] }>('/v1/conversations', { key: keyA })).body.items).toEqual([]);
  });

  it('serves /health, /ready, /metrics and /openapi.json without a key', async () => {
    for (const path of ['/health', '/ready', '/metrics', '/openapi.json'])
      expect((await server.request(path)).status).toBe(200);
    expect((await server.request('/v1/conversations')).status).toBe(401);
  });
});

describe('tenant isolation', () => {
  it("never shows tenant A's data to tenant B's key on any GET route, even with the same ids", async () => {
    // Tenant A: "shared" (default user), "shared" of user u1, "only-a", with summaries. Tenant B: its own "shared".
    await server.json('/v1/conversations/shared/messages', { key: keyA, json: { messages: secretTurns('A-SECRET') } });
    await server.json('/v1/conversations/shared/messages?user_id=u1', {
      key: keyA,
      json: { messages: secretTurns('A-SECRET') },
    });
    await server.json('/v1/conversations/only-a/messages', { key: keyA, json: { messages: secretTurns('A-SECRET') } });
    const compacted = await server.json<{ summaries: { id: string }[] }>('/v1/conversations/shared/compact', {
      key: keyA,
      method: 'POST',
    });
    const summaryId = compacted.body.summaries[0]!.id;
    await server.json('/v1/conversations/shared/context', { key: keyA, json: { maxTokens: 300 } });
    await server.json('/v1/conversations/shared/messages', {
      key: keyB,
      json: { messages: [{ role: 'user', content: 'B-DATA only' }] },
    });

    const document = (await server.json('/openapi.json')).body as {
      paths: Record<string, Record<string, { security: unknown[] }>>;
    };
    const getRoutes = Object.entries(document.paths)
      .filter(([, operations]) => operations.get !== undefined && operations.get.security.length > 0)
      .map(([path]) => path);
    expect(getRoutes.length).toBeGreaterThanOrEqual(8);
    let requests = 0;
    for (const template of getRoutes) {
      for (const conversation of ['shared', 'only-a']) {
        for (const user of ['', '?user_id=u1']) {
          const path = template
            .replace('{id}', template.startsWith('/v1/summaries') ? summaryId : conversation)
            .replace('{conversation_id}', conversation)
            .replace('{entity}', conversation);
          const required =
            template === '/v1/export'
              ? `conversation=${conversation}`
              : template === '/v1/recall'
                ? 'q=A-SECRET%20relay'
                : '';
          const query = required === '' ? user : `${user === '' ? '?' : `${user}&`}${required}`;
          const response = await server.request(`${path}${query}`, { key: keyB });
          const text = await response.text();
          requests += 1;
          expect(text, `GET ${path}${query}`).not.toContain('A-SECRET');
          expect(text, `GET ${path}${query}`).not.toContain('tenant-a');
          // A 404 echoes the id asked for; a 200 must not know A's conversation exists.
          if (response.status === 200) {
            expect(text, `GET ${path}${query}`).not.toContain('only-a');
            expect(text, `GET ${path}${query}`).not.toContain(summaryId);
          } else expect(response.status, `GET ${path}${query}`).toBe(404);
        }
      }
    }
    expect(requests).toBe(getRoutes.length * 4);

    // B's writes with A's ids touch only B's rows.
    await server.json('/v1/conversations/only-a', { key: keyB, method: 'DELETE' });
    await server.json('/v1/memory/shared', { key: keyB, method: 'DELETE' });
    await server.json('/v1/users/u1', { key: keyB, method: 'DELETE' });
    const listedByA = await server.json<{ items: { userId: string; conversationId: string }[] }>('/v1/conversations', {
      key: keyA,
    });
    expect(listedByA.body.items.map((item) => `${item.userId}/${item.conversationId}`)).toEqual([
      'only-a/only-a',
      'shared/shared',
      'u1/shared',
    ]);
    expect((await server.json<{ items: unknown[] }>('/v1/conversations', { key: keyB })).body.items).toEqual([]);
  });
});

describe('CORS', () => {
  it('sends no CORS headers by default and answers only the listed origins when configured', async () => {
    const plain = await server.request('/v1/conversations', {
      key: keyA,
      headers: { origin: 'https://console.example' },
    });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();

    const withCors = await startTestServer({ cors: { origins: ['https://console.example'] } });
    try {
      const preflight = await withCors.request('/v1/conversations/c/messages', {
        method: 'OPTIONS',
        headers: {
          origin: 'https://console.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      const allowed = await withCors.request('/v1/conversations', { headers: { origin: 'https://console.example' } });
      const other = await withCors.request('/v1/conversations', { headers: { origin: 'https://evil.example' } });

      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://console.example');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/i);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://console.example');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await withCors.close();
    }
  });
});
