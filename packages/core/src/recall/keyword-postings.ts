// The in-memory keyword index a store keeps per user (decision 0027): posting lists over the user's
// messages and an exact BM25 top k. Stores bring the words (SQLite tokenizes, PostgreSQL reads its
// lexemes) and keep their copies in step with their files; this is the part they share.

/** What a scan keeps: a time window (epoch ms) and a set of conversations (all when absent). */
export interface ScanFilter {
  readonly conversationIds?: readonly string[];
  readonly since?: number;
  readonly until?: number;
}

/** A message the index ranks: its key (a store's row number: SQLite's rowid, PostgreSQL's seq), slot and BM25 score. */
export interface KeywordHit {
  readonly key: number;
  readonly slot: number;
  readonly score: number;
}

/**
 * Okapi BM25's parameters, the common defaults. With the IDF that stays positive (ln(1 + …)) and scores
 * rounded to {@link keywordScoreDecimals}, the formula PostgreSQL's keyword statements compute in SQL, so
 * a store that ranks in SQL and in memory gives the same scores.
 */
export const keywordBm25 = Object.freeze({ k1: 1.2, b: 0.75 });
const { k1, b } = keywordBm25;
/** Decimals a score is rounded to (so ties do not depend on the order terms were added in). */
export const keywordScoreDecimals = 10;
const scale = 10 ** keywordScoreDecimals;
const maxFrequency = 0xffff;

/** A copy's conversation ids, each given a small number once. */
export class ConversationNames {
  readonly #names: string[] = [];
  readonly #index = new Map<string, number>();

  numberOf(conversationId: string): number {
    let name = this.#index.get(conversationId);
    if (name === undefined) {
      name = this.#names.length;
      this.#names.push(conversationId);
      this.#index.set(conversationId, name);
    }
    return name;
  }

  nameOf(number: number): string {
    return this.#names[number]!;
  }

  /** 1 at the numbers of the given conversations, 0 elsewhere. */
  allowed(conversationIds: readonly string[]): Uint8Array {
    const allowed = new Uint8Array(this.#names.length);
    for (const conversationId of conversationIds) {
      const name = this.#index.get(conversationId);
      if (name !== undefined) allowed[name] = 1;
    }
    return allowed;
  }
}

/** A predicate over slots for a filter (conversation numbers and times by slot), or undefined for none. */
export function slotFilter(
  filter: ScanFilter,
  names: ConversationNames,
  conversations: Int32Array,
  createdAt: Float64Array,
): ((slot: number) => boolean) | undefined {
  if (filter.conversationIds === undefined && filter.since === undefined && filter.until === undefined)
    return undefined;
  const allowed = filter.conversationIds === undefined ? undefined : names.allowed(filter.conversationIds);
  const since = filter.since ?? -Infinity;
  const until = filter.until ?? Infinity;
  return (slot) => {
    const at = createdAt[slot]!;
    return (allowed === undefined || allowed[conversations[slot]!] === 1) && at >= since && at < until;
  };
}

/** `source`'s first `size` items copied into `target` (a larger array), which is returned. */
export function copyInto<T extends Float64Array | Int32Array | Uint32Array | Uint16Array>(
  target: T,
  source: T,
  size: number,
): T {
  target.set(source.subarray(0, size));
  return target;
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

/** A message as a keyword copy adds it: key, conversation, time (epoch ms), how often it holds each word, length. */
export interface KeywordRow {
  readonly key: number;
  readonly conversationId: string;
  readonly createdAt: number;
  readonly frequencies: ReadonlyMap<string, number>;
  readonly length: number;
}

/**
 * One user's messages in slots (in the order added): key, conversation number, time, length in words;
 * and the posting list of every word they hold. A store's copy of the user (`UserCopies`' data).
 */
export class KeywordPostings {
  size = 0;
  totalLength = 0;
  keys = new Float64Array(64);
  createdAt = new Float64Array(64);
  conversations = new Int32Array(64);
  lengths = new Uint32Array(64);
  readonly names = new ConversationNames();
  readonly #words = new Map<string, Postings>();
  #postingBytes = 0;

  /** Bytes held, roughly (the lists and the vocabulary). */
  get bytes(): number {
    return this.keys.length * 24 + this.#postingBytes;
  }

  /** Adds a message: its key, conversation, time (epoch ms), how often it holds each word, and its length. */
  add(
    key: number,
    conversationId: string,
    createdAt: number,
    frequencies: ReadonlyMap<string, number>,
    length: number,
  ): void {
    if (this.size === this.keys.length) this.#grow(2 * this.size);
    const slot = this.size;
    this.keys[slot] = key;
    this.createdAt[slot] = createdAt;
    this.conversations[slot] = this.names.numberOf(conversationId);
    this.lengths[slot] = length;
    this.totalLength += length;
    for (const [word, frequency] of frequencies) {
      let postings = this.#words.get(word);
      if (postings === undefined) {
        postings = new Postings();
        this.#words.set(word, postings);
        // The map entry, the word and the lists' first slots, roughly.
        this.#postingBytes += 96 + 2 * word.length;
      }
      this.#postingBytes += postings.push(slot, frequency);
    }
    this.size += 1;
  }

  /** Adds messages in order (a page a store read). */
  addRows(rows: readonly KeywordRow[]): void {
    for (const row of rows) this.add(row.key, row.conversationId, row.createdAt, row.frequencies, row.length);
  }

  /** The slots holding every word of a group (the smallest frequency among them), or undefined. */
  matches(group: readonly string[]): Postings | undefined {
    const lists = group.map((word) => this.#words.get(word));
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
        if (cursor < list.size && list.slots[cursor] === slot)
          frequency = Math.min(frequency, list.frequencies[cursor]!);
        else everywhere = false;
      }
      if (everywhere) both.push(slot, frequency);
    }
    return both;
  }

  #grow(capacity: number): void {
    this.keys = copyInto(new Float64Array(capacity), this.keys, this.size);
    this.createdAt = copyInto(new Float64Array(capacity), this.createdAt, this.size);
    this.conversations = copyInto(new Int32Array(capacity), this.conversations, this.size);
    this.lengths = copyInto(new Uint32Array(capacity), this.lengths, this.size);
  }
}

/** How often each word occurs in a list of words. */
export function wordFrequencies(words: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

/**
 * Ranks a user's postings: the `k` best messages for `query` (word groups; a message matches a group
 * when it holds all of its words) among those that pass `filter`, by BM25 summed over the groups each
 * message holds, over all of the user's messages (document count, average length, document frequency);
 * ties go to the newest message (time, then key). Reuses its score buffers from one search to the next.
 */
export class KeywordRanker {
  #scores = new Float64Array(0);
  #touched = new Int32Array(0);

  rank(postings: KeywordPostings, query: readonly (readonly string[])[], k: number, filter: ScanFilter): KeywordHit[] {
    const { size, lengths } = postings;
    if (size === 0) return [];
    if (this.#scores.length < size) {
      this.#scores = new Float64Array(Math.max(size, 2 * this.#scores.length));
      this.#touched = new Int32Array(this.#scores.length);
    }
    const scores = this.#scores;
    const touched = this.#touched;
    let count = 0;
    const lengthScale = (k1 * b) / Math.max(postings.totalLength / size, 1);
    for (const group of query) {
      const list = postings.matches(group);
      if (list === undefined || list.size === 0) continue;
      const idf = Math.log(1 + (size - list.size + 0.5) / (list.size + 0.5));
      const { slots, frequencies } = list;
      for (let index = 0; index < list.size; index += 1) {
        const slot = slots[index]!;
        const frequency = frequencies[index]!;
        if (scores[slot] === 0) touched[count++] = slot;
        scores[slot] =
          scores[slot]! + (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b) + lengthScale * lengths[slot]!);
      }
    }
    const keep = slotFilter(filter, postings.names, postings.conversations, postings.createdAt);
    const best = new TopK(k, postings);
    for (let index = 0; index < count; index += 1) {
      const slot = touched[index]!;
      if (keep === undefined || keep(slot)) best.offer(Math.round(scores[slot]! * scale) / scale, slot);
      scores[slot] = 0;
    }
    return best.sorted();
  }
}

// The k best (score, slot) pairs seen, ties to the newer message: a min-heap whose root is the worst kept.
class TopK {
  readonly #k: number;
  readonly #postings: KeywordPostings;
  readonly #scores: number[] = [];
  readonly #slots: number[] = [];

  constructor(k: number, postings: KeywordPostings) {
    this.#k = k;
    this.#postings = postings;
  }

  offer(score: number, slot: number): void {
    if (this.#scores.length < this.#k) {
      this.#scores.push(score);
      this.#slots.push(slot);
      this.#up(this.#scores.length - 1);
    } else if (this.#worse(0, score, slot)) {
      this.#scores[0] = score;
      this.#slots[0] = slot;
      this.#down(0);
    }
  }

  sorted(): KeywordHit[] {
    const order = this.#scores
      .map((_, index) => index)
      .sort((x, y) =>
        this.#worse(x, this.#scores[y]!, this.#slots[y]!)
          ? 1
          : this.#worse(y, this.#scores[x]!, this.#slots[x]!)
            ? -1
            : 0,
      );
    return order.map((index) => ({
      key: this.#postings.keys[this.#slots[index]!]!,
      slot: this.#slots[index]!,
      score: this.#scores[index]!,
    }));
  }

  // Whether the kept entry at `index` ranks below (score, slot).
  #worse(index: number, score: number, slot: number): boolean {
    const kept = this.#scores[index]!;
    if (kept !== score) return kept < score;
    const { createdAt, keys } = this.#postings;
    const keptSlot = this.#slots[index]!;
    if (createdAt[keptSlot] !== createdAt[slot]) return createdAt[keptSlot]! < createdAt[slot]!;
    return keys[keptSlot]! < keys[slot]!;
  }

  #up(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      // The worst on top: the entry rises while it ranks below its parent.
      if (!this.#worse(index, this.#scores[parent]!, this.#slots[parent]!)) return;
      this.#swap(index, parent);
      index = parent;
    }
  }

  #down(index: number): void {
    const size = this.#scores.length;
    for (;;) {
      let worst = index;
      for (const child of [2 * index + 1, 2 * index + 2]) {
        if (child < size && this.#worse(child, this.#scores[worst]!, this.#slots[worst]!)) worst = child;
      }
      if (worst === index) return;
      this.#swap(index, worst);
      index = worst;
    }
  }

  #swap(a: number, c: number): void {
    [this.#scores[a], this.#scores[c]] = [this.#scores[c]!, this.#scores[a]!];
    [this.#slots[a], this.#slots[c]] = [this.#slots[c]!, this.#slots[a]!];
  }
}
