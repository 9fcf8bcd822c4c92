import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mountInspectorRoutes } from '../src/inspect/index.js';
import type { ErrorBody } from '../src/index.js';
import { startTestServer, type TestServer } from './test-server.js';

const keys = [
  { key: 'key-of-mesh', tenantId: 'mesh' },
  { key: 'key-of-ops', tenantId: 'ops' },
];
const ana = { tenantId: 'mesh', userId: 'ana', conversationId: 'ridge' };

let server: TestServer;

beforeEach(async () => {
  server = await startTestServer({ auth: { keys }, routes: [mountInspectorRoutes] });
  await server.memory.append(ana, [
    { role: 'user', content: 'My battery is a 3000 mAh pack.' },
    { role: 'assistant', content: 'Noted: 3000 mAh.' },
  ]);
  await server.memory.append(
    { tenantId: 'ops', userId: 'omar', conversationId: 'ops-plan' },
    { role: 'user', content: 'The ops plan is confidential.' },
  );
});

afterEach(async () => {
  await server.close();
});

describe('inspector routes', () => {
  it('serves the page, its script and its stylesheet without a key, with a policy that loads nothing from elsewhere', async () => {
    for (const [path, type] of [
      ['/inspect', 'text/html'],
      ['/inspect/inspector.js', 'text/javascript'],
      ['/inspect/inspector.css', 'text/css'],
    ] as const) {
      const response = await server.request(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toContain(type);
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await response.text()).not.toMatch(/https?:\/\//);
    }
    const page = await (await server.request('/inspect')).text();
    expect(page).toContain('data-key-required="true"');
    expect(page).not.toContain('ridge');
  });

  it('answers every view only with a key, and only with the key’s tenant', async () => {
    expect((await server.request('/inspect/fragments/conversations')).status).toBe(401);
    const mesh = await (await server.request('/inspect/fragments/conversations', { key: 'key-of-mesh' })).text();
    expect(mesh).toContain('data-conversation="ridge"');
    expect(mesh).not.toContain('ops-plan');
    const ops = await server.request('/inspect/fragments/conversation/ana/ridge', { key: 'key-of-ops' });
    expect(ops.status).toBe(404);
    expect(((await ops.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const facts = await (await server.request('/inspect/fragments/facts/ana', { key: 'key-of-ops' })).text();
    expect(facts).not.toContain('3000');
  });

  it('previews the next request without entering it in the ledger, with the count the API reports', async () => {
    const fragment = await (
      await server.request('/inspect/fragments/context/ana/ridge?policy=full&maxTokens=100', { key: 'key-of-mesh' })
    ).text();
    const shown = Number(/data-sent-tokens="(\d+)"/.exec(fragment)?.[1]);
    expect((await server.memory.listUsage(ana)).items).toEqual([]);
    const api = await server.json<{ report: { sentTokens: number } }>('/v1/conversations/ridge/context', {
      key: 'key-of-mesh',
      json: { userId: 'ana', policy: 'full', maxTokens: 100 },
    });
    expect(api.body.report.sentTokens).toBe(shown);
    expect((await server.memory.listUsage(ana)).items).toHaveLength(1);
  });

  it('refuses bad view input with invalid_input and lists its routes in the OpenAPI document', async () => {
    const bad = await server.json<ErrorBody>('/inspect/fragments/context/ana/ridge?maxTokens=0', {
      key: 'key-of-mesh',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_input');
    const badDay = await server.json('/inspect/fragments/facts/ana?asOf=yesterday', { key: 'key-of-mesh' });
    expect(badDay.status).toBe(400);
    const document = (await server.json('/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/inspect', '/inspect/fragments/context/{userId}/{conversationId}']),
    );
  });
});

describe('inspector routes without keys', () => {
  it('tells the page no key is needed and serves views of ids with slashes, spaces and non-ASCII letters', async () => {
    const keyless = await startTestServer({ routes: [mountInspectorRoutes] });
    try {
      const odd = { userId: 'nø/de 7', conversationId: 'trip #2 / ridge?' };
      await keyless.memory.append(odd, { role: 'user', content: 'Relay LARCH-RIDGE is up.' });
      expect(await (await keyless.request('/inspect')).text()).toContain('data-key-required="false"');
      const list = await (await keyless.request('/inspect/fragments/conversations')).text();
      const link = /href="#(\/conversation\/[^"]+)"/.exec(list)?.[1];
      expect(link).toBe(`/conversation/${encodeURIComponent(odd.userId)}/${encodeURIComponent(odd.conversationId)}`);
      const view = await keyless.request(`/inspect/fragments${link!}`);
      expect(view.status).toBe(200);
      expect(await view.text()).toContain('Relay LARCH-RIDGE is up.');
    } finally {
      await keyless.close();
    }
  });
  it('says when recall went keyword-only and why, instead of a bare dash for every vector similarity', async () => {
    const fragment = await (
      await server.request('/inspect/fragments/context/ana/ridge?policy=hybrid&maxTokens=500&query=battery%20pack%3F', {
        key: 'key-of-mesh',
      })
    ).text();

    expect(fragment).toContain('data-recall-mode="keyword-only" data-recall-reason="no_embedder"');
    expect(fragment).toContain('Recall went keyword-only: no embedder is configured');
    const telling = await (
      await server.request('/inspect/fragments/context/ana/ridge?policy=hybrid&maxTokens=500&query=battery%20pack', {
        key: 'key-of-mesh',
      })
    ).text();
    expect(telling).toContain('data-recall-mode="skipped"');
    expect(telling).toContain('No recall for this turn: it asks nothing');
  });

  it('says when a turn follows up on the recent turns and its snippets got only the least room', async () => {
    const chat = { tenantId: 'mesh', userId: 'ana', conversationId: 'log' };
    const special: Record<number, string> = {
      12: 'The solar charger on BEAR-CREEK was replaced with a 40 W panel.',
      60: 'The antenna on PINE-HILL was raised to 12 metres.',
    };
    await server.memory.append(
      chat,
      Array.from({ length: 60 }, (_, index) => ({
        role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: special[index + 1] ?? `Routine check number ${index + 1} of the mesh: every node answered in time.`,
      })),
    );
    const view = (query: string) =>
      server.request(
        `/inspect/fragments/context/ana/log?policy=hybrid&maxTokens=600&query=${encodeURIComponent(query)}`,
        {
          key: 'key-of-mesh',
        },
      );
    const followUp = await (await view('How high was the PINE-HILL antenna raised?')).text();
    expect(followUp).toContain('data-recall-mode="keyword-only"');
    expect(followUp).toContain('Its best match is one of the recent turns');
    const older = await (await view('What happened to the solar charger?')).text();
    expect(older).toContain('BEAR-CREEK');
    expect(older).not.toContain('Its best match is one of the recent turns');
  });

  it("pages an expanded summary's source messages, 100 at a time", async () => {
    const long = { tenantId: 'mesh', userId: 'ana', conversationId: 'long' };
    await server.memory.append(
      long,
      Array.from({ length: 260 }, (_, index) => ({
        role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: `message ${index + 1} about the relay`,
      })),
    );
    const [summary] = (await server.memory.compact(long)).slice(-1);
    const covered = summary!.toSeq;
    const route = `/inspect/fragments/summary/ana/${encodeURIComponent(summary!.id)}`;

    const first = await (await server.request(route, { key: 'key-of-mesh' })).text();
    const second = await (await server.request(`${route}?offset=100`, { key: 'key-of-mesh' })).text();
    const rows = (html: string) => html.match(/data-seq="\d+"/g) ?? [];

    expect(covered).toBeGreaterThan(200);
    expect(rows(first)).toHaveLength(100);
    expect(first).toContain(`messages 1–100 of ${covered}`);
    expect(first).toContain(`data-fragment-page="/summary/ana/${encodeURIComponent(summary!.id)}?offset=100"`);
    expect(rows(second)).toHaveLength(100);
    expect(second).toContain(`messages 101–200 of ${covered}`);
    expect(second).toContain(`data-fragment-page="/summary/ana/${encodeURIComponent(summary!.id)}"`);
  });

  it('keeps the conversations table to four columns on a narrow screen and says where the others are', async () => {
    const fragment = await (await server.request('/inspect/fragments/conversations', { key: 'key-of-mesh' })).text();

    expect(fragment).toContain('data-narrow-hint');
    expect(fragment.match(/<th class="num hide-narrow">/g)).toHaveLength(2);
    expect(fragment.match(/<td class="num hide-narrow">/g)?.length).toBe(
      2 * (fragment.match(/data-conversation=/g)?.length ?? 0),
    );
  });
});
