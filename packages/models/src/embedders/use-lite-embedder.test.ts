import { isMemoryError, MemoryError } from '@mnemo/core';
import { cosineSimilarity } from '@mnemo/core/internals';
import { describe, expect, it } from 'vitest';
import { UseLiteEmbedder, type SentenceEncoder } from './use-lite-embedder.js';

/** A fake encoder that records its batches and returns a 512-vector of the text's length (not unit length). */
function fakeEncoder(options: { rows?: (batch: string[]) => unknown } = {}) {
  const batches: string[][] = [];
  const encoder: SentenceEncoder = {
    async embed(texts) {
      batches.push(texts);
      return (options.rows?.(texts) ?? texts.map((text) => vectorOf(text.length))) as number[][];
    },
  };
  return { encoder, batches };
}

function vectorOf(value: number): number[] {
  return Array.from({ length: 512 }, (_, index) => (index === 0 ? value : 1));
}

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

async function rejection(promise: Promise<unknown>): Promise<MemoryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isMemoryError(error)) throw new Error(`expected a MemoryError, got ${String(error)}`);
  return error;
}

describe('UseLiteEmbedder', () => {
  it('loads the encoder once when first calls run concurrently', async () => {
    const { encoder } = fakeEncoder();
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const embedder = new UseLiteEmbedder({
      loadEncoder: async () => {
        loads += 1;
        await gate;
        return encoder;
      },
    });

    const pending = Promise.all([embedder.embed(['a']), embedder.embed(['bb']), embedder.load()]);
    release();
    const [first, second] = await pending;
    await embedder.embed(['ccc']);

    expect(loads).toBe(1);
    expect(first).toHaveLength(1);
    expect(second).toHaveLength(1);
  });

  it('splits input into batches of batchSize and returns unit vectors in input order', async () => {
    const { encoder, batches } = fakeEncoder();
    const embedder = new UseLiteEmbedder({ batchSize: 2, loadEncoder: async () => encoder });
    const texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];

    const vectors = await embedder.embed(texts);

    expect(batches).toEqual([['a', 'bb'], ['ccc', 'dddd'], ['eeeee']]);
    expect(vectors).toHaveLength(5);
    for (const [index, vector] of vectors.entries()) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(norm(vector)).toBeCloseTo(1, 5);
      // Row i was built from the length of text i: the first component keeps that ratio after scaling.
      expect(vector[0]! / vector[1]!).toBeCloseTo(index + 1, 4);
    }
  });

  it('batches texts shortest first, since a pass is padded to its longest text, and answers in input order', async () => {
    const { encoder, batches } = fakeEncoder();
    const embedder = new UseLiteEmbedder({ batchSize: 2, loadEncoder: async () => encoder });
    const texts = ['dddd', 'a', 'eeeee', 'bb', 'cc'];

    const vectors = await embedder.embed(texts);

    // Ties ('bb', 'cc') keep their order.
    expect(batches).toEqual([['a', 'bb'], ['cc', 'dddd'], ['eeeee']]);
    vectors.forEach((vector, index) => expect(vector[0]! / vector[1]!).toBeCloseTo(texts[index]!.length, 4));
  });

  it('embeds an empty text as a space, since the model drops or rejects empty rows', async () => {
    const { encoder, batches } = fakeEncoder();
    const embedder = new UseLiteEmbedder({ loadEncoder: async () => encoder });

    const vectors = await embedder.embed(['hello', '']);

    // Shortest first: the space leads the batch; the answer keeps the input's order.
    expect(batches).toEqual([[' ', 'hello']]);
    expect(vectors.map((vector) => Math.round(vector[0]! / vector[1]!))).toEqual([5, 1]);
  });

  it('answers an empty list without loading the model', async () => {
    let loads = 0;
    const embedder = new UseLiteEmbedder({
      loadEncoder: async () => {
        loads += 1;
        return fakeEncoder().encoder;
      },
    });

    expect(await embedder.embed([])).toEqual([]);
    expect(loads).toBe(0);
  });

  it('throws model_failed with the cause when loading fails, and loads again on the next call', async () => {
    const failure = new Error('model.json does not exist');
    let loads = 0;
    const embedder = new UseLiteEmbedder({
      loadEncoder: async () => {
        loads += 1;
        if (loads === 1) throw failure;
        return fakeEncoder().encoder;
      },
    });

    const error = await rejection(embedder.embed(['a']));
    const vectors = await embedder.embed(['a']);

    expect(error.code).toBe('model_failed');
    expect(error.cause).toBe(failure);
    expect(error.message).toContain('model.json does not exist');
    expect(vectors).toHaveLength(1);
    expect(loads).toBe(2);
  });

  it('throws model_failed when the encoder returns fewer vectors than texts', async () => {
    const { encoder } = fakeEncoder({ rows: (batch) => batch.slice(1).map(() => vectorOf(1)) });
    const embedder = new UseLiteEmbedder({ loadEncoder: async () => encoder });

    const error = await rejection(embedder.embed(['a', 'b']));

    expect(error.code).toBe('model_failed');
    expect(error.message).toMatch(/1 vectors for 2 texts/);
  });

  it('throws model_failed when a vector has the wrong length or is not finite', async () => {
    const short = new UseLiteEmbedder({
      loadEncoder: async () => fakeEncoder({ rows: (batch) => batch.map(() => [1, 2, 3]) }).encoder,
    });
    const notFinite = new UseLiteEmbedder({
      loadEncoder: async () => fakeEncoder({ rows: (batch) => batch.map(() => vectorOf(Number.NaN)) }).encoder,
    });

    expect((await rejection(short.embed(['a']))).message).toMatch(/3 values/);
    expect((await rejection(notFinite.embed(['a']))).code).toBe('model_failed');
  });

  it('wraps a failing forward pass in model_failed with the cause', async () => {
    const failure = new Error('sparseIndices should be a matrix');
    const embedder = new UseLiteEmbedder({ loadEncoder: async () => ({ embed: async () => Promise.reject(failure) }) });

    const error = await rejection(embedder.embed(['a']));

    expect(error).toMatchObject({ code: 'model_failed', cause: failure });
  });

  it('stops between batches when the signal aborts', async () => {
    const controller = new AbortController();
    const batches: string[][] = [];
    const embedder = new UseLiteEmbedder({
      batchSize: 1,
      loadEncoder: async () => ({
        async embed(texts) {
          batches.push(texts);
          controller.abort();
          return texts.map(() => vectorOf(1));
        },
      }),
    });

    const error = await rejection(embedder.embed(['a', 'b', 'c'], { signal: controller.signal }));

    expect(error).toMatchObject({ code: 'model_failed', details: { aborted: true } });
    expect(batches).toEqual([['a']]);
  });

  it('stops waiting for a slow load when the signal aborts, while the load goes on for others', async () => {
    let release!: (encoder: SentenceEncoder) => void;
    const embedder = new UseLiteEmbedder({
      loadEncoder: () => new Promise<SentenceEncoder>((resolve) => (release = resolve)),
    });
    const controller = new AbortController();

    const aborted = rejection(embedder.embed(['a'], { signal: controller.signal }));
    const patient = embedder.embed(['b']);
    controller.abort();

    expect((await aborted).details).toEqual({ aborted: true });
    release(fakeEncoder().encoder);
    expect(await patient).toHaveLength(1);
  });

  it('rejects a batch size outside 1 to 1024 and a text that is not a string', async () => {
    expect(() => new UseLiteEmbedder({ batchSize: 0 })).toThrow(/batchSize/);
    expect(() => new UseLiteEmbedder({ batchSize: 1.5 })).toThrow(/batchSize/);
    const embedder = new UseLiteEmbedder({ loadEncoder: async () => fakeEncoder().encoder });

    const error = await rejection(embedder.embed(['a', 42 as unknown as string]));

    expect(error).toMatchObject({ code: 'invalid_input', details: { field: 'texts', index: 1 } });
  });
});

describe('UseLiteEmbedder with the bundled model', () => {
  it('puts similar sentences closer than unrelated ones, offline, with 512-dimensional unit vectors', async () => {
    const embedder = new UseLiteEmbedder({ batchSize: 2 });
    const sentences = ['my battery is almost empty', 'the power bank is low on charge', 'I love pizza'];

    const [battery, powerBank, pizza] = await embedder.embed(sentences);
    const singles = await Promise.all(sentences.map(async (sentence) => (await embedder.embed([sentence]))[0]!));
    const [empty] = await embedder.embed(['']);

    expect(embedder.dimensions).toBe(512);
    for (const vector of [battery!, powerBank!, pizza!, empty!]) {
      expect(vector).toHaveLength(512);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    expect(cosineSimilarity(battery!, powerBank!)).toBeGreaterThan(cosineSimilarity(battery!, pizza!) + 0.1);
    expect(cosineSimilarity(battery!, powerBank!)).toBeGreaterThan(cosineSimilarity(powerBank!, pizza!) + 0.1);
    // Batching (two passes of 2 + 1 here) must not change a text's vector.
    for (const [index, single] of singles.entries()) {
      expect(cosineSimilarity(single, [battery!, powerBank!, pizza!][index]!)).toBeCloseTo(1, 5);
    }
  });
});
