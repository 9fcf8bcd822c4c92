import type { ContextMessage, ContextReport, Conversation, Message, Summary } from '@mnemo/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/index.js';
import { startTestServer, type TestServer } from './test-server.js';

/** The bodies of the resource API that these tests read. */
type MessagesBody = { readonly messages: readonly Message[] };
type ItemsBody<Item> = { readonly items: readonly Item[] };
type SeedConversationsPage = {
  readonly conversations: readonly { readonly id: string }[];
  readonly nextCursor?: string;
};
type ContextBody = { readonly messages: readonly ContextMessage[]; readonly report: ContextReport };

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer();
});

afterEach(async () => {
  await server.close();
});

function turns(count: number, offset = 0) {
  return Array.from({ length: count }, (_, index) => {
    const turn = index + offset;
    return [
      {
        role: 'user',
        content: `Turn ${turn}: relay LARCH-RIDGE reports ${turn + 3} hops to the gateway and SNR ${turn - 5} dB. Is the route healthy?`,
      },
      {
        role: 'assistant',
        content: `Turn ${turn}: ${turn + 3} hops at SNR ${turn - 5} dB is workable; keep the ridge relay powered until 18:00.`,
      },
    ];
  }).flat();
}

async function append<Body = MessagesBody>(
  conversationId: string,
  messages: unknown[],
  headers: Record<string, string> = {},
) {
  return server.json<Body>(`/v1/conversations/${conversationId}/messages`, { json: { messages }, headers });
}

describe('resource API: messages', () => {
  it('returns the same seqs and stores nothing twice when a batch is retried with its Idempotency-Key', async () => {
    const batch = [
      { role: 'user', content: 'Is node 7 up?' },
      { role: 'assistant', content: 'Last heard 2 min ago.' },
    ];
    const first = await append('node-7', batch, { 'Idempotency-Key': 'req-1' });
    const retry = await append('node-7', batch, { 'Idempotency-Key': 'req-1' });
    const next = await append('node-7', [{ role: 'user', content: 'And node 9?', idempotencyKey: 'own-key' }], {
      'Idempotency-Key': 'req-2',
    });
    const nextRetry = await append('node-7', [{ role: 'user', content: 'And node 9?', idempotencyKey: 'own-key' }]);

    expect(first.status).toBe(201);
    expect(first.body.messages.map((message) => message.seq)).toEqual([1, 2]);
    expect(retry.body.messages).toEqual(first.body.messages);
    expect(next.body.messages[0]).toMatchObject({ seq: 3, idempotencyKey: 'own-key' });
    expect(nextRetry.body.messages[0]!.seq).toBe(3);
    expect((await server.json<Conversation>('/v1/conversations/node-7')).body.messageCount).toBe(3);
  });

  it('answers 409 conflict when a key is reused for different content, storing nothing', async () => {
    await append('node-7', [{ role: 'user', content: 'first' }], { 'Idempotency-Key': 'k' });
    const reused = await append<ErrorBody>('node-7', [{ role: 'user', content: 'something else' }], {
      'Idempotency-Key': 'k',
    });

    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('conflict');
    expect((await server.json<Conversation>('/v1/conversations/node-7')).body.messageCount).toBe(1);
  });

  it('pages through messages with after_seq and limit until nextAfterSeq is absent', async () => {
    await append('long', turns(5));
    const seen: number[] = [];
    let afterSeq = 0;
    for (let pages = 0; pages < 10; pages += 1) {
      const page = await server.json<ItemsBody<Message> & { readonly nextAfterSeq?: number }>(
        `/v1/conversations/long/messages?after_seq=${afterSeq}&limit=4`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((message) => message.seq));
      if (page.body.nextAfterSeq === undefined) break;
      afterSeq = page.body.nextAfterSeq;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await server.json('/v1/conversations/missing/messages')).status).toBe(404);
  });

  it('keeps the users of one tenant apart: user_id, the X-Mnemo-User header, and a clash between them', async () => {
    await server.json('/v1/conversations/shared/messages?user_id=alice', {
      json: { messages: [{ role: 'user', content: 'from alice' }] },
    });
    await server.json('/v1/conversations/shared/messages', {
      json: { messages: [{ role: 'user', content: 'from bob' }] },
      headers: { 'X-Mnemo-User': 'bob' },
    });

    const alice = await server.json<ItemsBody<Message>>('/v1/conversations/shared/messages', {
      headers: { 'X-Mnemo-User': 'alice' },
    });
    const bob = await server.json<ItemsBody<Message>>('/v1/conversations/shared/messages?user_id=bob');
    const clash = await server.json('/v1/conversations/shared/messages?user_id=bob', {
      headers: { 'X-Mnemo-User': 'alice' },
    });
    const everyone = await server.json<ItemsBody<Conversation>>('/v1/conversations');
    const onlyBob = await server.json<ItemsBody<Conversation>>('/v1/conversations?user_id=bob');

    expect(alice.body.items.map((message) => message.content)).toEqual(['from alice']);
    expect(bob.body.items.map((message) => message.content)).toEqual(['from bob']);
    expect(clash.status).toBe(400);
    expect(everyone.body.items.map((item) => item.userId)).toEqual(['alice', 'bob']);
    expect(onlyBob.body.items).toHaveLength(1);
    expect((await server.json('/v1/conversations/shared')).status).toBe(404);
  });

  it('pages the conversation listing with a cursor', async () => {
    for (const id of ['a', 'b', 'c']) await append(id, [{ role: 'user', content: `hello ${id}` }]);
    const first = await server.json<SeedConversationsPage>('/v1/conversations?limit=2');
    const second = await server.json<SeedConversationsPage>(
      `/v1/conversations?limit=2&cursor=${encodeURIComponent(first.body.nextCursor!)}`,
    );
    const badCursor = await server.json('/v1/conversations?cursor=not-a-cursor');

    expect(first.body.conversations).toEqual([
      { id: 'a', user_id: 'a', memory_type: 'buffer', message_count: 1 },
      { id: 'b', user_id: 'b', memory_type: 'buffer', message_count: 1 },
    ]);
    expect(second.body.conversations.map((conversation) => conversation.id)).toEqual(['c']);
    expect(second.body.nextCursor).toBeUndefined();
    expect(badCursor.status).toBe(400);
  });
});

describe('resource API: context, compaction, usage', () => {
  it('builds a context with the full report and records it in the usage', async () => {
    await append('node-7', turns(8));
    const context = await server.json<ContextBody>('/v1/conversations/node-7/context', {
      json: { policy: 'token-window', maxTokens: 150, system: 'Reply in 150 characters.' },
    });

    expect(context.status).toBe(200);
    expect(context.body.messages[0]).toEqual({ role: 'system', content: 'Reply in 150 characters.' });
    expect(context.body.report).toMatchObject({ policy: 'token-window', maxTokens: 150, encoding: 'o200k_base' });
    expect(context.body.report.sentTokens).toBeLessThanOrEqual(150);
    expect(context.body.report.fullHistoryTokens).toBeGreaterThan(context.body.report.sentTokens);
    expect(context.body.report.dropped[0]).toMatchObject({ reason: 'over_budget', seqRange: { from: 1 } });
    const usage = await server.json<ItemsBody<unknown>>('/v1/usage');
    expect(usage.body.items).toEqual([
      expect.objectContaining({
        conversationId: 'node-7',
        messageCount: 16,
        usage: expect.objectContaining({ requests: 1, sentTokens: context.body.report.sentTokens }) as unknown,
      }),
    ]);
  });

  it('compacts on request, lists the summaries and expands one back to its messages', async () => {
    await append('node-7', turns(8));
    const compacted = await server.json<{ readonly summaries: readonly Summary[] }>(
      '/v1/conversations/node-7/compact',
      { method: 'POST' },
    );
    expect(compacted.status).toBe(200);
    expect(compacted.body.summaries.length).toBeGreaterThan(0);

    const summaries = await server.json<ItemsBody<Summary>>('/v1/conversations/node-7/summaries');
    const latest = summaries.body.items.at(-1)!;
    expect(latest).toMatchObject({ conversationId: 'node-7', fromSeq: 1 });
    // A conversation named without a user is its own user: its summaries are read as that user's.
    expect((await server.json(`/v1/summaries/${latest.id}/expand`)).status).toBe(404);
    const expanded = await server.json<MessagesBody>(`/v1/summaries/${latest.id}/expand?user_id=node-7`);
    expect(expanded.status).toBe(200);
    expect(expanded.body.messages.map((message) => message.seq)).toEqual(
      Array.from({ length: latest.toSeq }, (_, index) => index + 1),
    );

    const context = await server.json<ContextBody>('/v1/conversations/node-7/context', {
      json: { policy: 'summary', maxTokens: 400 },
    });
    expect(context.body.report.parts.map((part) => part.kind)).toContain('summary');
    expect((await server.json('/v1/summaries/no-such-summary/expand')).status).toBe(404);
    expect((await server.json('/v1/conversations/missing/compact', { method: 'POST' })).status).toBe(404);
  });

  it('erases a conversation, then a whole user', async () => {
    await append('one', [{ role: 'user', content: 'a' }]);
    await server.json('/v1/conversations/two/messages?user_id=carol', {
      json: {
        messages: [
          { role: 'user', content: 'b' },
          { role: 'assistant', content: 'c' },
        ],
      },
    });
    await server.json('/v1/conversations/three/messages?user_id=carol', {
      json: { messages: [{ role: 'user', content: 'd' }] },
    });

    expect((await server.json('/v1/conversations/one', { method: 'DELETE' })).body).toEqual({
      erased: { conversations: 1, messages: 1 },
    });
    expect((await server.json('/v1/users/carol', { method: 'DELETE' })).body).toEqual({
      erased: { conversations: 2, messages: 3 },
    });
    expect((await server.json<ItemsBody<unknown>>('/v1/conversations')).body.items).toEqual([]);
  });
});

describe('resource API: export and import', () => {
  it('round-trips a conversation through JSONL into another conversation, tool calls included', async () => {
    await append('source', [
      { role: 'user', content: 'Weather at the ridge?', metadata: { node: '!a3f9c2d1' } },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'weather', arguments: '{"at":"ridge"}' } }],
      },
      { role: 'tool', content: 'rain after 14:00, 6 °C', toolCallId: 'call-1' },
      { role: 'assistant', content: 'Rain after 14:00, 6 °C.' },
    ]);
    const exported = await server.request('/v1/export?conversation=source');
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const jsonl = await exported.text();
    expect(jsonl.trim().split('\n')).toHaveLength(4);

    const imported = await server.json('/v1/import?conversation=copy', {
      method: 'POST',
      body: jsonl,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({ conversationId: 'copy', imported: 4, firstSeq: 1, lastSeq: 4 });

    const strip = (items: readonly Record<string, unknown>[]) => items.map(({ id: _id, ...rest }) => rest);
    const source = await server.json<ItemsBody<Record<string, unknown>>>('/v1/conversations/source/messages');
    const copy = await server.json<ItemsBody<Record<string, unknown>>>('/v1/conversations/copy/messages');
    expect(strip(copy.body.items)).toEqual(strip(source.body.items));
  });

  it('rejects the whole import, naming the line, when one line is bad', async () => {
    const good = JSON.stringify({ role: 'user', content: 'fine' });
    const cases = [
      { body: `${good}\n{not json\n`, message: /^line 2: not valid JSON/ },
      { body: `${good}\n${JSON.stringify({ role: 'robot', content: 'x' })}\n`, message: /^line 2\.role: / },
      {
        body: `${good}\n\n${JSON.stringify({ role: 'user', content: '' })}\n`,
        message: /^line 3: content must not be empty/,
      },
      { body: `${good}\n${JSON.stringify({ role: 'tool', content: 'orphan', toolCallId: 'nope' })}\n`, message: /./ },
      { body: '\n\n', message: /no messages/ },
    ];
    for (const { body, message } of cases) {
      const response = await server.json<ErrorBody>('/v1/import?conversation=target', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/x-ndjson' },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.message).toMatch(message);
    }
    expect((await server.json('/v1/conversations/target')).status).toBe(404);
    expect((await server.json('/v1/export?conversation=target')).status).toBe(404);
  });
});
