import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, HashedEmbedder, type Memory } from '@mnemo/core';
import {
  startScriptedAnthropicServer,
  startScriptedOpenAiServer,
  type ScriptedAnthropicServer,
  type ScriptedOpenAiServer,
} from '@mnemo/models/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountMcpRoutes } from '../src/mcp/index.js';
import { mountProxyRoutes } from '../src/proxy/index.js';
import { createServerApp, startServer, type RunningServer } from '../src/index.js';

// Decision 0037: one rule of who the user is, on every edge of a real server. Every place a caller names
// a user (X-Mnemo-User, a body field, a query parameter, the MCP connection, a tool call's user_id) must
// name the same one; two different ids are refused with invalid_input and store nothing. Named by none,
// a conversation is its own user; a user-level call without a user is "default".

let upstream: ScriptedOpenAiServer;
let anthropicUpstream: ScriptedAnthropicServer;
let server: RunningServer;
let memory: Memory;
let directory: string;
const clients: Client[] = [];

beforeAll(async () => {
  upstream = await startScriptedOpenAiServer({ replies: [{ content: 'Noted.' }], repeatLast: true });
  anthropicUpstream = await startScriptedAnthropicServer({ replies: [{ content: 'Noted.' }] });
  directory = await mkdtemp(join(tmpdir(), 'mnemo-one-user-rule-'));
  memory = createMemory({
    store: createSqliteStore({ path: join(directory, 'mnemo.db') }),
    embedder: new HashedEmbedder({ dimensions: 64 }),
    worker: { autoStart: false },
  });
  const app = createServerApp({
    memory,
    logger: pino({ level: 'silent' }),
    llm: { baseUrl: upstream.baseUrl },
    anthropic: { baseUrl: anthropicUpstream.baseUrl },
    routes: [mountProxyRoutes, mountMcpRoutes],
  });
  server = await startServer({ app, port: 0 });
});

afterAll(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server.close();
  await upstream.close();
  await anthropicUpstream.close();
  await memory.close();
  await rm(directory, { recursive: true, force: true });
});

async function send(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function expectRefused(response: Response, ...named: string[]): Promise<void> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('invalid_input');
  for (const id of named) expect(body.error.message).toContain(JSON.stringify(id));
}

async function mcp(user?: string): Promise<Client> {
  const client = new Client({ name: 'one-user-rule-test', version: '1.0.0' });
  const requestInit = user === undefined ? undefined : { headers: { 'X-Mnemo-User': user } };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), requestInit === undefined ? {} : { requestInit }),
  );
  clients.push(client);
  return client;
}

describe('one rule for who the user is', () => {
  it("proxy: X-Mnemo-User and the body's user naming two users is refused, nothing stored and nothing sent upstream", async () => {
    const before = upstream.requests.length;
    const chat = { model: 'm', messages: [{ role: 'user', content: 'hello from the relay' }] };
    await expectRefused(
      await send('POST', '/v1/chat/completions', { ...chat, user: 'node-1' }, { 'X-Mnemo-User': 'node-2' }),
      'node-1',
      'node-2',
    );
    await expectRefused(
      await send('POST', '/v1/responses', { model: 'm', input: 'hello', user: 'node-1' }, { 'X-Mnemo-User': 'node-2' }),
      'node-1',
      'node-2',
    );
    await expectRefused(
      await send(
        'POST',
        '/v1/messages',
        { model: 'm', max_tokens: 20, messages: [{ role: 'user', content: 'hello' }], metadata: { user_id: 'node-1' } },
        { 'X-Mnemo-User': 'node-2' },
      ),
      'node-1',
      'node-2',
    );
    expect(upstream.requests.length).toBe(before);
    expect(anthropicUpstream.requests.length).toBe(0);
    expect(await memory.stats({ userId: 'node-1', conversationId: 'node-1' })).toBeUndefined();
    expect(await memory.stats({ userId: 'node-2', conversationId: 'node-2' })).toBeUndefined();

    // The same user named in both places is one user, not a conflict.
    expect(
      (await send('POST', '/v1/chat/completions', { ...chat, user: 'node-1' }, { 'X-Mnemo-User': 'node-1' })).status,
    ).toBe(200);
    expect((await memory.stats({ userId: 'node-1', conversationId: 'node-1' }))?.messageCount).toBe(2);
  });

  it('seed API: honours X-Mnemo-User like every route, and refuses a user_id that names another user', async () => {
    const added = await send(
      'POST',
      '/v1/memory/add',
      { conversation_id: 'chat-9', role: 'user', content: 'my relay is on the ridge' },
      { 'X-Mnemo-User': 'alice' },
    );
    expect(added.status).toBe(200);
    expect((await memory.stats({ userId: 'alice', conversationId: 'chat-9' }))?.messageCount).toBe(1);
    expect(await memory.stats({ userId: 'chat-9', conversationId: 'chat-9' })).toBeUndefined();

    await expectRefused(
      await send(
        'POST',
        '/v1/memory/add',
        { conversation_id: 'chat-9', role: 'user', content: 'lost?', user_id: 'bob' },
        { 'X-Mnemo-User': 'alice' },
      ),
      'alice',
      'bob',
    );
    await expectRefused(
      await send('GET', '/v1/memory/chat-9/stats?user_id=bob', undefined, { 'X-Mnemo-User': 'alice' }),
      'alice',
      'bob',
    );
    await expectRefused(
      await send('DELETE', '/v1/memory/chat-9?user_id=bob', undefined, { 'X-Mnemo-User': 'alice' }),
      'alice',
      'bob',
    );
    expect((await memory.stats({ userId: 'alice', conversationId: 'chat-9' }))?.messageCount).toBe(1);
  });

  it('resource API: the query, the body and the header must agree', async () => {
    await expectRefused(
      await send('GET', '/v1/facts?user_id=bob', undefined, { 'X-Mnemo-User': 'alice' }),
      'alice',
      'bob',
    );
    await expectRefused(
      await send('GET', '/v1/conversations/chat-9/messages?user_id=bob', undefined, { 'X-Mnemo-User': 'alice' }),
      'alice',
      'bob',
    );
    const listed = await send('GET', '/v1/conversations/chat-9/messages', undefined, { 'X-Mnemo-User': 'alice' });
    expect(listed.status).toBe(200);
  });

  it("MCP: a call naming a user other than the connection's is refused; a conversation named alone is its own user", async () => {
    const asAlice = await mcp('alice');
    const refused = await asAlice.callTool({ name: 'list_facts', arguments: { user_id: 'bob' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('invalid_input');
    const remember = await asAlice.callTool({
      name: 'remember',
      arguments: { conversation_id: 'chat-9', role: 'user', content: 'x', user_id: 'bob' },
    });
    expect(remember.isError).toBe(true);
    expect(await memory.stats({ userId: 'bob', conversationId: 'chat-9' })).toBeUndefined();
    expect((await asAlice.callTool({ name: 'list_facts', arguments: { user_id: 'alice' } })).isError).toBeFalsy();

    // node-7 stored through the seed API without a user is user node-7; MCP with no user finds it.
    expect(
      (
        await send('POST', '/v1/memory/add', {
          conversation_id: 'node-7',
          role: 'user',
          content: 'battery at 3.9 volts',
        })
      ).status,
    ).toBe(200);
    const anonymous = await mcp();
    const context = await anonymous.callTool({ name: 'get_context', arguments: { conversation_id: 'node-7' } });
    expect(context.isError).toBeFalsy();
    expect(JSON.stringify(context.content)).toContain('battery at 3.9 volts');
    const recalled = await anonymous.callTool({
      name: 'recall',
      arguments: { query: 'battery volts', conversation_id: 'node-7' },
    });
    expect(JSON.stringify(recalled.content)).toContain('battery at 3.9 volts');
  });
});
