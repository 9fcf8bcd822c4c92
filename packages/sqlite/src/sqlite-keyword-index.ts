import { keywordTokens } from './sqlite-keyword-tokens.js';
import { ConversationNames, copyInto, slotFilter, UserCopies, type ScanFilter, type UserCopy, type Watermark } from './sqlite-user-copies.js';

/** One message as the index reads it: rowid, conversation, time (epoch ms), content. */
export type KeywordRow = readonly [rowid: number, conversationId: string, createdAt: number, content: string];

/** Reads the user's messages with a rowid above `afterRowid`, in rowid order (all of them, or one page). */
export type KeywordReader = (afterRowid: number) => readonly KeywordRow[];

/** A message the index ranks: its rowid and BM25 score (higher is better). */
export interface KeywordHit {
  readonly rowid: number;
  readonly score: number;
}

/** The most bytes of word lists one store keeps in memory before it forgets the least recently searched user. */
export const defaultKeywordCacheBytes = 128 * 1024 * 1024;

// Okapi BM25 with the common defaults, and the IDF that stays positive (ln(1 + …)): the formula of
// PostgreSQL's keyword search and of core's in-memory store.
const k1 = 1.2;
const b = 0.75;
const maxFrequency = 0xffff;

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

// The slots of the messages holding one word, ascending, with how often each holds it.
class Postings {
  slots = new Int32Array(4);
  frequencies = new Uint16Array(4);
  size = 0;

  /** Adds a slot; returns the bytes the lists grew by. */
  push(slot: number, frequency: number): number {
    let grown = 0;
    if (this.size === this.slots.length) {
      const capacity = 2 * this.size;
      this.slots = copyInto(new Int32Array(capacity), this.slots, this.size);
      this.frequencies = copyInto(new Uint16Array(capacity), this.frequencies, this.size);
      grown = this.size * 6;
    }
    this.slots[this.size] = slot;
    this.frequencies[this.size] = Math.min(frequency, maxFrequency);
    this.size += 1;
    return grown;
  }
}

// One user's messages, in slots (rowid order): rowid, conversation number, time, length in words; and
// the posting list of every word they hold.
class UserWords implements UserCopy {
  deletions = 0;
  erasures = 0;
  lastRead = 0;
  size = 0;
  totalLength = 0;
  rowids = new Float64Array(64);
  createdAt = new Float64Array(64);
  conversations = new Int32Array(64);
  lengths = new Uint32Array(64);
  readonly names = new ConversationNames();
  readonly words = new Map<string, Postings>();
  #postingBytes = 0;

  get bytes(): number {
    return this.rowids.length * 24 + this.#postingBytes;
  }

  add(rows: readonly KeywordRow[]): void {
    if (this.size + rows.length > this.rowids.length) this.#grow(this.size + rows.length);
    const counts = new Map<string, number>();
    for (const [rowid, conversationId, createdAt, content] of rows) {
      this.lastRead = rowid;
      const slot = this.size;
      const tokens = keywordTokens(content);
      this.rowids[slot] = rowid;
      this.createdAt[slot] = createdAt;
      this.conversations[slot] = this.names.numberOf(conversationId);
      this.lengths[slot] = tokens.length;
      this.totalLength += tokens.length;
      counts.clear();
      for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
      for (const [token, count] of counts) {
        let postings = this.words.get(token);
        if (postings === undefined) {
          postings = new Postings();
          this.words.set(token, postings);
          // The map entry, the word and the lists' first slots, roughly.
          this.#postingBytes += 96 + 2 * token.length;
        }
        this.#postingBytes += postings.push(slot, count);
      }
      this.size += 1;
    }
  }

  /** The slots holding every word of a group (the smallest frequency among them), or undefined. */
  matches(group: readonly string[]): Postings | undefined {
    const lists = group.map((word) => this.words.get(word));
    if (lists.some((list) => list === undefined)) return undefined;
    const [first, ...rest] = (lists as Postings[]).sort((x, y) => x.size - y.size);
    if (rest.length === 0) return first;
    const both = new Postings();
    const cursors = rest.map(() => 0);
    for (let index = 0; index < first!.size; index += 1) {
      const slot = first!.slots[index]!;
      let frequency = first!.frequencies[index]!;
      let everywhere = true;
      for (let other = 0; other < rest.length && everywhere; other += 1) {
        const list = rest[other]!;
        let cursor = cursors[other]!;
        while (cursor < list.size && list.slots[cursor]! < slot) cursor += 1;
        cursors[other] = cursor;
        if (cursor < list.size && list.slots[cursor] === slot) frequency = Math.min(frequency, list.frequencies[cursor]!);
        else everywhere = false;
      }
      if (everywhere) both.push(slot, frequency);
    }
    return both;
  }

  #grow(needed: number): void {
    let capacity = this.rowids.length;
    while (capacity < needed) capacity *= 2;
    this.rowids = copyInto(new Float64Array(capacity), this.rowids, this.size);
    this.createdAt = copyInto(new Float64Array(capacity), this.createdAt, this.size);
    this.conversations = copyInto(new Int32Array(capacity), this.conversations, this.size);
    this.lengths = copyInto(new Uint32Array(capacity), this.lengths, this.size);
  }
}

/**
 * A process's keyword index of users' messages (decision 0027): per user, the posting list of every word
 * (`keywordTokens`), kept in step with the file by a watermark (`UserCopies`), ranked by BM25 over the
 * user's own messages with an exact top k. The index only ranks: the hits' messages are read from the
 * file with their owner checked, so a stale copy can miss a hit but never show one that is gone or
 * someone else's.
 */
export class KeywordIndex {
  readonly #copies: UserCopies<UserWords, KeywordRow>;
  #scores = new Float64Array(0);
  #touched = new Int32Array(0);

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
    const words = this.#copies.sync(key, watermark, read, () => new UserWords(), (copy, rows) => copy.add(rows), false);
    return words === undefined || words.lastRead >= watermark.lastId;
  }

  /**
   * The `k` best messages for `query` (from {@link keywordQuery}) among the user's messages that pass
   * `filter`, by BM25 summed over the query's word groups each message holds; ties go to the newest
   * message. Brings the copy up to `watermark` first with `read`.
   */
  search(key: string, watermark: Watermark, read: KeywordReader, query: readonly (readonly string[])[], k: number, filter: ScanFilter): KeywordHit[] {
    const words = this.#copies.sync(key, watermark, read, () => new UserWords(), (copy, rows) => copy.add(rows), true);
    return words === undefined || words.size === 0 ? [] : this.#rank(words, query, k, filter);
  }

  #rank(words: UserWords, query: readonly (readonly string[])[], k: number, filter: ScanFilter): KeywordHit[] {
    const { size, lengths } = words;
    if (this.#scores.length < size) {
      this.#scores = new Float64Array(Math.max(size, 2 * this.#scores.length));
      this.#touched = new Int32Array(this.#scores.length);
    }
    const scores = this.#scores;
    const touched = this.#touched;
    let count = 0;
    const lengthScale = (k1 * b) / (words.totalLength / size || 1);
    for (const group of query) {
      const postings = words.matches(group);
      if (postings === undefined || postings.size === 0) continue;
      const idf = Math.log(1 + (size - postings.size + 0.5) / (postings.size + 0.5));
      const { slots, frequencies } = postings;
      for (let index = 0; index < postings.size; index += 1) {
        const slot = slots[index]!;
        const frequency = frequencies[index]!;
        if (scores[slot] === 0) touched[count++] = slot;
        scores[slot] = scores[slot]! + (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b) + lengthScale * lengths[slot]!);
      }
    }
    const keep = slotFilter(filter, words.names, words.conversations, words.createdAt);
    const best = new TopK(k);
    for (let index = 0; index < count; index += 1) {
      const slot = touched[index]!;
      if (keep === undefined || keep(slot)) best.offer(scores[slot]!, words.rowids[slot]!);
      scores[slot] = 0;
    }
    return best.sorted();
  }
}

// The k best (score, rowid) pairs seen, ties to the larger rowid: a min-heap whose root is the worst kept.
class TopK {
  readonly #k: number;
  readonly #scores: number[] = [];
  readonly #rowids: number[] = [];

  constructor(k: number) {
    this.#k = k;
  }

  offer(score: number, rowid: number): void {
    const scores = this.#scores;
    const rowids = this.#rowids;
    if (scores.length < this.#k) {
      scores.push(score);
      rowids.push(rowid);
      this.#up(scores.length - 1);
    } else if (worse(scores[0]!, rowids[0]!, score, rowid)) {
      scores[0] = score;
      rowids[0] = rowid;
      this.#down(0);
    }
  }

  sorted(): KeywordHit[] {
    return this.#scores.map((score, index) => ({ score, rowid: this.#rowids[index]! })).sort((x, y) => y.score - x.score || y.rowid - x.rowid);
  }

  #up(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!worse(this.#scores[index]!, this.#rowids[index]!, this.#scores[parent]!, this.#rowids[parent]!)) return;
      this.#swap(index, parent);
      index = parent;
    }
  }

  #down(index: number): void {
    const size = this.#scores.length;
    for (;;) {
      let worst = index;
      for (const child of [2 * index + 1, 2 * index + 2]) {
        if (child < size && worse(this.#scores[child]!, this.#rowids[child]!, this.#scores[worst]!, this.#rowids[worst]!)) worst = child;
      }
      if (worst === index) return;
      this.#swap(index, worst);
      index = worst;
    }
  }

  #swap(a: number, c: number): void {
    [this.#scores[a], this.#scores[c]] = [this.#scores[c]!, this.#scores[a]!];
    [this.#rowids[a], this.#rowids[c]] = [this.#rowids[c]!, this.#rowids[a]!];
  }
}

function worse(score: number, rowid: number, thanScore: number, thanRowid: number): boolean {
  return score < thanScore || (score === thanScore && rowid < thanRowid);
}
