import {
  KeywordPostings,
  KeywordRanker,
  wordFrequencies,
  type KeywordHit,
  type ScanFilter,
} from '@mnemo/core/store-kit';
import { keywordTokens } from './sqlite-keyword-tokens.js';
import { UserCopies, type UserCopy, type Watermark } from './sqlite-user-copies.js';

/** One message as the index reads it: rowid, conversation, time (epoch ms), content. */
export type KeywordRow = readonly [rowid: number, conversationId: string, createdAt: number, content: string];

/** Reads the user's messages with a rowid above `afterRowid`, in rowid order (all of them, or one page). */
export type KeywordReader = (afterRowid: number) => readonly KeywordRow[];

/** The most bytes of word lists one store keeps in memory before it forgets the least recently searched user. */
export const defaultKeywordCacheBytes = 128 * 1024 * 1024;

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

// One user's messages as postings keyed by rowid, with the watermark they were read at.
class UserWords extends KeywordPostings implements UserCopy {
  deletions = 0;
  erasures = 0;
  lastRead = 0;

  addRows(rows: readonly KeywordRow[]): void {
    for (const [rowid, conversationId, createdAt, content] of rows) {
      const tokens = keywordTokens(content);
      this.add(rowid, conversationId, createdAt, wordFrequencies(tokens), tokens.length);
      this.lastRead = rowid;
    }
  }
}

/**
 * A process's keyword index of users' messages (decision 0027): per user, the posting list of every word
 * (`keywordTokens`), kept in step with the file by a watermark (`UserCopies`), ranked by BM25 over the
 * user's own messages with an exact top k (`KeywordRanker`; keys are rowids). The index only ranks: the
 * hits' messages are read from the file with their owner checked, so a stale copy can miss a hit but
 * never show one that is gone or someone else's.
 */
export class KeywordIndex {
  readonly #copies: UserCopies<UserWords, KeywordRow>;
  readonly #ranker = new KeywordRanker();

  constructor(maxBytes = defaultKeywordCacheBytes) {
    this.#copies = new UserCopies(maxBytes);
  }

  /** Bytes of word lists held now (an estimate). */
  get bytes(): number {
    return this.#copies.bytes;
  }

  /**
   * Reads one page of the user's messages that the copy lacks (`read(afterRowid)` returns at most a page,
   * in rowid order); true once the copy holds every message up to `watermark`.
   */
  catchUp(key: string, watermark: Watermark, read: KeywordReader): boolean {
    const words = this.#sync(key, watermark, read, false);
    return words === undefined || words.lastRead >= watermark.lastId;
  }

  /**
   * The `k` best messages for `query` (from {@link keywordQuery}) among the user's messages that pass
   * `filter`; brings the copy up to `watermark` first with `read`.
   */
  search(
    key: string,
    watermark: Watermark,
    read: KeywordReader,
    query: readonly (readonly string[])[],
    k: number,
    filter: ScanFilter,
  ): KeywordHit[] {
    const words = this.#sync(key, watermark, read, true);
    return words === undefined ? [] : this.#ranker.rank(words, query, k, filter);
  }

  #sync(key: string, watermark: Watermark, read: KeywordReader, complete: boolean): UserWords | undefined {
    return this.#copies.sync(
      key,
      watermark,
      read,
      () => new UserWords(),
      (copy, rows) => copy.addRows(rows),
      complete,
    );
  }
}
