import { describe, expect, it } from 'vitest';
import { KeywordIndex, keywordQuery, keywordRow } from './sqlite-keyword-index.js';
import { keywordTokens } from './sqlite-keyword-tokens.js';
import { watermarkSource } from './sqlite-user-copies.js';

/** A message as the file holds it: rowid, conversation, time (epoch ms), content. */
type FileRow = readonly [rowid: number, conversationId: string, createdAt: number, content: string];

// Each read runs at once (the counts below stand in for the file's, read in the same "transaction").
const noTransaction = { transaction: <T>(fn: () => T) => Object.assign(() => fn(), { immediate: () => fn() }) };

/** A file of the user's rows (in rowid order), its deletion and erasure counts, and the rows handed out. */
function reader(rows: FileRow[]) {
  let handed = 0;
  const counts = { deletions: 0, erasures: 0 };
  const source = watermarkSource(noTransaction, {
    watermark: () => ({ lastId: rows.at(-1)?.[0] ?? 0, ...counts }),
    rowsAfter: (afterId, limit) => {
      const found = rows.filter(([rowid]) => rowid > afterId).slice(0, limit < 0 ? undefined : limit);
      handed += found.length;
      return found;
    },
    toRow: (row) => keywordRow(...(row as FileRow)),
  });
  return { source, counts, count: () => handed };
}

/** BM25 of every row, written out plainly: the reference the index must match. */
function bruteForce(rows: readonly FileRow[], terms: readonly string[], k: number): { key: number; score: number }[] {
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
function corpus(count: number, seed: number): FileRow[] {
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

describe('in-memory keyword index', () => {
  it("ranks exactly as BM25 over the user's messages, ties to the newest, for many queries and cuts", async () => {
    const rows = corpus(400, 7);
    const { source } = reader(rows);
    const index = new KeywordIndex();
    for (const terms of [
      ['battery'],
      ['summit', 'weather'],
      ['running', 'runs', 'ran'],
      ['caroline', "i've"],
      ['storm', 'lake', 'camp', 'relay'],
      ['node'],
    ]) {
      for (const k of [1, 5, 50, 1000]) {
        const hits = await index.search('u', source, keywordQuery(terms), k, {});
        const expected = bruteForce(rows, terms, k);
        expect(
          hits.map((hit) => hit.key),
          `${terms.join(' ')} k=${k}`,
        ).toEqual(expected.map((hit) => hit.key));
        hits.forEach((hit, position) => expect(hit.score).toBeCloseTo(expected[position]!.score, 8));
      }
    }
    expect(await index.search('u', source, keywordQuery(['absent']), 10, {})).toEqual([]);
  });

  it('matches a term of several words only where all of them are, and counts a stem once', async () => {
    const rows: FileRow[] = [
      [1, 'c', 1, "I've got a new antenna"],
      [2, 'c', 2, 'I have been to the summit'],
      [3, 'c', 3, 've i'],
      [4, 'c', 4, 'running'],
    ];
    const { source } = reader(rows);
    const index = new KeywordIndex();
    expect((await index.search('u', source, keywordQuery(["i've"]), 10, {})).map((hit) => hit.key)).toEqual([3, 1]);
    expect(keywordQuery(['run', 'running', 'runs'])).toEqual([['run']]);
    expect(keywordQuery(['🎉', '...'])).toEqual([]);
  });

  it('keeps only the conversations and the time window asked for, with the k best of those', async () => {
    const rows = corpus(300, 11);
    const { source } = reader(rows);
    const index = new KeywordIndex();
    const query = keywordQuery(['battery', 'solar']);
    const inC1 = await index.search('u', source, query, 5, { conversationIds: ['c1', 'missing'] });
    const all = await index.search('u', source, query, 1000, {});
    expect(inC1.map((hit) => hit.key)).toEqual(
      all
        .filter((hit) => rows.find(([rowid]) => rowid === hit.key)![1] === 'c1')
        .slice(0, 5)
        .map((hit) => hit.key),
    );
    const windowed = await index.search('u', source, query, 1000, { since: 1100, until: 1200 });
    expect(windowed.length).toBeGreaterThan(0);
    expect(
      windowed.every((hit) => {
        const at = rows.find(([rowid]) => rowid === hit.key)![2];
        return at >= 1100 && at < 1200;
      }),
    ).toBe(true);
    expect(await index.search('u', source, query, 10, { conversationIds: ['missing'] })).toEqual([]);
  });

  it('reads only newer rows to catch up, and reads afresh after a deletion or an erasure', async () => {
    const rows = corpus(50, 3);
    const file = reader(rows.slice(0, 30));
    const index = new KeywordIndex();
    const query = keywordQuery(['battery']);
    await index.search('u', file.source, query, 5, {});
    expect(file.count()).toBe(30);
    const grown = reader(rows);
    await index.search('u', grown.source, query, 5, {});
    expect(grown.count()).toBe(20);
    await index.search('u', grown.source, query, 5, {});
    expect(grown.count()).toBe(20);
    grown.counts.deletions = 1;
    const afterDeletion = await index.search('u', grown.source, query, 5, {});
    expect(grown.count()).toBe(70);
    grown.counts.erasures = 2;
    expect(await index.search('u', grown.source, query, 5, {})).toEqual(afterDeletion);
    expect(grown.count()).toBe(120);
    expect(afterDeletion).toEqual(await new KeywordIndex().search('u', reader(rows).source, query, 5, {}));
    expect(await index.search('nobody', reader([]).source, query, 5, {})).toEqual([]);
  });

  it('forgets the least recently searched user once its copies pass the byte budget, and reads that user afresh', async () => {
    const rows = corpus(200, 5);
    const file = reader(rows);
    const index = new KeywordIndex(1);
    const query = keywordQuery(['mesh']);
    const first = await index.search('a', file.source, query, 3, {});
    await index.search('b', file.source, query, 3, {});
    expect(file.count()).toBe(400);
    expect(index.bytes).toBeGreaterThan(0);
    expect(await index.search('a', file.source, query, 3, {})).toEqual(first);
    expect(file.count()).toBe(600);
  });
});
