import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, HashedEmbedder, type Memory } from '@mnemo/core';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@mnemo/models/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountMcpRoutes } from '../src/mcp/index.js';
import { mountProxyRoutes } from '../src/proxy/index.js';
import { createServerApp, startServer, type RunningServer } from '../src/index.js';

// Invariant 5 in the default configuration: no API keys, no X-Mnemo-* headers, every route as a new user
// finds it. End user A (radio node A) tells the bot secrets through the proxy, the seed API, the resource
// API and MCP; end user B then asks through every route that returns memory, and nothing of A comes back.
const secrets = ['Maren', 'LARCH-RIDGE', 'Tromso', '4417', 'A-ONLY-NOTE'];
const userA = 'node-A';
const userB = 'node-B';

let upstream: ScriptedOpenAiServer;
let server: RunningServer;
let memory: Memory;
let directory: string;
const mcpClients: Client[] = [];

beforeAll(async () => {
  upstream = await startScriptedOpenAiServer({ replies: [{ content: 'Noted.' }], repeatLast: true });
  directory = await mkdtemp(join(tmpdir(), 'mnemo-cross-user-'));
  const store = createSqliteStore({ path: join(directory, 'mnemo.db') });
  // Compaction that triggers on these short conversations, heuristic fact and graph extraction, vector recall.
  memory = createMemory({
    store,
    embedder: new HashedEmbedder({ dimensions: 64 }),
    worker: { autoStart: false },
    compaction: { settings: { triggerTokens: 120, keepRecentTokens: 40, keepRecentTurns: 1, maxSummaryTokens: 80 } },
  });
  const app = createServerApp({
    memory,
    logger: pino({ level: 'silent' }),
    llm: { baseUrl: upstream.baseUrl },
    routes: [mountProxyRoutes, mountMcpRoutes],
  });
  server = await startServer({ app, port: 0 });
  await storeSecretsOfA();
  await storeChatterOfB();
  while ((await memory.runPendingJobs()) > 0);
});

afterAll(async () => {
  for (const client of mcpClients.splice(0)) await client.close();
  await server.close();
  await upstream.close();
  await rm(directory, { recursive: true, force: true });
});

const openai = () => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused-without-keys', maxRetries: 0 });

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function mcp(): Promise<Client> {
  const client = new Client({ name: 'cross-user-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  mcpClients.push(client);
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  return JSON.stringify(result);
}

async function storeSecretsOfA(): Promise<void> {
  const said = [
    'My name is Maren and my callsign is LARCH-RIDGE. I live in Tromso. My PIN code is 4417.',
    'I like fishing near Tromso and my sister Ingrid visits on Fridays.',
    'Remember that my PIN code is 4417 and the relay LARCH-RIDGE needs a new battery.',
  ];
  for (const content of said)
    await openai().chat.completions.create({ model: 'm', user: userA, messages: [{ role: 'user', content }] });
  for (const content of said)
    expect((await post('/v1/memory/add', { conversation_id: userA, role: 'user', content })).status).toBe(200);
  expect(
    (
      await post(`/v1/conversations/${userA}/messages`, {
        messages: said.map((content) => ({ role: 'user', content })),
      })
    ).status,
  ).toBe(201);
  const client = await mcp();
  await callTool(client, 'remember', { conversation_id: userA, role: 'user', content: said[0], user_id: userA });
  await callTool(client, 'memory', {
    command: 'create',
    path: '/memories/a.md',
    file_text: 'A-ONLY-NOTE: Maren, PIN 4417',
    user_id: userA,
  });
  // The default MCP user is its own user too: its files must not reach B either.
  await callTool(client, 'memory', {
    command: 'create',
    path: '/memories/default.md',
    file_text: 'A-ONLY-NOTE of the default user',
  });
}

// B's own history is longer than the budgets below, so hybrid contexts carry facts, summary and recall:
// a conversation that fits whole is sent alone and would hide a leak.
const smallBudget = 260;

async function storeChatterOfB(): Promise<void> {
  for (let turn = 0; turn < 8; turn += 1) {
    const content = `Turn ${turn}: what is the weather at the harbour relay today, and is the gateway SNR still around ${turn - 9} dB?`;
    await openai().chat.completions.create({ model: 'm', user: userB, messages: [{ role: 'user', content }] });
    expect((await post('/v1/memory/add', { conversation_id: userB, role: 'user', content })).status).toBe(200);
  }
}

// Generated ids (UUIDs, hex) and numbers with more digits (a recency of 0.4417…, a latency sum) can
// contain the PIN's digits by chance: they are taken out before the check.
const generatedId = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const longerNumber = /\d*\.\d{5,}|\d{5,}/g;

function expectNoSecret(text: string, where: string): void {
  const withoutIds = text.replace(generatedId, '<id>').replace(longerNumber, '<n>');
  for (const secret of secrets) expect(withoutIds, `${where} leaked "${secret}"`).not.toContain(secret);
}

describe('cross-user isolation in the default configuration (no keys, no headers)', () => {
  it('stored A under its own user: the facts and summaries exist, so the sweep below can fail', async () => {
    const facts = await memory.facts.list({ userId: userA });
    expect(facts.map((fact) => fact.value).join(' ')).toContain('Maren');
    expect((await memory.listSummaries({ userId: userA, conversationId: userA })).length).toBeGreaterThan(0);
    expect((await memory.recall({ userId: userA }, 'PIN code')).length).toBeGreaterThan(0);
    expect(
      await memory.memoryTool.run({ tenantId: 'default', userId: userA }, { command: 'view', path: '/memories/a.md' }),
    ).toContain('4417');
  });

  it("sends the upstream nothing of A's for B's proxied requests, streamed or not", async () => {
    const before = upstream.requests.length;
    const question = 'What is my name and my PIN code? Where do I live, and what is my callsign?';
    const budget = { headers: { 'X-Mnemo-Max-Tokens': String(smallBudget) } };
    await openai().chat.completions.create(
      { model: 'm', user: userB, messages: [{ role: 'user', content: question }] },
      budget,
    );
    const stream = await openai().chat.completions.create(
      { model: 'm', user: userB, stream: true, messages: [{ role: 'user', content: `${question} Again.` }] },
      budget,
    );
    for await (const _chunk of stream);
    // A new end user's first turn, with the default budget.
    await openai().chat.completions.create({
      model: 'm',
      user: 'node-C',
      messages: [{ role: 'user', content: question }],
    });
    const sent = upstream.requests.slice(before);
    expect(sent).toHaveLength(3);
    for (const request of sent) expectNoSecret(JSON.stringify(request.body), 'the upstream request for B');
    // The hybrid context had room for memory: the summary of B's own older turns is in it.
    expect(JSON.stringify(sent[0]!.body)).toMatch(/Turn \d/);
    // The new user's first turn costs what its own one-turn history costs.
    expect((sent[2]!.body as { messages: unknown[] }).messages).toHaveLength(1);
  });

  it("answers B's seed and resource context requests, of every policy, without A's memory", async () => {
    for (const memoryType of ['buffer', 'token_buffer', 'summary', 'vector', 'hybrid']) {
      const response = await post('/v1/memory/context', {
        conversation_id: userB,
        max_tokens: smallBudget,
        memory_type: memoryType,
        query: 'name PIN callsign Tromso?',
      });
      expect(response.status).toBe(200);
      expectNoSecret(await response.text(), `seed context (${memoryType})`);
    }
    for (const policy of ['full', 'window', 'token-window', 'summary', 'hybrid']) {
      const response = await post(`/v1/conversations/${userB}/context`, {
        policy,
        maxTokens: smallBudget,
        query: 'name PIN callsign Tromso?',
      });
      expect(response.status).toBe(200);
      expectNoSecret(await response.text(), `resource context (${policy})`);
    }
  });

  it("gives B nothing of A's from any GET route listed in /openapi.json, with A's ids in the path", async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const getRoutes = Object.entries(document.paths)
      .filter(([, operations]) => operations.get !== undefined)
      .map(([path]) => path);
    expect(getRoutes.length).toBeGreaterThanOrEqual(10);
    const summaryId = (await memory.listSummaries({ userId: userA, conversationId: userA }))[0]!.id;
    const entity = (await memory.graph.entities({ userId: userA }))[0]?.name ?? 'Maren';
    let requests = 0;
    for (const template of getRoutes) {
      if (template === '/openapi.json') continue;
      // B names itself (user_id=node-B) or names nobody; the path carries A's conversation, summary and entity.
      for (const user of ['', `user_id=${userB}`]) {
        const path = template
          .replace('{id}', template.startsWith('/v1/summaries') ? summaryId : userB)
          .replace('{conversation_id}', userB)
          .replace('{entity}', encodeURIComponent(entity));
        const required =
          template === '/v1/export'
            ? `conversation=${userB}`
            : template === '/v1/recall'
              ? 'q=Maren%20PIN%20LARCH-RIDGE'
              : '';
        const query = [user, required].filter((part) => part !== '').join('&');
        const response = await fetch(`${server.url}${path}${query === '' ? '' : `?${query}`}`);
        requests += 1;
        expect(response.status, `GET ${path}?${query}`).toBeLessThan(500);
        expectNoSecret(await response.text(), `GET ${path}?${query}`);
      }
    }
    expect(requests).toBeGreaterThanOrEqual(20);
  });

  it("keeps A's facts, recall, entities and summaries from B on the user-level routes, and A's summary unexpandable", async () => {
    const summaryId = (await memory.listSummaries({ userId: userA, conversationId: userA }))[0]!.id;
    for (const path of [`/v1/summaries/${summaryId}/expand`, `/v1/summaries/${summaryId}/expand?user_id=${userB}`]) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(404);
    }
    for (const path of [
      '/v1/facts?history=true',
      `/v1/facts?user_id=${userB}`,
      '/v1/recall?q=PIN%204417',
      `/v1/recall?q=Maren&user_id=${userB}`,
      '/v1/entities',
      `/v1/entities?user_id=${userB}`,
    ]) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(200);
      expectNoSecret(await response.text(), path);
    }
  });

  it("gives B's MCP tools and memory tool nothing of A's", async () => {
    const client = await mcp();
    const asB = { user_id: userB };
    const answers = [
      await callTool(client, 'get_context', {
        conversation_id: userB,
        max_tokens: smallBudget,
        query: 'What is my PIN code?',
        ...asB,
      }),
      await callTool(client, 'get_context', {
        conversation_id: userA,
        max_tokens: smallBudget,
        query: 'What is my PIN code?',
        ...asB,
      }),
      await callTool(client, 'recall', { query: 'Maren PIN LARCH-RIDGE Tromso', ...asB }),
      await callTool(client, 'list_facts', { include_history: true, ...asB }),
      await callTool(client, 'memory', { command: 'view', path: '/memories', ...asB }),
      await callTool(client, 'memory', { command: 'view', path: '/memories/a.md', ...asB }),
    ];
    answers.forEach((answer, index) => expectNoSecret(answer, `MCP call ${index}`));
    const other = await mcp();
    const headerUser = new Client({ name: 'cross-user-test-b', version: '1.0.0' });
    await headerUser.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { 'X-Mnemo-User': userB } },
      }),
    );
    mcpClients.push(headerUser);
    expectNoSecret(
      await callTool(headerUser, 'memory', { command: 'view', path: '/memories' }),
      'MCP memory view as X-Mnemo-User B',
    );
    expectNoSecret(await callTool(headerUser, 'list_facts', {}), 'MCP list_facts as X-Mnemo-User B');
    expect(await callTool(other, 'memory', { command: 'view', path: '/memories' })).toContain('default.md');
  });
});
