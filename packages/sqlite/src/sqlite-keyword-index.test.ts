import { describe, expect, it } from 'vitest';
import { KeywordIndex, keywordQuery, type KeywordRow } from './sqlite-keyword-index.js';
import { keywordTokens } from './sqlite-keyword-tokens.js';

/** A reader over rows in rowid order, counting the rows it hands out. */
function reader(rows: KeywordRow[]): {
  read: (afterRowid: number) => KeywordRow[];
  count: () => number;
  page: (size: number) => (afterRowid: number) => KeywordRow[];
} {
  let handed = 0;
  const after = (afterRowid: number) => rows.filter(([rowid]) => rowid > afterRowid);
  return {
    read: (afterRowid) => {
      const found = after(afterRowid);
      handed += found.length;
      return found;
    },
    page: (size) => (afterRowid) => {
      const found = after(afterRowid).slice(0, size);
      handed += found.length;
      return found;
    },
    count: () => handed,
  };
}

/** BM25 of every row, written out plainly: the reference the index must match. */
function bruteForce(
  rows: readonly KeywordRow[],
  terms: readonly string[],
  k: number,
): { key: number; score: number }[] {
  const documents = rows.map(([rowid, , , content]) => ({ rowid, words: keywordTokens(content) }));
  const average = Math.max(1, documents.reduce((sum, document) => sum + document.words.length, 0) / documents.length);
  const groups = keywordQuery(terms);
  return documents
    .map(({ rowid, words }) => {
      let score = 0;
      for (const group of groups) {
        const frequency = Math.min(...group.map((word) => words.filter((token) => token === word).length));
        if (frequency === 0) continue;
        const df = documents.filter((document) => group.every((word) => document.words.includes(word))).length;
        const idf = Math.log(1 + (documents.length - df + 0.5) / (df + 0.5));
        score += (idf * frequency * 2.2) / (frequency + 1.2 * (1 - 0.75 + (0.75 * words.length) / average));
      }
      return { key: rowid, score: Math.round(score * 1e10) / 1e10 };
    })
    .filter((hit) => hit.score > 0)
    .sort((x, y) => y.score - x.score || y.key - x.key)
    .slice(0, k);
}

/** Deterministic chat-like rows: words drawn unevenly from a small vocabulary, three conversations, rowids with gaps. */
function corpus(count: number, seed: number): KeywordRow[] {
  const vocabulary =
    'node battery signal antenna summit weather hiking running ran runs relay mesh packet solar panel rain storm camp lake i ve caroline'.split(
      ' ',
    );
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  return Array.from({ length: count }, (_, index) => {
    const words = Array.from(
      { length: 1 + Math.floor(next() * 12) },
      () => vocabulary[Math.floor(next() ** 2 * vocabulary.length)]!,
    );
    return [index * 3 + 1, `c${index % 3}`, 1000 + index, words.join(' ')] as const;
  });
}

const fresh = { deletions: 0, erasures: 0 };

describe('in-memory keyword index', () => {
  it("ranks exactly as BM25 over the user's messages, ties to the newest, for many queries and cuts", () => {
    const rows = corpus(400, 7);
    const { read } = reader(rows);
    const index = new KeywordIndex();
    const watermark = { lastId: rows.at(-1)![0], ...fresh };
    for (const terms of [
      ['battery'],
      ['summit', 'weather'],
      ['running', 'runs', 'ran'],
      ['caroline', "i've"],
      ['storm', 'lake', 'camp', 'relay'],
      ['node'],
    ]) {
      for (const k of [1, 5, 50, 1000]) {
        const hits = index.search('u', watermark, read, keywordQuery(terms), k, {});
        const expected = bruteForce(rows, terms, k);
        expect(
          hits.map((hit) => hit.key),
          `${terms.join(' ')} k=${k}`,
        ).toEqual(expected.map((hit) => hit.key));
        hits.forEach((hit, position) => expect(hit.score).toBeCloseTo(expected[position]!.score, 8));
      }
    }
    expect(index.search('u', watermark, read, keywordQuery(['absent']), 10, {})).toEqual([]);
  });

  it('matches a term of several words only where all of them are, and counts a stem once', () => {
    const rows: KeywordRow[] = [
      [1, 'c', 1, "I've got a new antenna"],
      [2, 'c', 2, 'I have been to the summit'],
      [3, 'c', 3, 've i'],
      [4, 'c', 4, 'running'],
    ];
    const { read } = reader(rows);
    const index = new KeywordIndex();
    const watermark = { lastId: 4, ...fresh };
    expect(index.search('u', watermark, read, keywordQuery(["i've"]), 10, {}).map((hit) => hit.key)).toEqual([3, 1]);
    expect(keywordQuery(['run', 'running', 'runs'])).toEqual([['run']]);
    expect(keywordQuery(['🎉', '...'])).toEqual([]);
  });

  it('keeps only the conversations and the time window asked for, with the k best of those', () => {
    const rows = corpus(300, 11);
    const { read } = reader(rows);
    const index = new KeywordIndex();
    const watermark = { lastId: rows.at(-1)![0], ...fresh };
    const query = keywordQuery(['battery', 'solar']);
    const inC1 = index.search('u', watermark, read, query, 5, { conversationIds: ['c1', 'missing'] });
    const all = index.search('u', watermark, read, query, 1000, {});
    expect(inC1.map((hit) => hit.key)).toEqual(
      all
        .filter((hit) => rows.find(([rowid]) => rowid === hit.key)![1] === 'c1')
        .slice(0, 5)
        .map((hit) => hit.key),
    );
    const windowed = index.search('u', watermark, read, query, 1000, { since: 1100, until: 1200 });
    expect(windowed.length).toBeGreaterThan(0);
    expect(
      windowed.every((hit) => {
        const at = rows.find(([rowid]) => rowid === hit.key)![2];
        return at >= 1100 && at < 1200;
      }),
    ).toBe(true);
    expect(index.search('u', watermark, read, query, 10, { conversationIds: ['missing'] })).toEqual([]);
  });

  it('reads only newer rows to catch up, reads afresh after a deletion or an erasure, and a page at a time when asked', () => {
    const rows = corpus(50, 3);
    const source = reader(rows);
    const index = new KeywordIndex();
    const query = keywordQuery(['battery']);
    index.search('u', { lastId: 30, ...fresh }, source.read, query, 5, {});
    expect(source.count()).toBe(50);
    // The reader hands out rows past the watermark too; the copy keeps them, and reads nothing more next time.
    index.search('u', { lastId: 148, ...fresh }, source.read, query, 5, {});
    expect(source.count()).toBe(50);
    index.search('u', { lastId: 148, deletions: 1, erasures: 0 }, source.read, query, 5, {});
    expect(source.count()).toBe(100);
    index.search('u', { lastId: 148, deletions: 1, erasures: 2 }, source.read, query, 5, {});
    expect(source.count()).toBe(150);
    const paged = reader(rows);
    const other = new KeywordIndex();
    const watermark = { lastId: 148, ...fresh };
    let pages = 0;
    while (!other.catchUp('u', watermark, paged.page(20))) pages += 1;
    expect([pages, paged.count()]).toEqual([2, 50]);
    expect(other.search('u', watermark, paged.read, query, 5, {})).toEqual(
      index.search('u', { lastId: 148, deletions: 1, erasures: 2 }, source.read, query, 5, {}),
    );
    expect(other.search('nobody', { lastId: 0, ...fresh }, () => [], query, 5, {})).toEqual([]);
  });

  it('forgets the least recently searched user once its copies pass the byte budget, and reads that user afresh', () => {
    const rows = corpus(200, 5);
    const source = reader(rows);
    const index = new KeywordIndex(1);
    const watermark = { lastId: rows.at(-1)![0], ...fresh };
    const query = keywordQuery(['mesh']);
    const first = index.search('a', watermark, source.read, query, 3, {});
    index.search('b', watermark, source.read, query, 3, {});
    expect(source.count()).toBe(400);
    expect(index.bytes).toBeGreaterThan(0);
    expect(index.search('a', watermark, source.read, query, 3, {})).toEqual(first);
    expect(source.count()).toBe(600);
  });
});
