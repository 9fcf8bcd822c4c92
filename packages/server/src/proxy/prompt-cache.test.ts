import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type Memory, type Store } from '@mnemo/core';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer, type ScriptedReply } from '@mnemo/models/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerApp, startServer } from '../index.js';
import { mountProxyRoutes } from './mount-proxy-routes.js';
import { readUpstreamUsage } from './upstream-usage.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Fixture {
  readonly upstream: ScriptedOpenAiServer;
  readonly memory: Memory;
  readonly store: Store;
  readonly url: string;
}

/** A proxy on a real SQLite file with compaction on a small budget; jobs run when the test drains them. */
async function startProxy(replies: readonly ScriptedReply[]): Promise<Fixture> {
  const upstream = await startScriptedOpenAiServer({ replies, repeatLast: true });
  cleanups.push(() => upstream.close());
  const directory = await mkdtemp(join(tmpdir(), 'mnemo-prompt-cache-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const store = createSqliteStore({ path: join(directory, 'mnemo.db') });
  const memory = createMemory({ store, worker: { autoStart: false }, context: { maxTokens: 600 }, knowledge: false });
  const app = createServerApp({
    memory,
    logger: pino({ level: 'silent' }),
    limits: { rateLimit: false },
    llm: { baseUrl: upstream.baseUrl, apiKey: 'sk-upstream' },
    routes: [mountProxyRoutes],
  });
  const server = await startServer({ app, port: 0, shutdownTimeoutMs: 100 });
  cleanups.push(async () => {
    await server.close();
    await memory.close();
  });
  return { upstream, memory, store, url: server.url };
}

const system = { role: 'system', content: 'You are a mesh-radio bot. Reply in 150 characters or less.' };

function userTurn(index: number): string {
  return `Report ${index}: relay LARCH-RIDGE heard at SNR ${(index % 7) - 9} dB on channel ${index % 4}, battery ${60 + (index % 30)} %.`;
}

function replyTo(index: number): string {
  return `Noted report ${index}; LARCH-RIDGE looks fine.`;
}

/** Sends a growing history one exchange at a time, as a bot does; returns the upstream prompts, the stable counts and the watermark before each request. */
async function replay(fixture: Fixture, conversation: string, exchanges: number) {
  const history: { role: string; content: string }[] = [system];
  const prompts: string[][] = [];
  const stable: number[] = [];
  const watermarks: number[] = [];
  const scope = { tenantId: 'default', userId: conversation, conversationId: conversation };
  for (let index = 0; index < exchanges; index += 1) {
    history.push({ role: 'user', content: userTurn(index) });
    watermarks.push((await fixture.store.getConversation(scope))?.summarizedThroughSeq ?? 0);
    const before = fixture.upstream.requests.length;
    const response = await fetch(`${fixture.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mnemo-conversation': conversation },
      body: JSON.stringify({ model: 'test-model', user: conversation, messages: history }),
    });
    expect(response.status).toBe(200);
    await response.json();
    stable.push(Number(response.headers.get('x-mnemo-stable-messages')));
    const sent = fixture.upstream.requests.slice(before).find((received) => received.path === '/v1/chat/completions');
    // Each message serialized as the upstream received it: byte-for-byte comparison of the prefix.
    prompts.push(((sent?.body as { messages: unknown[] }).messages ?? []).map((message) => JSON.stringify(message)));
    history.push({ role: 'assistant', content: replyTo(index) });
    await fixture.memory.runPendingJobs();
  }
  return { prompts, stable, watermarks };
}

describe('the proxy keeps the stable prefix for prompt caches (invariant 7)', () => {
  it('recalls for a turn that asks, not for one that tells, and says which in X-Mnemo-Recall-Mode; X-Mnemo-Recall overrides', async () => {
    const fixture = await startProxy(Array.from({ length: 60 }, (_, index) => ({ content: replyTo(index % 30) })));
    await replay(fixture, 'node-8', 24);
    const history = [
      system,
      ...Array.from({ length: 24 }, (_, index) => [
        { role: 'user', content: userTurn(index) },
        { role: 'assistant', content: replyTo(index) },
      ]).flat(),
    ];
    const send = async (content: string, headers: Record<string, string> = {}) => {
      const before = fixture.upstream.requests.length;
      const response = await fetch(`${fixture.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mnemo-conversation': 'node-8', ...headers },
        body: JSON.stringify({
          model: 'test-model',
          user: 'node-8',
          messages: [...history, { role: 'user', content }],
        }),
      });
      const sent = fixture.upstream.requests.slice(before).find((received) => received.path === '/v1/chat/completions');
      return {
        status: response.status,
        mode: response.headers.get('x-mnemo-recall-mode'),
        prompt: JSON.stringify((sent?.body as { messages?: unknown[] } | undefined)?.messages ?? []),
        body: await response.text(),
      };
    };

    const tells = await send('Battery swapped at LARCH-RIDGE.');
    expect(tells.mode).toBe('skipped/not_asked');
    expect(tells.prompt).not.toContain('Earlier messages that may matter');
    const asks = await send('What was the SNR of report 1?');
    expect(asks.mode).toBe('keyword-only/no_embedder');
    expect(asks.prompt).toContain('Earlier messages that may matter');
    const everyTurn = await send('Battery swapped at LARCH-RIDGE.', { 'x-mnemo-recall': 'every-turn' });
    expect(everyTurn.mode).toBe('keyword-only/no_embedder');
    const wrong = await send('Battery swapped.', { 'x-mnemo-recall': 'sometimes' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('X-Mnemo-Recall must be one of when-asked, every-turn');
  });

  it('sends prompts that share the stable part byte for byte from one request to the next until a compaction, and the same prompts for the same conversation sent twice', async () => {
    const fixture = await startProxy(Array.from({ length: 60 }, (_, index) => ({ content: replyTo(index % 30) })));
    const first = await replay(fixture, 'node-7', 30);
    let compared = 0;
    let compactions = 0;
    for (let index = 1; index < first.prompts.length; index += 1) {
      const keep = first.stable[index - 1]!;
      if (first.watermarks[index] !== first.watermarks[index - 1]) {
        compactions += 1;
        continue;
      }
      expect(first.prompts[index]!.slice(0, keep)).toEqual(first.prompts[index - 1]!.slice(0, keep));
      // The stable part grows append-only: the previous request's is inside this one's.
      expect(first.stable[index]).toBeGreaterThanOrEqual(keep);
      if (keep > 2) compared += 1;
    }
    // The conversation outgrew its budget and was compacted, and there were stable runs after it with summary and raw turns.
    expect(compactions).toBeGreaterThan(0);
    expect(compared).toBeGreaterThan(10);
    const summarized = first.prompts.findIndex((prompt) =>
      prompt.some((message) => message.includes('Summary of the earlier conversation')),
    );
    expect(summarized).toBeGreaterThan(0);
    expect(first.stable[summarized]).toBeGreaterThan(2);

    // The same conversation again, under another id: the same prompts, request by request.
    const second = await replay(fixture, 'node-7-again', 30);
    expect(second.prompts).toEqual(first.prompts);
  });

  it("passes the upstream's cache figures on: headers of a non-streamed reply, and /metrics for streamed and non-streamed ones", async () => {
    const completion = (usage: unknown) =>
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 0,
        model: 'gpt-test',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Copy.' }, finish_reason: 'stop' }],
        usage,
      });
    const streamed = [
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'deepseek-test', choices: [{ index: 0, delta: { content: 'Copy.' }, finish_reason: 'stop' }] })}`,
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'deepseek-test', choices: [], usage: { prompt_tokens: 2000, completion_tokens: 3, prompt_cache_hit_tokens: 1792, prompt_cache_miss_tokens: 208 } })}`,
      'data: [DONE]',
      '',
    ].join('\n\n');
    const fixture = await startProxy([
      {
        raw: completion({ prompt_tokens: 1500, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 1280 } }),
      },
      { raw: streamed, contentType: 'text/event-stream' },
      {
        raw: completion({
          input_tokens: 100,
          output_tokens: 3,
          cache_read_input_tokens: 1200,
          cache_creation_input_tokens: 300,
        }),
      },
    ]);
    const send = (stream: boolean) =>
      fetch(`${fixture.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mnemo-conversation': 'node-9' },
        body: JSON.stringify({
          model: 'gpt-test',
          messages: [{ role: 'user', content: 'radio check' }],
          ...(stream ? { stream: true } : {}),
        }),
      });

    const openAi = await send(false);
    expect(openAi.headers.get('x-mnemo-cached-tokens')).toBe('1280');
    expect(openAi.headers.get('x-mnemo-upstream-prompt-tokens')).toBe('1500');
    expect(openAi.headers.get('x-mnemo-cache-write-tokens')).toBe('0');
    await openAi.text();
    const deepSeek = await send(true);
    expect(await deepSeek.text()).toContain('[DONE]');
    const anthropic = await send(false);
    expect(anthropic.headers.get('x-mnemo-cached-tokens')).toBe('1200');
    expect(anthropic.headers.get('x-mnemo-cache-write-tokens')).toBe('300');
    expect(anthropic.headers.get('x-mnemo-upstream-prompt-tokens')).toBe('1600');
    await anthropic.text();
    // The streamed reply's figures are counted once its stream has been read to the end.
    await expect
      .poll(async () =>
        (await (await fetch(`${fixture.url}/metrics`)).text()).includes(
          'mnemo_upstream_cached_tokens_total{model="deepseek-test"} 1792',
        ),
      )
      .toBe(true);
    const metrics = await (await fetch(`${fixture.url}/metrics`)).text();
    expect(metrics).toContain('mnemo_upstream_cached_tokens_total{model="gpt-test"} 2480');
    expect(metrics).toContain('mnemo_upstream_prompt_tokens_total{model="gpt-test"} 3100');
    expect(metrics).toContain('mnemo_upstream_cache_write_tokens_total{model="gpt-test"} 300');
    expect(metrics).toContain('mnemo_upstream_prompt_tokens_total{model="deepseek-test"} 2000');
  });
});

describe('prompt_cache_key', () => {
  it("is set per end user and conversation when the client sent none, and the client's own passes through", async () => {
    const fixture = await startProxy([{ content: 'Copy.' }]);
    const send = (conversation: string, user: string, extra: Record<string, unknown> = {}) =>
      fetch(`${fixture.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-mnemo-conversation': conversation },
        body: JSON.stringify({ model: 'm', user, messages: [{ role: 'user', content: 'radio check' }], ...extra }),
      }).then((response) => response.text());
    await send('node-7', 'maren');
    await send('node-7', 'maren');
    await send('node-8', 'maren');
    await send('node-7', 'tomas');
    await send('node-7', 'maren', { prompt_cache_key: 'mine', stream_options: { include_usage: true }, stream: false });
    const keys = fixture.upstream.requests
      .filter((received) => received.path === '/v1/chat/completions')
      .map((received) => (received.body as { prompt_cache_key?: string }).prompt_cache_key);
    expect(keys[0]).toMatch(/^mnemo-[0-9a-f]{32}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(new Set(keys.slice(0, 4)).size).toBe(3);
    expect(keys[4]).toBe('mine');
    expect(JSON.stringify(keys)).not.toContain('maren');
  });
});

describe('readUpstreamUsage', () => {
  it('reads OpenAI, DeepSeek and Anthropic-style usage into one shape, and nothing from what holds no count', () => {
    expect(
      readUpstreamUsage({ prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 0 } }),
    ).toEqual({
      inputTokens: 10,
      outputTokens: 2,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
    });
    expect(readUpstreamUsage({ prompt_tokens: 10, prompt_cache_hit_tokens: 4, prompt_cache_miss_tokens: 6 })).toEqual({
      inputTokens: 10,
      outputTokens: 0,
      cachedInputTokens: 4,
      cacheWriteInputTokens: 0,
    });
    expect(
      readUpstreamUsage({
        input_tokens: 5,
        cache_read_input_tokens: 7,
        cache_creation_input_tokens: 3,
        output_tokens: 1,
      }),
    ).toEqual({
      inputTokens: 15,
      outputTokens: 1,
      cachedInputTokens: 7,
      cacheWriteInputTokens: 3,
    });
    expect(readUpstreamUsage({ prompt_tokens: -1, prompt_tokens_details: { cached_tokens: 'many' } })).toBeUndefined();
    expect(readUpstreamUsage(undefined)).toBeUndefined();
  });
});
