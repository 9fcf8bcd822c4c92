import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, HashedEmbedder, MemoryError, type MemoryOptions } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerApp, startServer, type RunningServer } from '../src/index.js';

/**
 * Embeds stored messages like the hashed embedder; then, once `fault` is set, no query embedding ever
 * comes back (`hang`: a saturated embedder) or every one fails as an endpoint refusing its key does (`fail`).
 */
class FaultyEmbedder extends HashedEmbedder {
  fault: 'none' | 'hang' | 'fail' = 'none';
  override embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.fault === 'hang') return new Promise(() => undefined);
    if (this.fault === 'fail')
      return Promise.reject(new MemoryError('unauthorized', 'http://embed.test/v1 rejected the API key (HTTP 401)'));
    return super.embed(texts);
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

/** Stores a relay chat with its vectors, sets the embedder's fault, serves, and asks for a hybrid context and /metrics. */
async function askUnder(fault: FaultyEmbedder['fault'], options: Partial<MemoryOptions>) {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-query-embedding-'));
  const embedder = new FaultyEmbedder();
  const memory = createMemory({
    store: createSqliteStore({ path: join(directory, 'mnemo.db') }),
    embedder,
    worker: { autoStart: false },
    compaction: false,
    ...options,
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
  embedder.fault = fault;
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
  const body = (await response.json()) as { messages: { content: string }[]; report: { recall?: unknown } };
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const recalled = await fetch(`${server.url}/v1/recall?user_id=node-7&q=${encodeURIComponent('solar relay name')}`);
  const recall = {
    status: recalled.status,
    body: (await recalled.json()) as { hits: { message: { content: string } }[]; mode: string; reason?: string },
  };
  return {
    status: response.status,
    body,
    text: body.messages.map((message) => message.content).join('\n'),
    metrics,
    recall,
  };
}

describe('POST /v1/conversations/{id}/context under a saturated or failing embedder', () => {
  it('answers keyword-only at the query embedding deadline, says so in its report and counts it in /metrics', async () => {
    const { status, body, text, metrics, recall } = await askUnder('hang', { queryEmbeddingTimeoutMs: 30 });

    expect(status).toBe(200);
    expect(recall.body).toMatchObject({ mode: 'keyword-only', reason: 'embedding_deadline' });
    expect(body.report.recall).toEqual({ mode: 'keyword-only', reason: 'embedding_deadline' });
    expect(text).toContain('LARCH-RIDGE');
    expect(metrics).toContain('mnemo_context_recall_total{mode="keyword-only",reason="embedding_deadline"} 1');
  });

  it("answers 200 keyword-only when the embedding endpoint fails, not the endpoint's 401, and counts it", async () => {
    const errors: unknown[] = [];

    const { status, body, text, metrics, recall } = await askUnder('fail', {
      onQueryEmbeddingError: (error) => errors.push(error),
    });

    expect(status).toBe(200);
    expect(body.report.recall).toEqual({ mode: 'keyword-only', reason: 'embedder_failed' });
    expect(text).toContain('LARCH-RIDGE');
    // GET /v1/recall too: keyword-only and saying so, not the endpoint's 401.
    expect(recall.status).toBe(200);
    expect(recall.body).toMatchObject({ mode: 'keyword-only', reason: 'embedder_failed' });
    expect(recall.body.hits[0]?.message.content).toContain('LARCH-RIDGE');
    expect(errors).toHaveLength(2);
    expect(metrics).toContain('mnemo_context_recall_total{mode="keyword-only",reason="embedder_failed"} 1');
  });
});
