import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServerApp, startServer, type RunningServer } from '../index.js';
import { mountMcpRoutes } from './mount-mcp-routes.js';

let server: RunningServer;
let memory: Memory;
let directory: string;
const clients: Client[] = [];

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-mcp-'));
  const store = createSqliteStore({ path: join(directory, 'mnemo.db') });
  memory = createMemory({ store, compaction: false });
  const app = createServerApp({
    memory,
    logger: pino({ level: 'silent' }),
    limits: { rateLimit: false },
    auth: {
      keys: [
        { key: 'key-a', tenantId: 'tenant-a' },
        { key: 'key-b', tenantId: 'tenant-b' },
      ],
    },
    routes: [mountMcpRoutes],
  });
  server = await startServer({ app, port: 0 });
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server.close();
  await rm(directory, { recursive: true, force: true });
});

/** An MCP client of the SDK connected over streamable HTTP with an API key (and optionally a user header). */
async function connect(key: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mnemo-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
    }),
  );
  clients.push(client);
  return client;
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const first = result.content[0];
  return { ...result, text: first?.type === 'text' ? first.text : '' };
}

describe('mountMcpRoutes (streamable HTTP)', () => {
  it('lists the tools with their JSON schemas, the memory tool with the schema core exports plus user_id', async () => {
    const client = await connect('key-a');

    const { tools } = await client.listTools();

    expect(tools.map((tool) => tool.name)).toEqual([
      'remember',
      'get_context',
      'recall',
      'list_facts',
      'forget',
      'correct',
      'memory',
    ]);
    const memoryTool = tools.find((tool) => tool.name === 'memory')!;
    expect(memoryTool.inputSchema).toMatchObject({
      type: 'object',
      required: ['command'],
      properties: {
        command: { enum: ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] },
        user_id: { type: 'string' },
      },
    });
    expect(tools.find((tool) => tool.name === 'remember')!.inputSchema).toMatchObject({
      type: 'object',
      required: ['conversation_id', 'role', 'content'],
    });
  });

  it('remembers messages that get_context then returns with a report, and recall finds them', async () => {
    const client = await connect('key-a');

    const stored = await call(client, 'remember', {
      conversation_id: 'node-7',
      role: 'user',
      content: "I'm Maren, relay LARCH-RIDGE. Battery at 45%.",
    });
    await call(client, 'remember', { conversation_id: 'node-7', role: 'assistant', content: 'Noted, Maren.' });
    const context = await call(client, 'get_context', {
      conversation_id: 'node-7',
      max_tokens: 500,
      system: 'Be brief.',
      policy: 'full',
    });
    const recalled = await call(client, 'recall', { query: 'battery LARCH-RIDGE', conversation_id: 'node-7' });

    expect(stored.isError).toBeFalsy();
    expect(stored.text).toMatch(/^Stored as message 1 of conversation "node-7" \(\d+ tokens\)\.$/);
    const built = context.structuredContent as {
      messages: { role: string; content: string }[];
      report: { sentTokens: number; fullHistoryTokens: number; policy: string };
    };
    expect(built.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: "I'm Maren, relay LARCH-RIDGE. Battery at 45%." },
      { role: 'assistant', content: 'Noted, Maren.' },
    ]);
    expect(built.report.policy).toBe('full');
    expect(built.report.sentTokens).toBeLessThanOrEqual(500);
    expect(JSON.parse(context.text)).toEqual(built);
    expect(recalled.text).toContain('[node-7 #1, user,');
    expect(recalled.text).toContain('Battery at 45%');
  });

  it("files a conversation named without a user under that conversation, as REST does: get_context for the README's node-7 after its curl lines", async () => {
    const client = await connect('key-a');
    const grouped = await connect('key-a', { 'X-Mnemo-User': 'maren' });
    const add = (body: Record<string, unknown>) =>
      fetch(`${server.url}/v1/memory/add`, {
        method: 'POST',
        headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(
      (
        await add({
          conversation_id: 'node-7',
          role: 'user',
          content: "I'm Maren, relay LARCH-RIDGE. Weather tomorrow?",
        })
      ).status,
    ).toBeLessThan(300);
    expect(
      (await add({ conversation_id: 'node-7', role: 'assistant', content: 'Rain after 14:00, 6 °C.' })).status,
    ).toBeLessThan(300);

    const context = await call(client, 'get_context', {
      conversation_id: 'node-7',
      policy: 'summary',
      max_tokens: 1000,
    });
    const recalled = await call(client, 'recall', { query: 'LARCH-RIDGE', conversation_id: 'node-7' });
    await call(client, 'remember', { conversation_id: 'node-7', role: 'user', content: 'And the day after?' });
    const viaRest = await fetch(`${server.url}/v1/memory/context`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
      body: JSON.stringify({ conversation_id: 'node-7', max_tokens: 1000, memory_type: 'buffer' }),
    });
    // A connection that names a user groups its conversations under that user: another node-7.
    const ofMaren = await call(grouped, 'get_context', { conversation_id: 'node-7', policy: 'full' });

    expect(
      (context.structuredContent as { messages: { content: string }[] }).messages.map((message) => message.content),
    ).toEqual(["I'm Maren, relay LARCH-RIDGE. Weather tomorrow?", 'Rain after 14:00, 6 °C.']);
    expect(recalled.text).toContain('[node-7 #1, user,');
    expect(
      ((await viaRest.json()) as { messages: { content: string }[] }).messages.map((message) => message.content).at(-1),
    ).toBe('And the day after?');
    expect((ofMaren.structuredContent as { messages: unknown[] }).messages).toEqual([]);
    expect(
      (await memory.stats({ tenantId: 'tenant-a', userId: 'node-7', conversationId: 'node-7' }))?.messageCount,
    ).toBe(3);
  });

  it("offers the user's memory files and facts as resources, read-only, and -32002 for one that does not exist", async () => {
    const client = await connect('key-a');
    const other = await connect('key-a', { 'X-Mnemo-User': 'olav' });
    await call(client, 'memory', {
      command: 'create',
      path: '/memories/trips/june 2030.md',
      file_text: 'Bergen 14 June',
    });
    await memory.facts.put(
      { tenantId: 'tenant-a' },
      { subject: 'user', attribute: 'home_town', value: 'Bergen', text: 'I live in Bergen.' },
    );
    await call(client, 'memory', { command: 'create', path: '/memories/empty/x.md', file_text: 'x' });
    await call(client, 'memory', { command: 'delete', path: '/memories/empty/x.md' });

    const { resources } = await client.listResources();
    const file = await client.readResource({ uri: 'mnemo://memories/trips/june%202030.md' });
    const facts = await client.readResource({ uri: 'mnemo://facts' });

    expect(resources.map((resource) => resource.uri)).toEqual([
      'mnemo://facts',
      'mnemo://memories/trips/june%202030.md',
    ]);
    expect(resources[1]).toMatchObject({ name: '/memories/trips/june 2030.md', mimeType: 'text/markdown', size: 14 });
    expect(file.contents).toEqual([
      { uri: 'mnemo://memories/trips/june%202030.md', mimeType: 'text/markdown', text: 'Bergen 14 June' },
    ]);
    expect((JSON.parse((facts.contents[0] as { text: string }).text) as { facts: unknown }).facts).toMatchObject([
      { attribute: 'home_town', value: 'Bergen' },
    ]);
    expect((await other.listResources()).resources.map((resource) => resource.uri)).toEqual(['mnemo://facts']);
    await expect(other.readResource({ uri: 'mnemo://memories/trips/june%202030.md' })).rejects.toMatchObject({
      code: -32002,
    });
    await expect(client.readResource({ uri: 'mnemo://memories/../secret' })).rejects.toMatchObject({ code: -32602 });
    await expect(client.readResource({ uri: 'file:///etc/passwd' })).rejects.toMatchObject({ code: -32602 });
  });

  it('lets a model forget and correct facts of its own user only, with history kept and an expiry', async () => {
    const client = await connect('key-a', { 'X-Mnemo-User': 'maren' });
    const other = await connect('key-b', { 'X-Mnemo-User': 'maren' });
    const maren = { tenantId: 'tenant-a', userId: 'maren' };
    const relay = await memory.facts.put(maren, {
      attribute: 'main_relay',
      value: 'LARCH-RIDGE',
      text: 'my main relay is LARCH-RIDGE',
    });
    await memory.facts.put(maren, { attribute: 'likes', value: 'pizza' });
    await memory.facts.put(maren, { attribute: 'likes', value: 'rain' });

    expect((await call(client, 'list_facts', {})).text).toContain(
      `- [${relay.id}] user.main_relay = LARCH-RIDGE (since `,
    );
    // Another tenant's user of the same name has no such fact; a selection that matches two asks for one.
    expect((await call(other, 'correct', { fact_id: relay.id, new_value: 'x' })).text).toMatch(/^not_found:/);
    expect((await call(client, 'correct', { attribute: 'likes', new_value: 'pasta' })).text).toMatch(
      /^conflict: 2 current facts match; name one by fact_id or value/,
    );
    expect((await call(client, 'correct', { attribute: 'likes' })).text).toMatch(/^invalid_input: give new_value/);

    const corrected = await call(client, 'correct', {
      attribute: 'main relay',
      new_value: 'BEAR-CREEK',
      new_text: 'I switched my relay to BEAR-CREEK',
    });
    expect(corrected.text).toMatch(/^Now \[[^\]]+\] user\.main_relay = BEAR-CREEK/);
    expect(
      (await memory.facts.history(maren, { attribute: 'main_relay' })).map((fact) => [
        fact.value,
        fact.validTo === undefined,
      ]),
    ).toEqual([
      ['LARCH-RIDGE', false],
      ['BEAR-CREEK', true],
    ]);
    const expiring = await call(client, 'correct', {
      attribute: 'likes',
      value: 'rain',
      expires_at: '2020-01-01T00:00:00Z',
    });
    expect(expiring.text).toContain('expires 2020-01-01T00:00:00.000Z');
    const forgotten = await call(client, 'forget', { attribute: 'likes', value: 'pizza' });
    expect(forgotten.text).toMatch(/^Retired \[[^\]]+\] user\.likes = pizza/);
    expect((await memory.facts.list(maren)).map((fact) => fact.value)).toEqual(['BEAR-CREEK']);
    expect((await call(client, 'forget', { attribute: 'likes', value: 'pizza' })).text).toMatch(/^not_found:/);
    expect((await call(client, 'forget', {})).text).toMatch(/^invalid_input: name the fact/);
  });

  it('runs the memory tool: create, view, str_replace, rename, delete', async () => {
    const client = await connect('key-a');

    const created = await call(client, 'memory', {
      command: 'create',
      path: '/memories/maren.md',
      file_text: 'Relay: LARCH-RIDGE\nBattery: 45%\n',
    });
    const edited = await call(client, 'memory', {
      command: 'str_replace',
      path: '/memories/maren.md',
      old_str: '45%',
      new_str: '80%',
    });
    const renamed = await call(client, 'memory', {
      command: 'rename',
      old_path: '/memories/maren.md',
      new_path: '/memories/people/maren.md',
    });
    const listing = await call(client, 'memory', { command: 'view', path: '/memories' });
    const viewed = await call(client, 'memory', { command: 'view', path: '/memories/people/maren.md' });
    const deleted = await call(client, 'memory', { command: 'delete', path: '/memories/people' });
    const gone = await call(client, 'memory', { command: 'view', path: '/memories/people/maren.md' });

    expect([created, edited, renamed, listing, viewed, deleted].map((result) => result.isError ?? false)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(created.text).toBe('Created /memories/maren.md (32 bytes).');
    expect(edited.text).toContain('Battery: 80%');
    expect(renamed.text).toBe('Renamed /memories/maren.md to /memories/people/maren.md.');
    expect(listing.text).toContain('32B\t/memories/people/maren.md');
    expect(viewed.text).toContain('     2\tBattery: 80%');
    expect(deleted.text).toBe('Deleted the directory /memories/people (1 file).');
    expect(gone).toMatchObject({ isError: true });
    expect(gone.text).toMatch(/^not_found: \/memories\/people\/maren\.md does not exist/);
  });

  it('refuses path traversal and invalid arguments as tool errors, storing nothing', async () => {
    const client = await connect('key-a');

    const traversal = await call(client, 'memory', {
      command: 'create',
      path: '/memories/../../etc/passwd',
      file_text: 'x',
    });
    const outside = await call(client, 'memory', { command: 'view', path: '/etc' });
    const badArguments = await call(client, 'remember', { conversation_id: '', role: 'robot', content: 'x' });
    const unknownTool = await call(client, 'forget_everything', {});

    expect(traversal).toMatchObject({ isError: true });
    expect(traversal.text).toMatch(
      /^invalid_input: memory path "\/memories\/\.\.\/\.\.\/etc\/passwd" must not contain/,
    );
    expect(outside.text).toMatch(/^invalid_input: memory path "\/etc" must be \/memories or under it/);
    expect(badArguments).toMatchObject({ isError: true });
    expect(badArguments.text).toMatch(/^invalid_input: .*arguments\.conversation_id.*arguments\.role/);
    expect(unknownTool.text).toMatch(/^not_found: no tool named "forget_everything"/);
    expect((await call(client, 'memory', { command: 'view', path: '/memories' })).text).toBe('/memories is empty.');
  });

  it("keeps two tenants' memory files and conversations apart, and users apart within a tenant", async () => {
    const a = await connect('key-a');
    const b = await connect('key-b');
    const otherUser = await connect('key-a', { 'X-Mnemo-User': 'olav' });

    await call(a, 'memory', { command: 'create', path: '/memories/secret.md', file_text: 'tenant a only' });
    await call(a, 'remember', { conversation_id: 'node-7', role: 'user', content: 'secret of tenant a' });

    expect((await call(b, 'memory', { command: 'view', path: '/memories' })).text).toBe('/memories is empty.');
    expect((await call(b, 'memory', { command: 'view', path: '/memories/secret.md' })).text).toMatch(/^not_found:/);
    expect((await call(b, 'memory', { command: 'delete', path: '/memories/secret.md' })).text).toMatch(/^not_found:/);
    expect((await call(b, 'recall', { query: 'secret tenant' })).text).toBe('No stored message matches.');
    expect((await call(otherUser, 'memory', { command: 'view', path: '/memories' })).text).toBe('/memories is empty.');
    // A connection made for olav cannot act for another user by naming it (decision 0037)...
    expect(
      (await call(otherUser, 'memory', { command: 'view', path: '/memories/secret.md', user_id: 'default' })).text,
    ).toMatch(/^invalid_input: .*"olav".*"default"/);
    // ...while a connection without a user acts for the user a call names.
    expect(
      (await call(a, 'memory', { command: 'view', path: '/memories/secret.md', user_id: 'default' })).text,
    ).toContain('tenant a only');
    expect((await call(a, 'memory', { command: 'view', path: '/memories/secret.md' })).text).toContain('tenant a only');
  });

  it('lists facts (none yet) and answers GET with 405 and a request without a key with 401', async () => {
    const client = await connect('key-a');

    expect((await call(client, 'list_facts', {})).text).toBe('No facts stored.');
    expect((await fetch(`${server.url}/mcp`, { headers: { authorization: 'Bearer key-a' } })).status).toBe(405);
    expect(
      (
        await fetch(`${server.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBe(401);
  });
});
