import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, HashedEmbedder, MemoryError } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerApp, startServer, type RunningServer } from '../src/index.js';

/** Embeds stored messages like the hashed embedder; once saturated, no query embedding ever comes back. */
class SaturatedEmbedder extends HashedEmbedder {
  saturated = false;
  override embed(texts: readonly string[]): Promise<Float32Array[]> {
    return this.saturated ? new Promise(() => undefined) : super.embed(texts);
  }
}

/** Embeds stored messages like the hashed embedder; once down, every query embedding fails as an endpoint refusing its key does. */
class FailingEmbedder extends HashedEmbedder {
  down = false;
  override embed(texts: readonly string[]): Promise<Float32Array[]> {
    return this.down
      ? Promise.reject(new MemoryError('unauthorized', 'http://embed.test/v1 rejected the API key (HTTP 401)'))
      : super.embed(texts);
  }
}

let server: RunningServer | undefined;
let directory: string | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});

describe('POST /v1/conversations/{id}/context under a saturated or failing embedder', () => {
  it('answers keyword-only at the query embedding deadline, says so in its report and counts it in /metrics', async () => {
    directory = await mkdtemp(join(tmpdir(), 'mnemo-deadline-'));
    const embedder = new SaturatedEmbedder();
    const memory = createMemory({
      store: createSqliteStore({ path: join(directory, 'mnemo.db') }),
      embedder,
      queryEmbeddingTimeoutMs: 30,
      worker: { autoStart: false },
      compaction: false,
    });
    await memory.append({ userId: 'node-7', conversationId: 'node-7' }, [
      { role: 'user', content: 'My relay is called LARCH-RIDGE and it runs on solar power.' },
      { role: 'assistant', content: 'Noted.' },
      ...Array.from({ length: 30 }, (_, index) => ({
        role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: `signal report ${index}: SNR ${index - 12} dB`,
      })),
    ]);
    await memory.runPendingJobs();
    embedder.saturated = true;
    server = await startServer({
      app: createServerApp({ memory, logger: pino({ level: 'silent' }) }),
      host: '127.0.0.1',
      port: 0,
    });

    const response = await fetch(`${server.url}/v1/conversations/node-7/context`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ policy: 'hybrid', maxTokens: 300, query: 'what is my solar relay called?' }),
    });

    expect(response.status).toBe(200);
    const body = (await response.json()) as { messages: { content: string }[]; report: { recall?: unknown } };
    expect(body.report.recall).toEqual({ mode: 'keyword-only', reason: 'embedding_deadline' });
    expect(body.messages.map((message) => message.content).join('\n')).toContain('LARCH-RIDGE');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('mnemo_context_recall_total{mode="keyword-only",reason="embedding_deadline"} 1');
  });

  it("answers 200 keyword-only when the embedding endpoint fails, not the endpoint's 401, and counts it", async () => {
    directory = await mkdtemp(join(tmpdir(), 'mnemo-embed-fail-'));
    const embedder = new FailingEmbedder();
    const errors: unknown[] = [];
    const memory = createMemory({
      store: createSqliteStore({ path: join(directory, 'mnemo.db') }),
      embedder,
      onQueryEmbeddingError: (error) => errors.push(error),
      worker: { autoStart: false },
      compaction: false,
    });
    await memory.append({ userId: 'node-7', conversationId: 'node-7' }, [
      { role: 'user', content: 'My relay is called LARCH-RIDGE and it runs on solar power.' },
      { role: 'assistant', content: 'Noted.' },
      ...Array.from({ length: 30 }, (_, index) => ({
        role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: `signal report ${index}: SNR ${index - 12} dB`,
      })),
    ]);
    await memory.runPendingJobs();
    embedder.down = true;
    server = await startServer({
      app: createServerApp({ memory, logger: pino({ level: 'silent' }) }),
      host: '127.0.0.1',
      port: 0,
    });

    const response = await fetch(`${server.url}/v1/conversations/node-7/context`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ policy: 'hybrid', maxTokens: 300, query: 'what is my solar relay called?' }),
    });

    expect(response.status).toBe(200);
    const body = (await response.json()) as { messages: { content: string }[]; report: { recall?: unknown } };
    expect(body.report.recall).toEqual({ mode: 'keyword-only', reason: 'embedder_failed' });
    expect(body.messages.map((message) => message.content).join('\n')).toContain('LARCH-RIDGE');
    expect(errors).toHaveLength(1);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('mnemo_context_recall_total{mode="keyword-only",reason="embedder_failed"} 1');
  });
});
