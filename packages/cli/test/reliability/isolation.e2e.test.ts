import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@mnemo/models/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkDirectory } from '../run-mnemo.js';
import { routesOf } from './bad-requests.js';
import { recordFigures } from './reliability-figures.js';
import { startServe, waitFor, tearDown, type ServedMnemo } from './served-mnemo.js';

// Isolation sweeps (issue 12): tenant A's data (a conversation of user alice with a secret, its summary,
// a fact, a memory file) against every route of /openapi.json, the MCP tools and the proxy's upstream
// request, asked by tenant B (another API key) and by another user of tenant A (a user header, or no
// header: the defaults). Zero reads, zero writes, and no existence oracle: a real id of someone else
// gets the same status and body as a made-up one. Then every auth variant that is not a valid key.
const keyA = 'key-a-7f3d9c21';
const keyB = 'key-b-41e8aa07';
const secret = 'ALICE-SECRET-4242';
const real = { conversation: 'alice-radio', user: 'alice', summary: '', fact: '', entity: 'hood river' };
const madeUp = {
  conversation: 'nobody-radio',
  user: 'nobody',
  summary: '00000000-0000-4000-8000-000000000000',
  fact: '00000000-0000-4000-8000-000000000001',
  entity: 'nowhere land',
};

let work: { path: string; remove: () => Promise<void> };
let served: ServedMnemo;
let upstream: ScriptedOpenAiServer;

async function call(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${served.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text() };
}

const asA = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${keyA}`, ...extra });

/** A snapshot of tenant A's data about alice, read with A's key: what no other caller may change. */
async function snapshotOfAlice(): Promise<string> {
  const user = { 'x-mnemo-user': real.user };
  const parts = await Promise.all([
    call('GET', `/v1/export?conversation=${real.conversation}&user_id=${real.user}`, asA()),
    call('GET', `/v1/conversations/${real.conversation}/summaries?user_id=${real.user}`, asA()),
    call('GET', `/v1/facts?user_id=${real.user}`, asA()),
    call('GET', `/v1/conversations?user_id=${real.user}`, asA(user)),
  ]);
  return parts.map((part) => `${part.status} ${part.text.replace(/"updatedAt":"[^"]+"/g, '')}`).join('\n');
}

/** The same body for a real id and a made-up one, once each id's text is replaced by a placeholder. */
function normalized(text: string, ids: typeof real): string {
  let result = text;
  for (const [name, value] of Object.entries(ids))
    if (value !== '') result = result.split(value).join(`<${name}>`).split(encodeURIComponent(value)).join(`<${name}>`);
  return result
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/chatcmpl-scripted-\d+/g, '<completion>')
    .replace(/"created":\d+/g, '"created":0');
}

/** Fills a route's path parameters (and the queries that name a user or conversation) with one set of ids. */
function requestPath(path: string, ids: typeof real): string {
  const filled = path
    .replace('{conversation_id}', ids.conversation)
    .replace(
      '{id}',
      path.startsWith('/v1/summaries') ? ids.summary : path.startsWith('/v1/facts') ? ids.fact : ids.conversation,
    )
    .replace('{userId}', ids.user)
    .replace('{entity}', encodeURIComponent(ids.entity))
    .replace('{summaryId}', ids.summary)
    .replace('{conversationId}', ids.conversation);
  const query = new URLSearchParams({
    user_id: ids.user,
    conversation: ids.conversation,
    query: 'where does alice live',
    q: secret,
    search: ids.conversation,
    user: ids.user,
  });
  return `${filled}?${query.toString()}`;
}

/** A body for each route that takes one, naming the given ids. */
function requestBody(method: string, path: string, ids: typeof real): unknown {
  if (method === 'PATCH' && path === '/v1/facts/{id}')
    return { userId: ids.user, value: 'probe', expiresAt: '2020-01-01T00:00:00Z' };
  if (method !== 'POST') return undefined;
  if (path === '/v1/memory/add')
    return { conversation_id: ids.conversation, role: 'user', content: 'probe', user_id: ids.user };
  if (path === '/v1/memory/context')
    return { conversation_id: ids.conversation, max_tokens: 500, user_id: ids.user, query: 'where does alice live' };
  if (path.endsWith('/messages')) return { messages: [{ role: 'user', content: 'probe' }] };
  if (path.endsWith('/context')) return { maxTokens: 500, query: 'where does alice live' };
  if (path === '/v1/facts')
    return { userId: ids.user, subject: 'user', attribute: 'probe', value: 'probe', text: 'probe' };
  if (path === '/mcp')
    return {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'recall', arguments: { query: secret, user_id: ids.user } },
    };
  if (path === '/v1/chat/completions')
    return { model: 'iso-model', user: ids.user, messages: [{ role: 'user', content: 'what do you know about me?' }] };
  return {};
}

beforeAll(async () => {
  work = await makeWorkDirectory();
  upstream = await startScriptedOpenAiServer({
    replies: [{ content: 'I know only what you sent.' }],
    repeatLast: true,
  });
  await writeFile(
    join(work.path, 'mnemo.config.json'),
    JSON.stringify({ llm: { baseUrl: upstream.baseUrl, model: 'iso-model' }, server: { rateLimit: false } }),
  );
  served = await startServe(['--db', join(work.path, 'isolation.db'), '--workers', '1'], {
    cwd: work.path,
    env: { MNEMO_API_KEYS: `${keyA}:tenant-a,${keyB}:tenant-b` },
  });

  // Tenant A, user alice: messages with the secret, a summary, a fact, a memory file, a proxied turn.
  const user = { 'x-mnemo-user': real.user };
  const lines = Array.from({ length: 12 }, (_, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: `${secret}: I live in Hood River and my relay is node ${index}.`,
  }));
  expect(
    (await call('POST', `/v1/conversations/${real.conversation}/messages`, asA(user), { messages: lines })).status,
  ).toBe(201);
  const compacted = await call('POST', `/v1/conversations/${real.conversation}/compact`, asA(user), {});
  expect(compacted.status).toBe(200);
  real.summary = (JSON.parse(compacted.text) as { summaries: { id: string }[] }).summaries[0]!.id;
  const fact = await call('POST', '/v1/facts', asA(), {
    userId: real.user,
    subject: 'user',
    attribute: 'home_town',
    value: 'Hood River',
    text: `${secret} lives in Hood River`,
  });
  expect(fact.status).toBe(200);
  real.fact = (JSON.parse(fact.text) as { fact: { id: string } }).fact.id;
  const mcp = await connectMcp(keyA);
  await mcp.callTool({
    name: 'memory',
    arguments: { command: 'create', path: '/memories/alice.md', file_text: `${secret} notes`, user_id: real.user },
  });
  await mcp.close();
  expect(
    (
      await call('POST', '/v1/chat/completions', asA(), {
        model: 'iso-model',
        user: real.user,
        messages: [{ role: 'user', content: `${secret}: remember my call sign` }],
      })
    ).status,
  ).toBe(200);
  // Alice's background jobs (embedding, fact extraction) finish before the sweep's first snapshot.
  const store = createSqliteStore({ path: join(work.path, 'isolation.db') });
  const aliceJobs = async () =>
    (
      await Promise.all(
        [real.conversation, real.user].map((conversationId) =>
          store.listJobs({ tenantId: 'tenant-a', userId: real.user, conversationId }),
        ),
      )
    ).flat();
  await waitFor(async () => (await aliceJobs()).every((job) => job.status === 'done'), 30_000, "alice's jobs").finally(
    () => store.close(),
  );
}, 60_000);

afterAll(() => tearDown({ served, upstream, work }), 60_000);

async function connectMcp(key: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mnemo-isolation', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
    }),
  );
  return client;
}

/** Every MCP tool asked for alice's data; returns the texts of the results. */
async function mcpProbes(client: Client, ids: typeof real): Promise<string[]> {
  const calls: [string, Record<string, unknown>][] = [
    ['get_context', { conversation_id: ids.conversation, user_id: ids.user, query: 'where does alice live' }],
    ['recall', { query: secret, user_id: ids.user }],
    ['recall', { query: 'Hood River relay', conversation_id: ids.conversation }],
    ['list_facts', { user_id: ids.user, include_history: true }],
    ['memory', { command: 'view', path: '/memories', user_id: ids.user }],
    ['memory', { command: 'view', path: `/memories/${ids.user}.md`, user_id: ids.user }],
    ['memory', { command: 'view', path: '/memories' }],
  ];
  const texts: string[] = [];
  for (const [name, args] of calls)
    texts.push(
      JSON.stringify(
        await client.callTool({ name, arguments: args }).catch((error: unknown) => ({ error: String(error) })),
      ),
    );
  return texts;
}

describe('isolation sweeps over mnemo serve', () => {
  it(
    'gives another tenant and another user nothing of alice, and the same answer for her real ids as for made-up ones',
    { timeout: 180_000 },
    async (context) => {
      const before = await snapshotOfAlice();
      const routes = routesOf(
        (await (await fetch(`${served.url}/openapi.json`)).json()) as Parameters<typeof routesOf>[0],
      ).filter(
        (route) =>
          !['/health', '/ready', '/metrics', '/openapi.json'].includes(route.path) &&
          !route.path.startsWith('/inspect/inspector.'),
      );
      // Who asks: tenant B (with and without naming alice as the user), and tenant A as someone else.
      const callers: { name: string; headers: (ids: typeof real) => Record<string, string>; crossUser: boolean }[] = [
        { name: 'tenant B', headers: () => ({ authorization: `Bearer ${keyB}` }), crossUser: false },
        {
          name: 'tenant B naming the user in X-Mnemo-User',
          headers: (ids) => ({ authorization: `Bearer ${keyB}`, 'x-mnemo-user': ids.user }),
          crossUser: false,
        },
        { name: 'tenant A, user bob', headers: () => asA({ 'x-mnemo-user': 'bob' }), crossUser: true },
        { name: 'tenant A, no user header (defaults)', headers: () => asA(), crossUser: true },
      ];
      const leaks: string[] = [];
      const oracles: string[] = [];
      let attempts = 0;
      for (const caller of callers) {
        for (const route of routes) {
          // Within a tenant a route that names the user in its path or query is that user's on purpose (the
          // tenant's key may act for every user); the cross-user sweep covers the routes where the user is implicit.
          if (caller.crossUser && route.path.includes('{userId}')) continue;
          const asked: { status: number; text: string }[] = [];
          for (const ids of [real, madeUp]) {
            let path = requestPath(route.path, ids);
            if (caller.crossUser) path = path.replace(/user_id=[^&]*&?|user=[^&]*&?/g, '');
            attempts += 1;
            const answer = await call(
              route.method,
              path,
              caller.headers(ids),
              requestBody(route.method, route.path, caller.crossUser ? { ...ids, user: 'bob' } : ids),
            );
            asked.push(answer);
            if (answer.text.includes(secret) || answer.text.includes('Hood River'))
              leaks.push(`${caller.name}: ${route.method} ${path} → ${answer.status} ${answer.text.slice(0, 200)}`);
          }
          const [forReal, forMadeUp] = asked as [{ status: number; text: string }, { status: number; text: string }];
          // A listing names no id, and grows with the caller's own writes of this sweep: only leaks count there.
          // A write the caller may make in its own space (2xx) is compared by status: its body describes the caller's data.
          const namesAnId = route.path.includes('{') || route.method === 'POST';
          const ownWrite = route.method !== 'GET' && forReal.status < 300 && forMadeUp.status < 300;
          if (
            namesAnId &&
            (forReal.status !== forMadeUp.status ||
              (!ownWrite && normalized(forReal.text, real) !== normalized(forMadeUp.text, madeUp)))
          ) {
            oracles.push(
              `${caller.name}: ${route.method} ${route.path}: real ${forReal.status} ${normalized(forReal.text, real).slice(0, 160)} | made-up ${forMadeUp.status} ${normalized(forMadeUp.text, madeUp).slice(0, 160)}`,
            );
          }
        }
        // The MCP tools over /mcp, as the same caller.
        const probe = async (ids: typeof real) => {
          const { authorization, ...others } = caller.headers(ids);
          const client = await connectMcp(authorization!.slice('Bearer '.length), others);
          try {
            return await mcpProbes(client, caller.crossUser ? { ...ids, user: 'bob' } : ids);
          } finally {
            await client.close();
          }
        };
        const [forReal, forMadeUp] = [await probe(real), await probe(madeUp)];
        attempts += forReal.length + forMadeUp.length;
        forReal.forEach((text, index) => {
          if (text.includes(secret) || text.includes('Hood River'))
            leaks.push(`${caller.name}: MCP probe ${index} → ${text.slice(0, 200)}`);
          // get_context and recall (probes 0–2) answer from the caller's own messages, which this sweep's own
          // writes (named after both id sets) change: there only leaks and errors count.
          const ownReads =
            index < 3 && !text.includes('"isError":true') && !forMadeUp[index]!.includes('"isError":true');
          if (!ownReads && normalized(text, real) !== normalized(forMadeUp[index]!, madeUp))
            oracles.push(
              `${caller.name}: MCP probe ${index}: ${normalized(text, real).slice(0, 160)} | ${normalized(forMadeUp[index]!, madeUp).slice(0, 160)}`,
            );
        });
      }

      // The proxy's upstream request for another user carries nothing of alice.
      const upstreamBefore = upstream.requests.length;
      for (const headers of [{ authorization: `Bearer ${keyB}` }, asA()]) {
        for (const user of [real.user, 'bob']) {
          if (headers.authorization === `Bearer ${keyA}` && user === real.user) continue;
          attempts += 1;
          const answer = await call('POST', '/v1/chat/completions', headers, {
            model: 'iso-model',
            user,
            messages: [{ role: 'user', content: 'What is my call sign and where do I live?' }],
          });
          if (answer.status !== 200) leaks.push(`proxy for ${user}: ${answer.status} ${answer.text.slice(0, 200)}`);
        }
      }
      const upstreamLeaks = upstream.requests
        .slice(upstreamBefore)
        .filter(
          (request) =>
            JSON.stringify(request.body).includes(secret) || JSON.stringify(request.body).includes('Hood River'),
        );

      // Every way of not presenting a valid key, on every route that needs one.
      const authVariants: Record<string, Record<string, string>> = {
        'no key': {},
        'wrong key': { authorization: 'Bearer key-c-00000000' },
        'key without Bearer': { authorization: keyA },
        'key in another header': { 'x-api-key': keyA },
        'key with a suffix': { authorization: `Bearer ${keyA}x` },
        'key cut short': { authorization: `Bearer ${keyA.slice(0, -1)}` },
        'key in the query': {},
      };
      const authFailures: string[] = [];
      for (const [variant, headers] of Object.entries(authVariants)) {
        for (const route of routes.filter((candidate) => !candidate.public)) {
          attempts += 1;
          const path = `${requestPath(route.path, real)}${variant === 'key in the query' ? `&api_key=${keyA}&key=${keyA}` : ''}`;
          const answer = await call(route.method, path, headers, requestBody(route.method, route.path, real));
          if (answer.status !== 401 || answer.text.includes(secret))
            authFailures.push(
              `${variant}: ${route.method} ${route.path} → ${answer.status} ${answer.text.slice(0, 120)}`,
            );
        }
      }
      const after = await snapshotOfAlice();

      recordFigures(context, 'isolation sweeps', [
        ['routes swept', routes.length],
        ['leak attempts (requests and MCP calls)', attempts],
        ['reads of alice (leaks)', leaks.length + upstreamLeaks.length],
        ['existence oracles (real ≠ made-up)', oracles.length],
        ["writes into alice's data", before === after ? 0 : 1],
        ['auth variants × routes not refused 401', authFailures.length],
      ]);
      expect(leaks).toEqual([]);
      expect(upstreamLeaks.map((request) => request.body)).toEqual([]);
      expect(authFailures).toEqual([]);
      expect(oracles).toEqual([]);
      expect(after).toBe(before);
    },
  );
});
