import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMemoryError } from '@mnemo/core';
import { cosineSimilarity } from '@mnemo/core/internals';
import { afterAll, describe, expect, it } from 'vitest';
import { StaticEmbedder } from './static-embedder.js';
import { decodeStaticModel, encodeStaticModel, staticModelChecksum } from './static-model-file.js';
import { StaticTokenizer } from './static-tokenizer.js';

const manifest = JSON.parse(readFileSync(new URL('../../../assets/static-use-lite.json', import.meta.url), 'utf8')) as {
  model: string;
  sha256: string;
  bytes: number;
};
const directory = mkdtempSync(join(tmpdir(), 'mnemo-static-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('StaticEmbedder', () => {
  const embedder = new StaticEmbedder();

  it('loads the bundled table under the model id and checksum its manifest records', () => {
    const bytes = readFileSync(new URL('../../../assets/static-use-lite.bin', import.meta.url));
    expect(staticModelChecksum(bytes)).toBe(manifest.sha256);
    expect(embedder.model).toBe(manifest.model);
    expect(embedder.model).toMatch(/^static-use-lite-\d+@[0-9a-f]{8}$/);
    expect(embedder.provenance).toMatchObject({ teacher: expect.stringContaining('Apache-2.0') as unknown });
  });

  it('gives unit vectors, the same synchronously and asynchronously, and the same for the same text', async () => {
    const texts = [
      'Caroline went to the LGBTQ support group yesterday.',
      'caroline WENT to the lgbtq support group yesterday!',
    ];
    const [first, second] = await embedder.embed(texts);
    expect(first).toHaveLength(embedder.dimensions);
    expect(Math.hypot(...first!)).toBeCloseTo(1, 5);
    expect(embedder.embedSync(texts)).toEqual([first, second]);
    // Case and punctuation do not change a text's words.
    expect(cosineSimilarity(first!, second!)).toBeCloseTo(1, 5);
  });

  it('puts a paraphrase nearer than an unrelated text, as the teacher does', () => {
    const [hiking, trek, tyres, meal] = embedder.embedSync([
      'I love hiking in the mountains',
      'We went trekking up the hills',
      'My car needs new tyres',
      'What should we cook for dinner?',
    ]);
    expect(cosineSimilarity(hiking!, trek!)).toBeGreaterThan(cosineSimilarity(hiking!, tyres!));
    expect(cosineSimilarity(hiking!, trek!)).toBeGreaterThan(cosineSimilarity(hiking!, meal!));
  });

  it('embeds a text without words as one fixed unit vector, and rejects a text that is not a string', () => {
    const [empty, symbols] = embedder.embedSync(['', '?!… 🙂']);
    expect(empty).toEqual(symbols);
    expect(Math.hypot(...empty!)).toBeCloseTo(1, 5);
    expect(() => embedder.embedSync([42 as unknown as string])).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
  });

  it('refuses a damaged or foreign file with model_failed', () => {
    const bytes = readFileSync(new URL('../../../assets/static-use-lite.bin', import.meta.url));
    const truncated = join(directory, 'truncated.bin');
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 10));
    const foreign = join(directory, 'foreign.bin');
    writeFileSync(foreign, 'not a model');
    for (const path of [truncated, foreign, join(directory, 'missing.bin')]) {
      expect(() => new StaticEmbedder({ path })).toThrow(expect.objectContaining({ code: 'model_failed' }));
    }
    expect(() => decodeStaticModel(bytes, { expectedSha256: '0'.repeat(64) })).toSatisfy((run: () => unknown) => {
      try {
        run();
        return false;
      } catch (error) {
        return isMemoryError(error, 'model_failed');
      }
    });
  });

  it('reads back a table it wrote: same rows within int8 precision, id from the checksum', () => {
    const vocabulary = {
      words: ['relay', 'ridge'],
      pieces: [
        ['▁re', -3],
        ['lay', -4],
      ] as [string, number][],
    };
    const table = Float32Array.from([1, 0, 0.5, 0, -1, 0.25, 0.1, 0.2, 0.3, -0.3, -0.2, -0.1]);
    const bytes = encodeStaticModel({ name: 'tiny-3', vocabulary, table, dimensions: 3, provenance: { note: 'test' } });
    const path = join(directory, 'tiny.bin');
    writeFileSync(path, bytes);
    const tiny = new StaticEmbedder({ path });
    expect(tiny.model).toBe(`tiny-3@${staticModelChecksum(bytes).slice(0, 8)}`);
    const [relay] = tiny.embedSync(['Relay']);
    expect(Array.from(relay!).map((value) => Math.round(value * 100) / 100)).toEqual([0.89, 0, 0.45]);
  });
});

describe('StaticTokenizer', () => {
  const tokenizer = new StaticTokenizer({
    words: ['the', 'relay'],
    pieces: [
      ['▁', -5],
      ['▁re', -3],
      ['lay', -4],
      ['▁r', -6],
      ['e', -6],
      ['l', -6],
      ['a', -6],
      ['y', -6],
      ['s', -6],
    ],
  });

  it('maps known words to their rows and segments others into the likeliest pieces', () => {
    expect(tokenizer.rows('The RELAY')).toEqual([0, 1]);
    // "relays": ▁re + lay + s (−13) beats letter by letter.
    expect(tokenizer.rows('relays')).toEqual([3, 4, 10]);
  });

  it('skips characters that no piece covers and gives nothing for a text without words', () => {
    expect(tokenizer.rows('rez')).toEqual([3]);
    expect(tokenizer.rows('  …!? ')).toEqual([]);
  });
});
