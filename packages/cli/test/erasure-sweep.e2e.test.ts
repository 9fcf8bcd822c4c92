import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, HashedEmbedder, type Memory, type Store } from '@mnemo/core';
import { InMemoryStore } from '@mnemo/core/testing';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@mnemo/models/testing';
import { createPostgresStore } from '@mnemo/postgres';
import { createServerApp, startServer, type RunningServer } from '@mnemo/server';
import { mountInspectorRoutes } from '@mnemo/server/inspect';
import { mountMcpRoutes } from '@mnemo/server/mcp';
import { mountProxyRoutes } from '@mnemo/server/proxy';
import { createSqliteStore } from '@mnemo/sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchemas, freshSchemaUrl, testDatabaseUrl } from './postgres-database.js';

// The erasure sweep, in the style of the cross-user sweep: user A says a unique phrase once (and a
// memory-tool call of the bot writes it into a file); after compaction, extraction and embedding have
// made summaries, facts, relations, vectors and files of it, A erases those messages (a seq range through
// the REST API). Then no route that returns memory — contexts of every policy, recall, facts, entities and
// relations, summaries, memory files, export, inspector pages, MCP answers, /metrics — holds the phrase,
// nor (SQLite) do the database file and its WAL; B's memory is untouched.
const phrase = 'QUOKKA7731';
const userA = 'node-A';
const userB = 'node-B';

interface Fixture {
  readonly name: string;
  readonly open: () => Promise<{ store: Store; files?: () => Promise<Buffer[]>; cleanup: () => Promise<void> }>;
}

const fixtures: Fixture[] = [
  { name: 'in-memory', open: async () => ({ store: new InMemoryStore(), cleanup: async () => {} }) },
  {
    name: 'SQLite file',
    open: async () => {
      const directory = await mkdtemp(join(tmpdir(), 'mnemo-erasure-'));
      const path = join(directory, 'mnemo.db');
      const files = async () =>
        Promise.all([path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFile(file)));
      return {
        store: createSqliteStore({ path }),
        files,
        cleanup: () => rm(directory, { recursive: true, force: true }),
      };
    },
  },
  ...(testDatabaseUrl === undefined
    ? []
    : [
        {
          name: 'PostgreSQL',
          open: async () => {
            const database = testDatabaseUrl!;
            const { schema, url } = freshSchemaUrl(database);
            const store = await createPostgresStore({ connectionString: database, schema });
            return { store, cleanup: () => dropSchemas(url.split('?')[0]!, [schema]) };
          },
        },
      ]),
];

for (const fixture of fixtures) {
  describe(`erasure sweep on ${fixture.name}`, () => {
    let upstream: ScriptedOpenAiServer;
    let server: RunningServer;
    let memory: Memory;
    let opened: Awaited<ReturnType<Fixture['open']>>;
    const clients: Client[] = [];

    beforeAll(async () => {
      upstream = await startScriptedOpenAiServer({ replies: [{ content: 'Noted.' }], repeatLast: true });
      opened = await fixture.open();
      memory = createMemory({
        store: opened.store,
        embedder: new HashedEmbedder({ dimensions: 64 }),
        worker: { autoStart: false },
        compaction: {
          settings: { triggerTokens: 120, keepRecentTokens: 40, keepRecentTurns: 1, maxSummaryTokens: 120 },
        },
      });
      const app = createServerApp({
        memory,
        logger: pino({ level: 'silent' }),
        llm: { baseUrl: upstream.baseUrl },
        routes: [mountProxyRoutes, mountMcpRoutes, mountInspectorRoutes],
      });
      server = await startServer({ app, port: 0 });
      await seed();
    }, 60_000);

    afterAll(async () => {
      for (const client of clients.splice(0)) await client.close();
      await server?.close();
      await upstream?.close();
      await memory?.close();
      await opened?.cleanup();
    });

    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const text = async (path: string) => {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBeLessThan(500);
      return response.text();
    };

    async function mcp(): Promise<Client> {
      const client = new Client({ name: 'erasure-sweep', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      clients.push(client);
      return client;
    }

    async function seed(): Promise<void> {
      const before = ['My name is Maren and I live in Tromso.', 'I like fishing near the fjord on Fridays.'];
      const secret = `My callsign is ${phrase} and I use the relay ${phrase} on the ridge.`;
      const call = {
        id: 'call-1',
        type: 'function',
        function: {
          name: 'memory',
          arguments: JSON.stringify({
            command: 'create',
            path: '/memories/callsign.md',
            file_text: `callsign ${phrase}`,
          }),
        },
      };
      const after = [
        'The weather on the ridge was clear today and the solar panel charged well.',
        'My battery pack holds 10000 mAh and lasts three days in the cold.',
        'Tomorrow I will hike to the lookout with Ingrid and bring the spare antenna.',
        'The gateway at the harbour restarted twice last night after the storm.',
        'Ingrid says the mesh map shows twelve nodes around the fjord this week.',
      ];
      const messages = [
        ...before.map((content) => ({ role: 'user', content })),
        { role: 'user', content: secret },
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', toolCallId: 'call-1', content: 'File created.' },
        ...after.map((content) => ({ role: 'user', content })),
      ];
      expect((await post(`/v1/conversations/${userA}/messages`, { messages })).status).toBe(201);
      await memory.memoryTool.run(
        { tenantId: 'default', userId: userA },
        { command: 'create', path: '/memories/callsign.md', file_text: `callsign ${phrase}` },
      );
      await memory.memoryTool.run(
        { tenantId: 'default', userId: userA },
        { command: 'create', path: '/memories/other.md', file_text: 'Maren fishes on Fridays' },
      );
      for (let turn = 0; turn < 6; turn += 1) {
        expect(
          (
            await post(`/v1/conversations/${userB}/messages`, {
              messages: [{ role: 'user', content: `Turn ${turn}: the harbour relay SNR is ${turn - 9} dB.` }],
            })
          ).status,
        ).toBe(201);
      }
      while ((await memory.runPendingJobs()) > 0);
    }

    async function everything(): Promise<string[]> {
      const client = await mcp();
      const tool = async (name: string, args: Record<string, unknown>) =>
        JSON.stringify(await client.callTool({ name, arguments: { user_id: userA, ...args } }));
      const answers: string[] = [];
      for (const policy of ['full', 'window', 'token-window', 'summary', 'hybrid']) {
        answers.push(
          await (
            await post(`/v1/conversations/${userA}/context`, {
              policy,
              maxTokens: 400,
              query: `callsign relay ${phrase}?`,
            })
          ).text(),
        );
      }
      for (const memoryType of ['buffer', 'token_buffer', 'summary', 'vector', 'hybrid']) {
        answers.push(
          await (
            await post('/v1/memory/context', {
              conversation_id: userA,
              user_id: userA,
              max_tokens: 400,
              memory_type: memoryType,
              query: `callsign ${phrase}?`,
            })
          ).text(),
        );
      }
      const summaries = await memory.listSummaries({ userId: userA, conversationId: userA });
      answers.push(
        JSON.stringify(summaries),
        await text(`/v1/recall?q=callsign%20${phrase}&user_id=${userA}`),
        await text(`/v1/facts?history=true&user_id=${userA}`),
        await text(`/v1/entities?user_id=${userA}`),
        JSON.stringify(
          await Promise.all(
            (await memory.graph.entities({ userId: userA })).map((entity) =>
              memory.graph.neighbours({ userId: userA }, entity.id, 3, { includeHistory: true }),
            ),
          ),
        ),
        await text(`/v1/conversations/${userA}/messages?user_id=${userA}`),
        await text(`/v1/export?conversation=${userA}&user_id=${userA}`),
        await text(`/inspect/fragments/conversation/${userA}/${userA}`),
        await text(`/inspect/fragments/facts/${userA}`),
        await text(`/inspect/fragments/context/${userA}/${userA}?policy=hybrid&maxTokens=400`),
        ...(await Promise.all(summaries.map((summary) => text(`/inspect/fragments/summary/${userA}/${summary.id}`)))),
        await tool('get_context', { conversation_id: userA, max_tokens: 400, query: `What is my callsign ${phrase}?` }),
        await tool('recall', { query: `callsign ${phrase}` }),
        await tool('list_facts', { include_history: true }),
        await tool('memory', { command: 'view', path: '/memories' }),
        await memory.memoryTool
          .run({ tenantId: 'default', userId: userA }, { command: 'view', path: '/memories/callsign.md' })
          .catch((error: unknown) => String(error)),
        await text('/metrics'),
      );
      return answers;
    }

    it('erases a seq range with the phrase from every route, the summaries re-derived from what remains, and leaves B alone', async () => {
      // The sweep can fail: the phrase is in summaries, facts, recall and a memory file before the erase.
      expect(JSON.stringify(await memory.listSummaries({ userId: userA, conversationId: userA }))).toContain(phrase);
      expect(JSON.stringify(await memory.facts.history({ userId: userA }))).toContain(phrase);
      expect(
        (await memory.recall({ userId: userA }, `callsign ${phrase}`)).map((hit) => hit.message.content).join(' '),
      ).toContain(phrase);
      expect((await everything()).join('\n')).toContain(phrase);
      const bBefore = await memory.listMessages({ userId: userB, conversationId: userB });

      const response = await post(`/v1/conversations/${userA}/erase`, { userId: userA, fromSeq: 3, toSeq: 5 });
      expect(response.status).toBe(200);
      const { erased } = (await response.json()) as { erased: Record<string, number> };
      expect(erased).toMatchObject({ messages: 3, conversations: 1, memoryFiles: 1 });
      expect(erased['vectors']).toBeGreaterThanOrEqual(1);
      expect(erased['summaries']).toBeGreaterThanOrEqual(1);
      expect(erased['facts']).toBeGreaterThanOrEqual(1);
      while ((await memory.runPendingJobs()) > 0);

      for (const [index, answer] of (await everything()).entries())
        expect(answer, `answer ${index}`).not.toContain(phrase);
      // What remains is summarized again, and the facts of the other messages are still there.
      const summaries = await memory.listSummaries({ userId: userA, conversationId: userA });
      expect(summaries.length).toBeGreaterThan(0);
      expect(summaries.at(-1)!.content).toMatch(/Maren|Tromso|fishing/);
      expect(JSON.stringify(await memory.facts.list({ userId: userA }))).toContain('Maren');
      expect(
        await memory.memoryTool.run(
          { tenantId: 'default', userId: userA },
          { command: 'view', path: '/memories/other.md' },
        ),
      ).toContain('Maren');
      expect(await memory.listMessages({ userId: userB, conversationId: userB })).toEqual(bBefore);
      const audit = await (await fetch(`${server.url}/v1/users/${userA}/erasures`)).json();
      expect(JSON.stringify(audit)).toContain('"fromSeq":3');
      expect(JSON.stringify(audit)).not.toContain(phrase);
      if (opened.files !== undefined) {
        for (const bytes of await opened.files())
          expect(bytes.includes(Buffer.from(phrase)), 'the database file or WAL holds the phrase').toBe(false);
      }
    }, 60_000);
  });
}
