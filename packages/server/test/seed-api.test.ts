import type { ContextReport, Message } from '@mnemo/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/index.js';
import { startTestServer, type TestServer } from './test-server.js';

// The seed API's bodies, field by field as a seed client reads them.
interface SeedAdded {
  readonly status: string;
  readonly conversation_id: string;
  readonly message_id: string;
  readonly seq: number;
  readonly tokens: number;
}
interface SeedContext {
  readonly messages: readonly { readonly role: string; readonly content: string }[];
  readonly memory_type: string;
  readonly total_tokens: number;
  readonly conversation_found: boolean;
}
interface SeedStats {
  readonly conversation_id: string;
  readonly memory_type: string;
  readonly message_count: number;
  readonly roles: Readonly<Record<string, number>>;
  readonly total_tokens: number;
  readonly summarized_through_seq: number;
  readonly first_message_at: string;
  readonly last_message_at: string;
  readonly context_requests: number;
  readonly sent_tokens: number;
  readonly full_history_tokens: number;
  readonly saved_tokens: number;
  readonly compactions: number;
}
interface SeedConversations {
  readonly conversations: readonly {
    readonly id: string;
    readonly user_id: string;
    readonly memory_type: string;
    readonly message_count: number;
  }[];
}
interface SeedDeleted {
  readonly status: string;
  readonly conversation_id: string;
  readonly messages_deleted: number;
}
/** An invalid_input answer that names the fields of the request that failed. */
type FieldsErrorBody = {
  readonly error: { readonly message: string; readonly details: { readonly fields: readonly string[] } };
};

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});

afterEach(async () => {
  await server.close();
});

async function add<Body = SeedAdded>(conversationId: string, role: string, content: string) {
  return server.json<Body>('/v1/memory/add', { json: { conversation_id: conversationId, role, content } });
}

describe('seed memory API', () => {
  it('stores a retried add once, keyed by the Idempotency-Key header or the idempotency_key field', async () => {
    const byHeader = { conversation_id: 'node-3', role: 'user', content: 'Relay LARCH-RIDGE is back on battery.' };
    const first = await server.json('/v1/memory/add', { json: byHeader, headers: { 'idempotency-key': 'add-1' } });
    const again = await server.json('/v1/memory/add', { json: byHeader, headers: { 'idempotency-key': 'add-1' } });
    const byField = { conversation_id: 'node-3', role: 'assistant', content: 'Noted.', idempotency_key: 'reply-1' };
    const reply = await server.json('/v1/memory/add', { json: byField });
    const replyAgain = await server.json('/v1/memory/add', { json: byField, headers: { 'idempotency-key': 'other' } });
    const changed = await server.json('/v1/memory/add', {
      json: { ...byHeader, content: 'something else' },
      headers: { 'idempotency-key': 'add-1' },
    });
    const blank = await server.json('/v1/memory/add', { json: byHeader, headers: { 'idempotency-key': ' ' } });

    expect([first.status, again.status, reply.status, replyAgain.status]).toEqual([200, 200, 200, 200]);
    expect(again.body).toEqual(first.body);
    expect(replyAgain.body).toEqual(reply.body);
    expect(changed.status).toBe(409);
    expect(blank.status).toBe(400);
    const stored = await server.json<{ items: readonly Message[] }>('/v1/conversations/node-3/messages');
    expect(stored.body.items.map((message) => [message.seq, message.content, message.idempotencyKey])).toEqual([
      [1, byHeader.content, 'add-1#0'],
      [2, 'Noted.', 'reply-1'],
    ]);
  });

  it('stores added messages and returns them as an OpenAI-shaped context', async () => {
    const first = await add('node-7', 'user', "I'm Maren, relay LARCH-RIDGE. Weather tomorrow?");
    await add('node-7', 'assistant', 'Rain after 14:00, 6 °C.');

    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'ok', conversation_id: 'node-7', seq: 1 });
    const context = await server.json<SeedContext>('/v1/memory/context', {
      json: { conversation_id: 'node-7', max_tokens: 500 },
    });
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
      const context = await server.json<SeedContext>('/v1/memory/context', {
        json: { conversation_id: 'node-9', max_tokens: 120, memory_type: memoryType },
      });
      expect(context.status).toBe(200);
      expect(context.headers.get('x-mnemo-policy')).toBe(policy);
      expect(context.body.memory_type).toBe(memoryType);
      expect(context.body.total_tokens).toBeLessThanOrEqual(120);
    }
    for (const memoryType of ['vector', 'hybrid']) {
      const context = await server.json<SeedContext>('/v1/memory/context', {
        json: {
          conversation_id: 'node-9',
          max_tokens: 300,
          memory_type: memoryType,
          query: 'which relay should stay powered?',
        },
      });
      expect(context.headers.get('x-mnemo-policy')).toBe('hybrid');
      expect(context.body.total_tokens).toBeLessThanOrEqual(300);
    }
  });

  it('recalls for every vector query, and for a hybrid one only when it asks something', async () => {
    await add('node-11', 'user', 'The spare battery for GRANITE-PASS sits in the blue crate.');
    for (let turn = 0; turn < 12; turn += 1) {
      await add('node-11', 'user', `Turn ${turn}: node 11 reports ${turn + 3} hops and SNR ${turn - 5} dB.`);
      await add('node-11', 'assistant', `Turn ${turn}: workable; keep the ridge relay powered.`);
    }
    const contextFor = async (memoryType: string, query: string) =>
      JSON.stringify(
        (
          await server.json<SeedContext>('/v1/memory/context', {
            json: { conversation_id: 'node-11', max_tokens: 300, memory_type: memoryType, query },
          })
        ).body.messages,
      );

    expect(await contextFor('vector', 'GRANITE-PASS spare battery')).toContain('blue crate');
    expect(await contextFor('hybrid', 'where is the GRANITE-PASS spare battery?')).toContain('blue crate');
    expect(await contextFor('hybrid', 'GRANITE-PASS spare battery')).not.toContain('blue crate');
  });

  it('reports stats, lists the conversation and deletes it', async () => {
    await add('node-3', 'user', 'hello');
    await add('node-3', 'assistant', 'hi');
    await server.json('/v1/memory/context', { json: { conversation_id: 'node-3', max_tokens: 100 } });

    const stats = await server.json('/v1/memory/node-3/stats');
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ conversation_id: 'node-3', message_count: 2, context_requests: 1 });
    const listed = await server.json<SeedConversations>('/v1/conversations');
    expect(listed.body.conversations).toEqual([
      { id: 'node-3', user_id: 'node-3', memory_type: 'buffer', message_count: 2 },
    ]);

    const deleted = await server.json('/v1/memory/node-3', { method: 'DELETE' });
    expect(deleted.body).toEqual({ status: 'deleted', conversation_id: 'node-3', messages_deleted: 2 });
    expect((await server.json('/v1/memory/node-3/stats')).status).toBe(404);
    expect((await server.json<SeedDeleted>('/v1/memory/node-3', { method: 'DELETE' })).body.messages_deleted).toBe(0);
  });

  it('rejects an unknown memory type, a missing budget and an empty message with 400, storing nothing', async () => {
    const unknownType = await server.json<ErrorBody>('/v1/memory/add', {
      json: { conversation_id: 'c', role: 'user', content: 'x', memory_type: 'entity' },
    });
    const noBudget = await server.json<ErrorBody>('/v1/memory/context', { json: { conversation_id: 'c' } });
    const empty = await add<ErrorBody>('c', 'user', '   ');
    const badRole = await add<FieldsErrorBody>('c', 'robot', 'beep');

    expect(unknownType.status).toBe(400);
    expect(unknownType.body.error.code).toBe('invalid_input');
    expect(unknownType.body.error.message).toMatch(/^body\.memory_type: /);
    expect(noBudget.status).toBe(400);
    expect(noBudget.body.error.message).toMatch(/body\.max_tokens/);
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/content must not be empty/);
    expect(badRole.body.error.details.fields).toEqual(['body.role']);
    expect((await server.json<{ items: unknown[] }>('/v1/conversations')).body.items).toEqual([]);
  });
});

describe('seed memory API: a seed client reading every field by name', () => {
  it('answers add, context, stats, the conversation list and delete in the seed shapes, and remembers the memory type', async () => {
    const added = (
      await server.json<SeedAdded>('/v1/memory/add', {
        json: { conversation_id: 'node-5', role: 'user', content: 'Relay status?', memory_type: 'summary' },
      })
    ).body;
    await server.json('/v1/memory/add', {
      json: { conversation_id: 'node-5', role: 'assistant', content: 'All relays up.' },
    });
    await server.json('/v1/memory/add', { json: { conversation_id: 'node-5', role: 'user', content: 'Thanks.' } });
    expect(added.status).toBe('ok');
    expect(added.conversation_id).toBe('node-5');
    expect(typeof added.message_id).toBe('string');
    expect(added.seq).toBe(1);
    expect(added.tokens).toBeGreaterThan(0);

    // No memory_type on the context request: the one given on add.
    const context = await server.json<SeedContext>('/v1/memory/context', {
      json: { conversation_id: 'node-5', max_tokens: 500 },
    });
    expect(context.headers.get('x-mnemo-policy')).toBe('summary');
    expect(context.body.memory_type).toBe('summary');
    expect(context.body.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(context.body.total_tokens).toBeGreaterThan(0);
    expect(context.body.conversation_found).toBe(true);

    const stats = (await server.json<SeedStats>('/v1/memory/node-5/stats')).body;
    expect(stats.conversation_id).toBe('node-5');
    expect(stats.memory_type).toBe('summary');
    expect(stats.message_count).toBe(3);
    expect(stats.roles).toEqual({ user: 2, assistant: 1 });
    expect(stats.total_tokens).toBeGreaterThan(0);
    expect(stats.summarized_through_seq).toBe(0);
    expect(Date.parse(stats.first_message_at)).not.toBeNaN();
    expect(Date.parse(stats.last_message_at)).not.toBeNaN();
    expect(stats.context_requests).toBe(1);
    expect(stats.sent_tokens).toBe(context.body.total_tokens);
    expect(stats.full_history_tokens).toBeGreaterThanOrEqual(stats.sent_tokens);
    expect(stats.saved_tokens).toBe(stats.full_history_tokens - stats.sent_tokens);
    expect(stats.compactions).toBe(0);

    const [listed] = (await server.json<SeedConversations>('/v1/conversations')).body.conversations;
    expect(listed!.id).toBe('node-5');
    expect(listed!.memory_type).toBe('summary');
    expect(listed!.message_count).toBe(3);

    // A later add names another type: that is the conversation's type from now on.
    await server.json('/v1/memory/add', {
      json: { conversation_id: 'node-5', role: 'assistant', content: 'You are welcome.', memory_type: 'vector' },
    });
    expect(
      (await server.json<SeedContext>('/v1/memory/context', { json: { conversation_id: 'node-5', max_tokens: 500 } }))
        .body.memory_type,
    ).toBe('vector');

    const deleted = (await server.json<SeedDeleted>('/v1/memory/node-5', { method: 'DELETE' })).body;
    expect(deleted.status).toBe('deleted');
    expect(deleted.conversation_id).toBe('node-5');
    expect(deleted.messages_deleted).toBe(4);
  });

  it('answers an unknown conversation with an empty context that says the conversation does not exist', async () => {
    const context = await server.json('/v1/memory/context', {
      json: { conversation_id: 'nobody', max_tokens: 100, system: 'Be brief.' },
    });
    expect(context.status).toBe(200);
    expect(context.body).toMatchObject({
      messages: [{ role: 'system', content: 'Be brief.' }],
      memory_type: 'buffer',
      conversation_found: false,
    });
    const resource = await server.json<{ report: ContextReport }>('/v1/conversations/nobody/context', {
      json: { maxTokens: 100 },
    });
    expect(resource.status).toBe(200);
    expect(resource.body.report.conversationFound).toBe(false);
    expect((await server.json('/v1/memory/nobody/stats')).status).toBe(404);
  });

  it('groups conversations of one end user with user_id, and keeps conversations without one apart', async () => {
    await server.json('/v1/memory/add', {
      json: { conversation_id: 'chat-1', user_id: 'maren', role: 'user', content: 'My callsign is LARCH-RIDGE.' },
    });
    await server.json('/v1/memory/add', {
      json: { conversation_id: 'chat-9', role: 'user', content: 'My callsign is BIRCH-VALLEY.' },
    });
    await server.memory.runPendingJobs();
    const maren = await server.json('/v1/facts?user_id=maren');
    const alone = await server.json('/v1/facts?user_id=chat-9');
    expect(JSON.stringify(maren.body)).toContain('LARCH-RIDGE');
    expect(JSON.stringify(maren.body)).not.toContain('BIRCH-VALLEY');
    expect(JSON.stringify(alone.body)).toContain('BIRCH-VALLEY');
    expect((await server.json('/v1/memory/chat-1/stats')).status).toBe(404);
    expect((await server.json<SeedStats>('/v1/memory/chat-1/stats?user_id=maren')).body.message_count).toBe(1);
  });
});
