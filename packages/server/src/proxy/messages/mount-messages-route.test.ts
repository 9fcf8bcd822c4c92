import Anthropic from '@anthropic-ai/sdk';
import {
  startScriptedAnthropicServer,
  type ScriptedAnthropicServer,
  type ScriptedMessagesReply,
} from '@mnemo/models/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson, startProxyApp, type ProxyApp } from '../../../test/start-proxy-app.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(
  replies: readonly ScriptedMessagesReply[],
  anthropic: { apiKey?: string; passClientKey?: boolean } = { apiKey: 'sk-ant-up' },
): Promise<{ upstream: ScriptedAnthropicServer; app: ProxyApp; client: Anthropic }> {
  const upstream = await startScriptedAnthropicServer({ replies });
  cleanups.push(() => upstream.close());
  const app = await startProxyApp({ anthropic: { baseUrl: upstream.baseUrl, ...anthropic } });
  cleanups.push(() => app.close());
  return { upstream, app, client: new Anthropic({ baseURL: app.url, apiKey: 'sk-ant-client', maxRetries: 0 }) };
}

const weather: Anthropic.Tool = {
  name: 'weather',
  input_schema: { type: 'object', properties: { city: { type: 'string' } } },
};

describe('POST /v1/messages', () => {
  it('stores a tool round trip once, puts breakpoints on the system prompt and the stable end, and records cache reads and writes', async () => {
    const { upstream, app, client } = await start([
      { content: 'Let me check.', toolCalls: [{ id: 'toolu_1', name: 'weather', arguments: '{"city": "Oslo"}' }] },
      { content: 'Sunny in Oslo.' },
    ]);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const body = {
      model: 'claude-x',
      max_tokens: 100,
      system: 'You are brief.',
      tools: [weather],
      metadata: { user_id: 'oslo-fan' },
    };

    const first = await client.messages.create({ ...body, messages });
    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
    );
    const second = await client.messages.stream({ ...body, messages }).finalMessage();

    expect(second.content).toEqual([{ type: 'text', text: 'Sunny in Oslo.' }]);
    expect(second.usage.cache_read_input_tokens).toBeGreaterThan(0);
    const stored = await app.stored('oslo-fan');
    expect(
      stored.map((message) => [
        message.role,
        message.content,
        message.toolCalls?.[0]?.function.arguments ?? message.toolCallId ?? null,
      ]),
    ).toEqual([
      ['user', 'Weather in Oslo?', null],
      ['assistant', 'Let me check.', '{"city":"Oslo"}'],
      ['tool', 'sunny', 'toolu_1'],
      ['assistant', 'Sunny in Oslo.', null],
    ]);
    expect(stored[1]!.metadata).toMatchObject({
      proxy: {
        finishReason: 'tool_use',
        ids: [first.id],
        usage: { cachedInputTokens: 0, cacheWriteInputTokens: expect.any(Number) as unknown },
      },
    });
    expect(stored[3]!.metadata).toMatchObject({
      proxy: {
        usage: {
          cachedInputTokens: second.usage.cache_read_input_tokens,
          cacheWriteInputTokens: second.usage.cache_creation_input_tokens,
        },
      },
    });
    const sent = upstream.requests.at(-1)!.body as {
      system: unknown;
      messages: { role: string; content: Record<string, unknown>[] }[];
    };
    expect(sent.system).toEqual([{ type: 'text', text: 'You are brief.', cache_control: { type: 'ephemeral' } }]);
    // Stable: everything before the newest user turn, which is the first message here; the breakpoint is on the system prompt only.
    expect(sent.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent.messages[1]!.content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } },
    ]);
    expect(upstream.requests.at(-1)!.headers['x-api-key']).toBe('sk-ant-up');
  });

  it("places the stable part's breakpoint on the last turn before the newest user turn", async () => {
    const { upstream, client } = await start([{ content: 'One.' }, { content: 'Two.' }, { content: 'Three.' }]);
    const body = { model: 'claude-x', max_tokens: 100, metadata: { user_id: 'two-turns' } };

    await client.messages.create({ ...body, messages: [{ role: 'user', content: 'First?' }] });
    await client.messages.create({
      ...body,
      messages: [
        { role: 'user', content: 'First?' },
        { role: 'assistant', content: 'One.' },
        { role: 'user', content: 'Second?' },
      ],
    });

    const sent = upstream.requests.at(-1)!.body as {
      system?: unknown;
      messages: { role: string; content: Record<string, unknown>[] }[];
    };
    expect(sent.system).toBeUndefined();
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'First?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'One.', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: [{ type: 'text', text: 'Second?' }] },
    ]);
    // No system prompt here: what the third request reads from the cache, the stable part's breakpoint wrote.
    const third = await client.messages.create({
      ...body,
      messages: [
        { role: 'user', content: 'First?' },
        { role: 'assistant', content: 'One.' },
        { role: 'user', content: 'Second?' },
        { role: 'assistant', content: 'Two.' },
        { role: 'user', content: 'Third?' },
      ],
    });
    expect(third.usage.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it("never sends the client's key upstream unless asked, and then its own x-api-key", async () => {
    const { upstream, app } = await start([{ content: 'a' }, { content: 'b' }], {});
    const request = {
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      metadata: { user_id: 'keyless' },
    };

    const answer = await postJson(`${app.url}/v1/messages`, request, { 'x-api-key': 'sk-ant-client' });

    expect(Number(answer.headers.get('x-mnemo-tokens-sent'))).toBeGreaterThan(0);
    expect(upstream.requests[0]!.headers['x-api-key']).toBeUndefined();
    expect(upstream.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');

    const { upstream: passing, app: passingApp } = await start([{ content: 'c' }], { passClientKey: true });
    await postJson(`${passingApp.url}/v1/messages`, request, {
      'x-api-key': 'sk-ant-client',
      'anthropic-version': '2024-01-01',
    });
    expect(passing.requests[0]!.headers['x-api-key']).toBe('sk-ant-client');
    expect(passing.requests[0]!.headers['anthropic-version']).toBe('2024-01-01');
  });

  it("takes the mnemo key as the SDK's authToken on a server with keys, and never passes it on as x-api-key", async () => {
    const upstream = await startScriptedAnthropicServer({ replies: [{ content: 'ok' }] });
    cleanups.push(() => upstream.close());
    const app = await startProxyApp({
      anthropic: { baseUrl: upstream.baseUrl, passClientKey: true },
      auth: { keys: [{ key: 'mnemo-key-1', tenantId: 'mesh' }] },
    });
    cleanups.push(() => app.close());
    // A careless client sends its mnemo key in x-api-key as well.
    const client = new Anthropic({
      baseURL: app.url,
      authToken: 'mnemo-key-1',
      defaultHeaders: { 'x-api-key': 'mnemo-key-1' },
      maxRetries: 0,
    });

    const message = await client.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      metadata: { user_id: 'keyed' },
    });

    expect(message.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(upstream.requests[0]!.headers['x-api-key']).toBeUndefined();
    expect(upstream.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('refuses an image block with 400 and stores nothing; answers 503 without an upstream', async () => {
    const { app } = await start([{ content: 'unused' }]);

    const image = await postJson(`${app.url}/v1/messages`, {
      model: 'claude-x',
      max_tokens: 10,
      metadata: { user_id: 'pics' },
      messages: [
        {
          role: 'user',
          content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }],
        },
      ],
    });
    expect(image.status).toBe(400);
    expect(await app.stored('pics')).toEqual([]);

    const bare = await startProxyApp({});
    cleanups.push(() => bare.close());
    const unavailable = await postJson(`${bare.url}/v1/messages`, {
      model: 'claude-x',
      max_tokens: 10,
      metadata: { user_id: 'pics' },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(unavailable.status).toBe(503);
    expect(((await unavailable.json()) as { error: { message: string } }).error.message).toMatch(
      /MNEMO_ANTHROPIC_BASE_URL/,
    );
  });

  it('ends a stream the upstream breaks off with an error event the Anthropic SDK raises, and stores the partial reply marked incomplete', async () => {
    const { app, client } = await start([{ content: 'alpha beta gamma', breakAfterChunks: 1 }]);

    await expect(
      client.messages
        .stream({
          model: 'claude-x',
          max_tokens: 10,
          messages: [{ role: 'user', content: 'go' }],
          metadata: { user_id: 'cut' },
        })
        .finalMessage(),
    ).rejects.toThrow(/broke off/);

    await expect.poll(async () => (await app.stored('cut')).length).toBe(2);
    expect((await app.stored('cut'))[1]).toMatchObject({
      content: 'alpha ',
      metadata: { proxy: { incomplete: true } },
    });
  });
});
