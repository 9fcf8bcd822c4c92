import { isMemoryError, MemoryError } from '@mnemo/core';
import { cosineSimilarity } from '@mnemo/core/internals';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startScriptedOpenAiServer,
  type ScriptedOpenAiServer,
  type ScriptedOpenAiServerOptions,
} from '../testing/scripted-openai-server.js';
import { OpenAiEmbedder, type OpenAiEmbedderOptions } from './openai-embedder.js';

let server: ScriptedOpenAiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(
  serverOptions: Partial<ScriptedOpenAiServerOptions> = {},
  embedderOptions: Partial<OpenAiEmbedderOptions> = {},
) {
  server = await startScriptedOpenAiServer({ replies: [], ...serverOptions });
  const embedder = new OpenAiEmbedder({
    baseUrl: server.baseUrl,
    model: 'embed-model',
    dimensions: 16,
    timeoutMs: 5_000,
    ...embedderOptions,
  });
  return { server, embedder };
}

async function failure(promise: Promise<unknown>): Promise<MemoryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isMemoryError(error)) throw new Error(`expected a MemoryError, got ${String(error)}`);
  return error;
}

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

interface EmbeddingsBody {
  model: string;
  input: string[];
  encoding_format?: string;
  dimensions?: number;
}

function bodies(target: ScriptedOpenAiServer): EmbeddingsBody[] {
  return target.requests
    .filter((request) => request.path === '/v1/embeddings')
    .map((request) => request.body as EmbeddingsBody);
}

describe('OpenAiEmbedder', () => {
  it('sends texts in batches as floats and returns unit vectors in input order', async () => {
    const { server, embedder } = await setUp({}, { batchSize: 2 });
    const texts = ['the relay on the ridge is down', 'the relay on the ridge is up', 'I love pizza'];

    const vectors = await embedder.embed(texts);
    const [alone] = await embedder.embed([texts[2]!]);

    expect(embedder.model).toBe('openai:embed-model');
    expect(bodies(server).map((body) => body.input)).toEqual([[texts[0], texts[1]], [texts[2]], [texts[2]]]);
    expect(bodies(server)[0]).toMatchObject({ model: 'embed-model', encoding_format: 'float' });
    expect(bodies(server)[0]!.dimensions).toBeUndefined();
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      expect(vector).toHaveLength(16);
      // The scripted server's vectors have length 2: these were scaled.
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    expect(cosineSimilarity(vectors[0]!, vectors[1]!)).toBeGreaterThan(cosineSimilarity(vectors[0]!, vectors[2]!));
    expect(Array.from(alone!)).toEqual(Array.from(vectors[2]!));
  });

  it('places vectors by their index when the server sends them out of order, and decodes base64', async () => {
    const base64 = Buffer.from(new Float32Array([0, 5]).buffer).toString('base64');
    const data = [
      { object: 'embedding', index: 1, embedding: base64 },
      { object: 'embedding', index: 0, embedding: [3, 4] },
    ];
    const { embedder } = await setUp(
      { embeddingReplies: [{ status: 200, body: { object: 'list', data } }] },
      { dimensions: 2 },
    );

    const vectors = await embedder.embed(['first', 'second']);

    expect(vectors.map((vector) => Array.from(vector))).toEqual([
      [expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)],
      [0, 1],
    ]);
  });

  it('knows the length of OpenAI models and asks for shortened vectors under its own model id', async () => {
    const { server } = await setUp({ embeddingDimensions: 1536 });
    const full = new OpenAiEmbedder({ baseUrl: server.baseUrl, model: 'text-embedding-3-small' });
    const short = new OpenAiEmbedder({ baseUrl: server.baseUrl, model: 'text-embedding-3-small', dimensions: 256 });

    const [fullVector] = await full.embed(['hello']);
    const [shortVector] = await short.embed(['hello']);

    expect(full).toMatchObject({ model: 'openai:text-embedding-3-small', dimensions: 1536 });
    expect(short).toMatchObject({ model: 'openai:text-embedding-3-small@256', dimensions: 256 });
    expect(bodies(server).map((body) => body.dimensions)).toEqual([undefined, 256]);
    expect(fullVector).toHaveLength(1536);
    expect(shortVector).toHaveLength(256);
  });

  it('sends an empty text as a space, which OpenAI-compatible servers accept', async () => {
    const { server, embedder } = await setUp();

    const vectors = await embedder.embed(['hello', '']);

    expect(vectors).toHaveLength(2);
    expect(bodies(server)[0]!.input).toEqual(['hello', ' ']);
  });

  it('answers an empty list without a request', async () => {
    const { server, embedder } = await setUp();

    expect(await embedder.embed([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('throws model_failed when the response has the wrong number of vectors, a wrong length or a repeated index', async () => {
    const repeated = {
      object: 'list',
      data: [
        { index: 0, embedding: [1, 0] },
        { index: 0, embedding: [0, 1] },
      ],
    };
    const { embedder } = await setUp(
      {
        embeddingReplies: [
          { vectors: [[1, 0]] },
          {
            vectors: [
              [1, 0, 0],
              [0, 1, 0],
            ],
          },
          { status: 200, body: repeated },
        ],
      },
      { dimensions: 2 },
    );

    const fewer = await failure(embedder.embed(['a', 'b']));
    const longer = await failure(embedder.embed(['a', 'b']));
    const twice = await failure(embedder.embed(['a', 'b']));

    expect(fewer).toMatchObject({ code: 'model_failed', details: { expected: 2, received: 1 } });
    expect(longer.message).toContain('a vector of 3 values (want 2 finite numbers)');
    expect(twice.message).toContain('repeated index 0');
  });

  it('throws model_failed after the SDK retries when the server keeps failing', async () => {
    const { server, embedder } = await setUp(
      { embeddingReplies: [{ status: 500 }, { status: 500 }, { status: 500 }] },
      { maxRetries: 2 },
    );

    const error = await failure(embedder.embed(['a']));

    expect(error).toMatchObject({ code: 'model_failed', details: { status: 500 } });
    expect(error.message).toContain('3 attempts');
    expect(bodies(server)).toHaveLength(3);
  });

  it('throws unauthorized when the server rejects the key', async () => {
    const { embedder } = await setUp({ apiKey: 'sk-right' }, { apiKey: 'sk-wrong' });

    const error = await failure(embedder.embed(['a']));

    expect(error).toMatchObject({ code: 'unauthorized', details: { status: 401 } });
  });

  it('throws model_failed for a timeout and for an aborted call', async () => {
    const { server, embedder } = await setUp(
      { embeddingReplies: [{ delayMs: 10_000 }, { delayMs: 10_000 }] },
      { timeoutMs: 200, maxRetries: 0 },
    );
    const controller = new AbortController();

    const timedOut = await failure(embedder.embed(['a']));
    const pending = failure(embedder.embed(['b'], { signal: controller.signal }));
    while (bodies(server).length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    const aborted = await pending;

    expect(timedOut).toMatchObject({ code: 'model_failed', details: { timeoutMs: 200 } });
    expect(aborted).toMatchObject({ code: 'model_failed', details: { aborted: true } });
  });

  it('rejects options it cannot work with', () => {
    const baseUrl = 'http://127.0.0.1:1/v1';

    expect(() => new OpenAiEmbedder({ baseUrl, model: 'nomic-embed-text' })).toThrow(/dimensions is required/);
    expect(() => new OpenAiEmbedder({ baseUrl, model: 'm', dimensions: 0 })).toThrow(/dimensions/);
    expect(() => new OpenAiEmbedder({ baseUrl, model: 'm', dimensions: 8, batchSize: 4096 })).toThrow(/batchSize/);
    expect(() => new OpenAiEmbedder({ baseUrl: 'ftp://x', model: 'm', dimensions: 8 })).toThrow(/baseUrl/);
    expect(() => new OpenAiEmbedder({ baseUrl, model: 'm', dimensions: 8, queryTimeoutMs: 0 })).toThrow(
      /queryTimeoutMs/,
    );
    expect(() => new OpenAiEmbedder({ baseUrl, model: 'm', dimensions: 8, probeIntervalMs: -1 })).toThrow(
      /probeIntervalMs/,
    );
  });

  it('asks a memory for a query deadline an endpoint can make: 1,000 ms unless told otherwise', () => {
    const baseUrl = 'http://127.0.0.1:1/v1';
    expect(new OpenAiEmbedder({ baseUrl, model: 'm', dimensions: 8 }).queryTimeoutMs).toBe(1000);
    expect(new OpenAiEmbedder({ baseUrl, model: 'm', dimensions: 8, queryTimeoutMs: 250 }).queryTimeoutMs).toBe(250);
  });

  describe('canEmbedWithin (decision 0051)', () => {
    it('says yes to a fresh embedder and after quick answers', async () => {
      const { embedder } = await setUp({}, { probeIntervalMs: 60_000 });
      expect(embedder.canEmbedWithin(1000)).toBe(true);

      await embedder.embed(['a']);

      expect(embedder.canEmbedWithin(1000)).toBe(true);
      expect(embedder.failing).toBe(false);
    });

    it('refuses at once after the endpoint failed, until a probe is due', async () => {
      const { embedder } = await setUp(
        { embeddingReplies: [{ status: 503 }] },
        { maxRetries: 0, probeIntervalMs: 60_000 },
      );

      await failure(embedder.embed(['a']));

      expect(embedder.failing).toBe(true);
      expect(embedder.canEmbedWithin(1000)).toBe(false);
      expect(embedder.canEmbedWithin(600_000)).toBe(false);
    });

    it('lets one probe through when nothing is on its way, and trusts the endpoint again once it answers', async () => {
      const { server, embedder } = await setUp(
        { embeddingReplies: [{ status: 401 }, { delayMs: 300 }] },
        { maxRetries: 0, probeIntervalMs: 0 },
      );
      await failure(embedder.embed(['a']));
      expect(embedder.canEmbedWithin(1000)).toBe(true);

      const probe = embedder.embed(['b']);
      while (bodies(server).length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      const duringProbe = embedder.canEmbedWithin(1000);
      await probe;

      expect(duringProbe).toBe(false);
      expect(embedder.failing).toBe(false);
      expect(embedder.canEmbedWithin(1000)).toBe(true);
    });

    it('refuses a deadline the last query ran out, and not a longer one', async () => {
      const { server, embedder } = await setUp(
        { embeddingReplies: [{ delayMs: 10_000 }] },
        { probeIntervalMs: 60_000 },
      );
      const controller = new AbortController();

      const pending = failure(embedder.embed(['a'], { signal: controller.signal }));
      while (bodies(server).length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      controller.abort();
      await pending;

      // Cut off after 200 ms or more: a 200 ms deadline would be missed again; an abort is no failure.
      expect(embedder.failing).toBe(false);
      expect(embedder.canEmbedWithin(200)).toBe(false);
      expect(embedder.canEmbedWithin(10_000)).toBe(true);
    });

    it('sends a request while the endpoint is in doubt with one attempt, not the SDK retries', async () => {
      const { server, embedder } = await setUp(
        { embeddingReplies: [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }] },
        { maxRetries: 2, probeIntervalMs: 0 },
      );

      const first = await failure(embedder.embed(['a']));
      const probe = await failure(embedder.embed(['b']));
      await embedder.embed(['c']);
      await embedder.embed(['d']);

      expect(first.message).toContain('3 attempts');
      expect(probe.message).toContain('1 attempt');
      // 3 + 1 failed attempts, then the probe that answered and one request trusted again.
      expect(bodies(server)).toHaveLength(6);
      expect(embedder.failing).toBe(false);
    });

    it('keeps saying yes after a 400, which is about the texts sent, not the endpoint', async () => {
      const { embedder } = await setUp(
        { embeddingReplies: [{ status: 400 }] },
        { maxRetries: 0, probeIntervalMs: 60_000 },
      );

      await failure(embedder.embed(['a']));

      expect(embedder.failing).toBe(false);
      expect(embedder.canEmbedWithin(1000)).toBe(true);
    });
  });
});
