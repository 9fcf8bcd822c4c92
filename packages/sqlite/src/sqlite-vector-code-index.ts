import { bitCount, bitCountOfFour } from './sqlite-vector-codes.js';
import {
  ConversationNames,
  copyInto,
  slotFilter,
  UserCopies,
  type CopyData,
  type CopySource,
  type ScanFilter,
} from '@mnemo/core/store-kit';
import type { Watermark } from './sqlite-user-copies.js';

/** Where a user's codes of one model stand in the file (`lastId`: the newest `message_vectors.id`), and the code's length in 32-bit words. */
export interface CodeWatermark extends Watermark {
  readonly words: number;
}

/** One stored vector's code as a copy adds it: message rowid, conversation, time (epoch ms), code. */
export type CodeRow = readonly [messageRowid: number, conversationId: string, createdAt: number, code: Uint8Array];

/** The most bytes of codes one store keeps in memory before it forgets the least recently searched user. */
export const defaultCodeCacheBytes = 256 * 1024 * 1024;
/** Code rows one read of a user's first search takes before it gives the event loop a turn (≈ 20–30 ms each). */
export const codePageRows = 5000;

// One user's codes of one model, in slots: the message rowid, conversation (an index into `names`), time
// (epoch ms) and `words` 32-bit words of code per slot, in arrays that double when full.
class UserCodes implements CopyData<CodeRow> {
  readonly words: number;
  size = 0;
  codes: Uint32Array;
  rowids: Float64Array;
  createdAt: Float64Array;
  conversations: Int32Array;
  readonly names = new ConversationNames();

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

  addRows(rows: readonly CodeRow[]): void {
    if (this.size + rows.length > this.rowids.length) this.#grow(this.size + rows.length);
    const bytes = new Uint8Array(this.codes.buffer);
    const codeBytes = this.words * 4;
    for (const [rowid, conversationId, createdAt, blob] of rows) {
      const slot = this.size;
      bytes.set(blob.subarray(0, codeBytes), slot * codeBytes);
      this.rowids[slot] = rowid;
      this.createdAt[slot] = createdAt;
      this.conversations[slot] = this.names.numberOf(conversationId);
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

/**
 * A process's copy of users' vector codes, per user and model, kept in step with the file by core's copy
 * protocol (`UserCopies` over a `watermarkSource`; the key names the model and the code's length). The
 * copy is only ever a prefilter: candidates are rescored from the file, checked against their owner, so a
 * stale copy can miss a hit but never show one that is gone or someone else's. The least recently
 * searched users are forgotten once the copies pass `maxBytes`.
 */
export class VectorCodeIndex {
  readonly #copies: UserCopies<CodeWatermark, CodeWatermark, CodeRow, UserCodes>;
  #distances = new Uint16Array(0);

  constructor(maxBytes = defaultCodeCacheBytes) {
    this.#copies = new UserCopies({
      create: (mark) => new UserCodes(mark.words),
      maxBytes,
      pageRows: codePageRows,
      inlineRows: codePageRows,
      farBehind: 'wait',
    });
  }

  /** Bytes of codes held now. */
  get bytes(): number {
    return this.#copies.bytes;
  }

  /**
   * The message rowids of the `count` codes nearest to `query` by Hamming distance among the user's codes
   * that pass `filter` (ties at the cut go to the newest message); brings the user's copy up to the file
   * first. `key` names the user, the model and the code's length.
   */
  async nearest(
    key: string,
    source: CopySource<CodeWatermark, CodeWatermark, CodeRow>,
    query: Uint32Array,
    count: number,
    filter: ScanFilter,
  ): Promise<number[]> {
    return (await this.#copies.use(key, source, (codes) => this.#scan(codes, query, count, filter))) ?? [];
  }

  #scan(codes: UserCodes, query: Uint32Array, count: number, filter: ScanFilter): number[] {
    const { size, words } = codes;
    if (this.#distances.length < size) this.#distances = new Uint16Array(Math.max(size, 2 * this.#distances.length));
    const distances = this.#distances;
    const code = codes.codes;
    const histogram = new Uint32Array(words * 32 + 1);
    const skipped = 0xffff;
    const keep = slotFilter(filter, codes.names, codes.conversations, codes.createdAt);
    const fours = words - (words % 4);
    let kept = 0;
    // The hot loop: one user's codes, XOR and bit count from locals, four words at a time (their bytes'
    // counts summed before the one multiply that adds them up; at most 32 a byte, so they cannot carry).
    for (let slot = 0, offset = 0; slot < size; slot += 1, offset += words) {
      if (keep !== undefined && !keep(slot)) {
        distances[slot] = skipped;
        continue;
      }
      let distance = 0;
      for (let word = 0; word < fours; word += 4) {
        distance += bitCountOfFour(
          code[offset + word]! ^ query[word]!,
          code[offset + word + 1]! ^ query[word + 1]!,
          code[offset + word + 2]! ^ query[word + 2]!,
          code[offset + word + 3]! ^ query[word + 3]!,
        );
      }
      for (let word = fours; word < words; word += 1) distance += bitCount(code[offset + word]! ^ query[word]!);
      distances[slot] = distance;
      histogram[distance]! += 1;
      kept += 1;
    }
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
