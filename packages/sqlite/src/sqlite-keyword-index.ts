import {
  KeywordPostings,
  KeywordRanker,
  UserCopies,
  wordFrequencies,
  type CopySource,
  type KeywordHit,
  type KeywordRow,
  type ScanFilter,
} from '@mnemo/core/store-kit';
import { keywordTokens } from './sqlite-keyword-tokens.js';
import type { Watermark } from './sqlite-user-copies.js';

/** The most bytes of word lists one store keeps in memory before it forgets the least recently searched user. */
export const defaultKeywordCacheBytes = 128 * 1024 * 1024;
/** Messages one read of a user's first keyword search takes and indexes before the event loop gets a turn (≈ 20–30 ms each). */
export const keywordPageRows = 2000;

/**
 * The words a query's terms search for: each term's index words (a term the tokenizer splits, "i've",
 * must match all of its words), without empty and repeated ones ("run" and "running" count once).
 */
export function keywordQuery(terms: readonly string[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const term of terms) {
    const words = [...new Set(keywordTokens(term))];
    if (words.length > 0) groups.set(words.join(' '), words);
  }
  return [...groups.values()];
}

/** A message as read from the file (rowid, conversation, time in epoch ms, content), tokenized for the copy. */
export function keywordRow(rowid: number, conversationId: string, createdAt: number, content: string): KeywordRow {
  const tokens = keywordTokens(content);
  return { key: rowid, conversationId, createdAt, frequencies: wordFrequencies(tokens), length: tokens.length };
}

/**
 * A process's keyword index of users' messages (decision 0027): per user, the posting list of every word
 * (`keywordTokens`), kept in step with the file by core's copy protocol (`UserCopies` over a
 * `watermarkSource`), ranked by BM25 over the user's own messages with an exact top k (`KeywordRanker`;
 * keys are rowids). The index only ranks: the hits' messages are read from the file with their owner
 * checked, so a stale copy can miss a hit but never show one that is gone or someone else's.
 */
export class KeywordIndex {
  readonly #copies: UserCopies<Watermark, Watermark, KeywordRow, KeywordPostings>;
  readonly #ranker = new KeywordRanker();

  constructor(maxBytes = defaultKeywordCacheBytes) {
    this.#copies = new UserCopies({
      create: () => new KeywordPostings(),
      maxBytes,
      pageRows: keywordPageRows,
      inlineRows: keywordPageRows,
      farBehind: 'wait',
    });
  }

  /** Bytes of word lists held now (an estimate). */
  get bytes(): number {
    return this.#copies.bytes;
  }

  /**
   * The `k` best messages for `query` (from {@link keywordQuery}) among the user's messages that pass
   * `filter`; brings the user's copy up to the file first.
   */
  async search(
    key: string,
    source: CopySource<Watermark, Watermark, KeywordRow>,
    query: readonly (readonly string[])[],
    k: number,
    filter: ScanFilter,
  ): Promise<KeywordHit[]> {
    return (await this.#copies.use(key, source, (words) => this.#ranker.rank(words, query, k, filter))) ?? [];
  }
}
