import { isMemoryError } from '@mnemo/core';
import { cosineSimilarity } from '@mnemo/core/internals';
// The built package: the thread loads the compiled task file beside the compiled embedder.
import { UseLiteEmbedder, UseLiteThreadEmbedder } from '@mnemo/models';
import { afterAll, describe, expect, it } from 'vitest';

const embedder = new UseLiteThreadEmbedder({ maxBatchTexts: 8 });

afterAll(async () => {
  await embedder.close();
});

describe('UseLiteThreadEmbedder', () => {
  it('embeds in its thread into the same vector space as the in-process model, each concurrent call getting its own vectors', async () => {
    const texts = [
      'relay LARCH-RIDGE runs on solar power',
      'the summit cabin has no signal',
      'Maren moved to Hood River',
      'battery at 71 percent',
    ];
    const inProcess = await new UseLiteEmbedder().embed(texts);

    const concurrent = await Promise.all(texts.map((text) => embedder.embed([text])));

    expect(embedder.model).toBe(new UseLiteEmbedder().model);
    concurrent.forEach(([vector], index) => {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(cosineSimilarity(vector!, inProcess[index]!)).toBeGreaterThan(0.999);
    });
  }, 30_000);

  it('drops a waiting call whose signal aborts, and answers the others', async () => {
    const controller = new AbortController();
    const running = embedder.embed(['a long first batch about mesh radio relays'.repeat(20)]);
    const dropped = embedder.embed(['never embedded'], { signal: controller.signal });
    const kept = embedder.embed(['still embedded']);
    controller.abort();

    await expect(dropped).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'model_failed'));
    expect(await running).toHaveLength(1);
    expect(await kept).toHaveLength(1);
  }, 30_000);

  it('with a caller deadline it cannot make, still answers a caller whose signal never aborts, and rejects one whose signal aborts', async () => {
    // A 1 ms deadline: after one measured batch, every call with a signal waits for it instead of queueing.
    const strict = new UseLiteThreadEmbedder({ callerDeadlineMs: 1 });
    try {
      await strict.load();
      await strict.embed(['a measured batch about relay LARCH-RIDGE']);
      const controller = new AbortController();
      const parked = strict.embed(['given up at the deadline'], { signal: controller.signal });
      const patient = strict.embed(['queued once the deadline passed'], { signal: new AbortController().signal });
      const unsignalled = strict.embed(['no signal: never held back']);
      controller.abort();

      await expect(parked).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'model_failed'));
      expect(await patient).toHaveLength(1);
      expect(await unsignalled).toHaveLength(1);
    } finally {
      await strict.close();
    }
  }, 30_000);

  it("with two threads, splits a long call of mixed lengths into passes and answers in the call's order", async () => {
    const pair = new UseLiteThreadEmbedder({ threads: 2, maxBatchTexts: 4 });
    try {
      await pair.load();
      // Long and short texts interleaved: the passes are formed shortest first, the answer is not.
      const texts = Array.from({ length: 11 }, (_, index) =>
        index % 3 === 0
          ? `relay ${index} on the ridge runs on solar power, heard ${index} minutes ago at three hops with a workable SNR`
          : `node ${index}`,
      );
      const [split, inProcess] = await Promise.all([pair.embed(texts), new UseLiteEmbedder().embed(texts)]);

      expect(split).toHaveLength(texts.length);
      split.forEach((vector, index) => expect(cosineSimilarity(vector, inProcess[index]!)).toBeGreaterThan(0.999));
      // Each vector is its own text's, not a neighbour's.
      expect(cosineSimilarity(split[0]!, inProcess[1]!)).toBeLessThan(0.9);
    } finally {
      await pair.close();
    }
  }, 60_000);

  it('answers a call made while its warm-up passes run, and a close during the load ends the load quietly', async () => {
    const warming = new UseLiteThreadEmbedder({ callerDeadlineMs: 30, warmUpPasses: 1000 });
    const loading = warming.load();
    const [vector] = await warming.embed(['asked while the thread warms up'], { signal: new AbortController().signal });
    expect(vector).toHaveLength(warming.dimensions);

    await warming.close();
    await expect(loading).resolves.toBeUndefined();
  }, 60_000);

  it('refuses a caller deadline that is not a positive integer, warm-up passes outside 0 to 1,000, and a thread count outside 1 to 16', () => {
    expect(() => new UseLiteThreadEmbedder({ warmUpPasses: -1 })).toThrow(/warmUpPasses/);
    expect(() => new UseLiteThreadEmbedder({ warmUpPasses: 1.5 })).toThrow(/warmUpPasses/);
    expect(() => new UseLiteThreadEmbedder({ callerDeadlineMs: 0 })).toThrow(/callerDeadlineMs/);
    expect(() => new UseLiteThreadEmbedder({ threads: 0 })).toThrow(/threads/);
    expect(() => new UseLiteThreadEmbedder({ threads: 17 })).toThrow(/threads/);
  });
});
