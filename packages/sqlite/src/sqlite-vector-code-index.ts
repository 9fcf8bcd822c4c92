import { bitCount } from './sqlite-vector-codes.js';

/** Where a user's codes stand in the file: the newest `message_vectors.id`, the user's deletions and all users' erasures counted so far. */
export interface CodeWatermark {
  readonly lastId: number;
  readonly deletions: number;
  readonly erasures: number;
}

/** One stored vector's code row as read from `message_vectors_codes`: id, message rowid, conversation, time, code. */
export type CodeRow = readonly [id: number, messageRowid: number, conversationId: string, createdAt: number, code: Uint8Array];

/** Reads the user's code rows with an id above `afterId`, in id order (all of them, or one page). */
export type CodeReader = (afterId: number) => readonly CodeRow[];

/** What a scan keeps: a time window and a set of conversations (all when absent). */
export interface CodeFilter {
  readonly conversationIds?: readonly string[];
  readonly since?: number;
  readonly until?: number;
}

/** The most bytes of codes one store keeps in memory before it forgets the least recently searched user. */
export const defaultCodeCacheBytes = 256 * 1024 * 1024;

// One user's codes of one model, in slots: the message rowid, conversation (an index into `names`), time
// (epoch ms) and `words` 32-bit words of code per slot, in arrays that double when full.
class UserCodes {
  readonly words: number;
  /** The deletion and erasure counts when the first row was read, and the newest id read since. */
  deletions = 0;
  erasures = 0;
  lastRead = 0;
  size = 0;
  codes: Uint32Array;
  rowids: Float64Array;
  createdAt: Float64Array;
  conversations: Int32Array;
  readonly names: string[] = [];
  readonly nameIndex = new Map<string, number>();

  constructor(words: number) {
    this.words = words;
    this.codes = new Uint32Array(64 * words);
    this.rowids = new Float64Array(64);
    this.createdAt = new Float64Array(64);
    this.conversations = new Int32Array(64);
  }

  get bytes(): number {
    return this.rowids.length * (this.words * 4 + 20);
  }

  add(rows: readonly CodeRow[]): void {
    if (this.size + rows.length > this.rowids.length) this.#grow(this.size + rows.length);
    const bytes = new Uint8Array(this.codes.buffer);
    const codeBytes = this.words * 4;
    for (const [id, rowid, conversationId, createdAt, blob] of rows) {
      this.lastRead = id;
      const slot = this.size;
      bytes.set(blob.subarray(0, codeBytes), slot * codeBytes);
      this.rowids[slot] = rowid;
      this.createdAt[slot] = createdAt;
      let name = this.nameIndex.get(conversationId);
      if (name === undefined) {
        name = this.names.length;
        this.names.push(conversationId);
        this.nameIndex.set(conversationId, name);
      }
      this.conversations[slot] = name;
      this.size += 1;
    }
  }

  #grow(needed: number): void {
    let capacity = this.rowids.length;
    while (capacity < needed) capacity *= 2;
    this.codes = copyInto(new Uint32Array(capacity * this.words), this.codes, this.size * this.words);
    this.rowids = copyInto(new Float64Array(capacity), this.rowids, this.size);
    this.createdAt = copyInto(new Float64Array(capacity), this.createdAt, this.size);
    this.conversations = copyInto(new Int32Array(capacity), this.conversations, this.size);
  }
}

function copyInto<T extends Float64Array | Int32Array | Uint32Array>(target: T, source: T, size: number): T {
  target.set(source.subarray(0, size));
  return target;
}

/**
 * A process's copy of users' vector codes, kept in step with the file by a watermark per user and model:
 * rows newer than the copy's last id are read and added; a deletion since the copy was read (another
 * process's erase, a re-embedded message) or any user's erasure makes the copy be read afresh. The copy is only ever a
 * prefilter: candidates are rescored from the file, checked against their owner, so a stale copy can
 * miss a hit but never show one that is gone or someone else's. The least recently searched users are
 * forgotten once the copies pass `maxBytes`.
 */
export class VectorCodeIndex {
  readonly #users = new Map<string, UserCodes>();
  readonly #maxBytes: number;
  #bytes = 0;
  #distances = new Uint16Array(0);

  constructor(maxBytes = defaultCodeCacheBytes) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes of codes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The message rowids of the `count` codes nearest to `query` by Hamming distance among the user's codes
   * that pass `filter` (ties at the cut go to the newest message); brings the copy up to `watermark` first
   * with `read(afterId)`, which returns the user's code rows with a larger id, in id order.
   */
  nearest(key: string, words: number, watermark: CodeWatermark, read: CodeReader, query: Uint32Array, count: number, filter: CodeFilter): number[] {
    const codes = this.#sync(key, words, watermark, read);
    return codes === undefined ? [] : this.#scan(codes, query, count, filter);
  }

  /**
   * Reads one page of the user's codes that the copy lacks (`read(afterId)` returns at most a page, in id
   * order); true once the copy holds every row up to `watermark`. A search of a user with many vectors
   * calls it, a turn of the event loop between pages, before it searches, so the first search of a large
   * user does not hold the loop while its codes are read.
   */
  catchUp(key: string, words: number, watermark: CodeWatermark, read: CodeReader): boolean {
    const codes = this.#sync(key, words, watermark, read, false);
    return codes === undefined || codes.lastRead >= watermark.lastId;
  }

  // The user's copy, started afresh when it was read at another deletion or erasure count (or with other words, or
  // past the file's newest id), then brought forward: to the watermark, or by one `read` when `complete`
  // is false. Undefined when the user has no codes.
  #sync(key: string, words: number, watermark: CodeWatermark, read: CodeReader, complete = true): UserCodes | undefined {
    let codes = this.#users.get(key);
    if (codes !== undefined) this.#forget(key, codes);
    if (watermark.lastId === 0) return undefined;
    if (codes !== undefined && (codes.words !== words || codes.deletions !== watermark.deletions || codes.erasures !== watermark.erasures || codes.lastRead > watermark.lastId)) {
      codes = undefined;
    }
    if (codes === undefined) {
      codes = new UserCodes(words);
      codes.deletions = watermark.deletions;
      codes.erasures = watermark.erasures;
    }
    while (codes.lastRead < watermark.lastId) {
      const rows = read(codes.lastRead);
      codes.add(rows);
      if (rows.length === 0 || !complete) break;
    }
    // Most recently searched last: eviction takes the first.
    this.#users.set(key, codes);
    this.#bytes += codes.bytes;
    for (const [oldKey, old] of this.#users) {
      if (this.#bytes <= this.#maxBytes || old === codes) break;
      this.#forget(oldKey, old);
    }
    return codes;
  }

  #forget(key: string, codes: UserCodes): void {
    if (this.#users.delete(key)) this.#bytes -= codes.bytes;
  }

  #scan(codes: UserCodes, query: Uint32Array, count: number, filter: CodeFilter): number[] {
    const { size, words } = codes;
    if (this.#distances.length < size) this.#distances = new Uint16Array(Math.max(size, 2 * this.#distances.length));
    const distances = this.#distances;
    const code = codes.codes;
    const histogram = new Uint32Array(words * 32 + 1);
    // The hot loop: one user's codes, XOR and bit count word by word, from locals.
    for (let slot = 0, offset = 0; slot < size; slot += 1, offset += words) {
      let distance = 0;
      for (let word = 0; word < words; word += 1) distance += bitCount(code[offset + word]! ^ query[word]!);
      distances[slot] = distance;
    }
    const skipped = 0xffff;
    let kept = size;
    if (filter.conversationIds !== undefined || filter.since !== undefined || filter.until !== undefined) {
      const allowed = filter.conversationIds === undefined ? undefined : allowedNames(codes, filter.conversationIds);
      const since = filter.since ?? -Infinity;
      const until = filter.until ?? Infinity;
      for (let slot = 0; slot < size; slot += 1) {
        const at = codes.createdAt[slot]!;
        if ((allowed !== undefined && allowed[codes.conversations[slot]!] !== 1) || at < since || at >= until) {
          distances[slot] = skipped;
          kept -= 1;
        }
      }
    }
    for (let slot = 0; slot < size; slot += 1) if (distances[slot] !== skipped) histogram[distances[slot]!]! += 1;
    // The cut: the smallest distance at which `count` codes are reached; all nearer ones are taken, and
    // the newest of those exactly at the cut.
    let cut = histogram.length;
    let below = 0;
    if (kept > count) {
      for (let distance = 0; distance < histogram.length; distance += 1) {
        if (below + histogram[distance]! >= count) {
          cut = distance;
          break;
        }
        below += histogram[distance]!;
      }
    }
    const nearer: number[] = [];
    const atCut: number[] = [];
    const rowids = codes.rowids;
    for (let slot = 0; slot < size; slot += 1) {
      const distance = distances[slot]!;
      if (distance < cut) nearer.push(rowids[slot]!);
      else if (distance === cut) atCut.push(rowids[slot]!);
    }
    atCut.sort((a, b) => b - a);
    return [...nearer, ...atCut.slice(0, Math.max(0, count - nearer.length))];
  }
}

function allowedNames(codes: UserCodes, conversationIds: readonly string[]): Uint8Array {
  const allowed = new Uint8Array(codes.names.length);
  for (const conversationId of conversationIds) {
    const name = codes.nameIndex.get(conversationId);
    if (name !== undefined) allowed[name] = 1;
  }
  return allowed;
}
