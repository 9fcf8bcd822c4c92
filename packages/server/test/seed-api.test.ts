import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});

afterEach(async () => {
  await server.close();
});

async function add(conversationId: string, role: string, content: string) {
  return server.json('/v1/memory/add', { json: { conversation_id: conversationId, role, content } });
}

describe('seed memory API', () => {
  it('stores added messages and returns them as an OpenAI-shaped context', async () => {
    const first = await add('node-7', 'user', "I'm Maren, relay LARCH-RIDGE. Weather tomorrow?");
    await add('node-7', 'assistant', 'Rain after 14:00, 6 °C.');

    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'ok', conversation_id: 'node-7', seq: 1 });
    const context = await server.json('/v1/memory/context', { json: { conversation_id: 'node-7', max_tokens: 500 } });
    expect(context.status).toBe(200);
    expect(context.body.messages).toEqual([
      { role: 'user', content: "I'm Maren, relay LARCH-RIDGE. Weather tomorrow?" },
      { role: 'assistant', content: 'Rain after 14:00, 6 °C.' },
    ]);
    expect(context.body.memory_type).toBe('buffer');
    expect(context.body.total_tokens).toBeGreaterThan(10);
    expect(context.body.total_tokens).toBeLessThanOrEqual(500);
    expect(context.headers.get('x-mnemo-policy')).toBe('full');
  });

  it('runs each memory type on its policy and says when vector or hybrid fall back to summary', async () => {
    for (let turn = 0; turn < 6; turn += 1) {
      await add('node-9', 'user', `Turn ${turn}: node 9 reports ${turn + 3} hops and SNR ${turn - 5} dB. Healthy?`);
      await add('node-9', 'assistant', `Turn ${turn}: workable; keep the ridge relay powered.`);
    }
    const expected = { buffer: 'full', token_buffer: 'token-window', summary: 'summary' } as const;
    for (const [memoryType, policy] of Object.entries(expected)) {
      const context = await server.json('/v1/memory/context', { json: { conversation_id: 'node-9', max_tokens: 120, memory_type: memoryType } });
      expect(context.status).toBe(200);
      expect(context.headers.get('x-mnemo-policy')).toBe(policy);
      expect(context.body.memory_type).toBe(memoryType);
      expect(context.body.total_tokens).toBeLessThanOrEqual(120);
    }
    for (const memoryType of ['vector', 'hybrid']) {
      const context = await server.json('/v1/memory/context', {
        json: { conversation_id: 'node-9', max_tokens: 300, memory_type: memoryType, query: 'which relay should stay powered?' },
      });
      expect(context.headers.get('x-mnemo-policy')).toBe('hybrid');
      expect(context.body.total_tokens).toBeLessThanOrEqual(300);
    }
  });

  it('reports stats, lists the conversation and deletes it', async () => {
    await add('node-3', 'user', 'hello');
    await add('node-3', 'assistant', 'hi');
    await server.json('/v1/memory/context', { json: { conversation_id: 'node-3', max_tokens: 100 } });

    const stats = await server.json('/v1/memory/node-3/stats');
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ conversation_id: 'node-3', message_count: 2, context_requests: 1 });
    const listed = await server.json('/v1/conversations');
    expect(listed.body.conversations).toEqual([{ id: 'node-3', user_id: 'node-3', memory_type: 'buffer', message_count: 2 }]);

    const deleted = await server.json('/v1/memory/node-3', { method: 'DELETE' });
    expect(deleted.body).toEqual({ status: 'deleted', conversation_id: 'node-3', messages_deleted: 2 });
    expect((await server.json('/v1/memory/node-3/stats')).status).toBe(404);
    expect((await server.json('/v1/memory/node-3', { method: 'DELETE' })).body.messages_deleted).toBe(0);
  });

  it('rejects an unknown memory type, a missing budget and an empty message with 400, storing nothing', async () => {
    const unknownType = await server.json('/v1/memory/add', { json: { conversation_id: 'c', role: 'user', content: 'x', memory_type: 'entity' } });
    const noBudget = await server.json('/v1/memory/context', { json: { conversation_id: 'c' } });
    const empty = await add('c', 'user', '   ');
    const badRole = await add('c', 'robot', 'beep');

    expect(unknownType.status).toBe(400);
    expect(unknownType.body.error.code).toBe('invalid_input');
    expect(unknownType.body.error.message).toMatch(/^body\.memory_type: /);
    expect(noBudget.status).toBe(400);
    expect(noBudget.body.error.message).toMatch(/body\.max_tokens/);
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/content must not be empty/);
    expect(badRole.body.error.details.fields).toEqual(['body.role']);
    expect((await server.json('/v1/conversations')).body.items).toEqual([]);
  });
});
