// Vector codes (decisions 0020, 0025): each vector's sign code (bit i set where dimension i is > 0); a
// search takes the nearest codes of a user by Hamming distance, a few times more than asked, and a store
// ranks those candidates by exact cosine distance on their stored floats. The codes are kept per user in
// a process's memory by the copy protocol (`store-kit/user-copies.ts`); a store brings the rows.
import type { CopyData } from '../store-kit/user-copies.js';
import { ConversationNames, copyInto, slotFilter, type ScanFilter } from './keyword-postings.js';

/** How many Hamming candidates a vector search takes per hit asked for, before the exact cosine rescoring. */
export const binaryCandidatesPerHit = 2;

/** How many Hamming candidates a search for `k` hits takes. */
export function binaryCandidates(k: number): number {
  return k * binaryCandidatesPerHit;
}

/**
 * The fewest bits a code has. A vector of fewer dimensions is projected onto this many fixed directions
 * first ({@link codeDirections}; SimHash: each bit says on which side of one hyperplane through the
 * origin the vector lies), because its own signs are too few to find its neighbours by: for the static
 * model's 64 dimensions, 64 sign bits kept 58 % of a query's exact top 10 among 5,882 LoCoMo messages at
 * 100 Hamming candidates, 512 projected bits 98 % (USE-lite's own 512 signs: 99.5 %). Part of the stored
 * format: SQLite keeps the codes, so changing this or the directions needs a migration that recomputes them.
 */
export const minCodeBits = 512;

/** Bits of a code for vectors of `dimensions`: their signs, or {@link minCodeBits} projected ones for fewer dimensions. */
export function codeBits(dimensions: number): number {
  return Math.max(dimensions, minCodeBits);
}

/** 32-bit words of a code for vectors of `dimensions` (padded with zero bits). */
export function codeWords(dimensions: number): number {
  return Math.ceil(codeBits(dimensions) / 32);
}

/**
 * The code of `vector`: bit `i % 32` of word `i / 32` is set where coordinate `i` is > 0, of the vector
 * itself when it has at least {@link minCodeBits} dimensions, else of its projection on {@link codeDirections}.
 */
export function signCode(vector: Float32Array): Uint32Array {
  const coordinates = vector.length >= minCodeBits ? vector : projectForCode(vector);
  const code = new Uint32Array(codeWords(vector.length));
  for (let index = 0; index < coordinates.length; index += 1) {
    if (coordinates[index]! > 0) code[index >>> 5]! |= 1 << (index & 31);
  }
  return code;
}

const directionsByDimensions = new Map<number, Int8Array>();

/**
 * {@link minCodeBits} directions of `dimensions` coordinates each, every coordinate +1 or −1 (as good
 * as Gaussian ones for SimHash, measured the same on LoCoMo), drawn by a fixed integer generator
 * (mulberry32, seed 0x6d6e656d), so every process and platform makes the same codes.
 */
export function codeDirections(dimensions: number): Int8Array {
  let directions = directionsByDimensions.get(dimensions);
  if (directions === undefined) {
    directions = new Int8Array(minCodeBits * dimensions);
    let state = 0x6d6e656d;
    for (let index = 0; index < directions.length; index += 1) {
      state = (state + 0x6d2b79f5) | 0;
      let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
      mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
      directions[index] = (mixed ^ (mixed >>> 14)) >>> 0 < 0x80000000 ? 1 : -1;
    }
    directionsByDimensions.set(dimensions, directions);
  }
  return directions;
}

// The vector's coordinates along each of the code's directions.
function projectForCode(vector: Float32Array): Float64Array {
  const dimensions = vector.length;
  const directions = codeDirections(dimensions);
  const projected = new Float64Array(minCodeBits);
  for (let bit = 0, offset = 0; bit < minCodeBits; bit += 1, offset += dimensions) {
    let sum = 0;
    for (let index = 0; index < dimensions; index += 1) sum += directions[offset + index]! * vector[index]!;
    projected[bit] = sum;
  }
  return projected;
}

/** Bits set in a 32-bit word. */
export function bitCount(word: number): number {
  let bits = word - ((word >>> 1) & 0x55555555);
  bits = (bits & 0x33333333) + ((bits >>> 2) & 0x33333333);
  return Math.imul((bits + (bits >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** The set bits of four 32-bit words together: each word's byte counts (≤ 8), summed (≤ 32 a byte), then the bytes added. */
export function bitCountOfFour(a: number, b: number, c: number, d: number): number {
  return Math.imul(byteCounts(a) + byteCounts(b) + byteCounts(c) + byteCounts(d), 0x01010101) >>> 24;
}

// The set bits of each byte of a word, in that byte.
function byteCounts(word: number): number {
  let bits = word - ((word >>> 1) & 0x55555555);
  bits = (bits & 0x33333333) + ((bits >>> 2) & 0x33333333);
  return (bits + (bits >>> 4)) & 0x0f0f0f0f;
}

/** One stored vector's code as a copy adds it: message key, conversation, time (epoch ms), the code's bytes. */
export type CodeRow = readonly [key: number, conversationId: string, createdAt: number, code: Uint8Array];

/**
 * One user's codes of one model, in slots: the message key (SQLite's rowid), conversation (a number of
 * `names`), time (epoch ms) and `words` 32-bit words of code per slot, in arrays that double when full.
 * A store's copy of the user's codes (`UserCopies`' data).
 */
export class VectorCodes implements CopyData<CodeRow> {
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

  /** Bytes held. */
  get bytes(): number {
    return this.rowids.length * (this.words * 4 + 20);
  }

  /** Adds code rows in order (a page a store read). */
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

/** Scans a user's codes for the nearest to a query; reuses its distance buffer from one search to the next. */
export class VectorCodeScanner {
  #distances = new Uint16Array(0);

  /**
   * The keys of the `count` codes nearest to `query` by Hamming distance among those that pass `filter`
   * (ties at the cut go to the newest message, the largest key).
   */
  nearest(codes: VectorCodes, query: Uint32Array, count: number, filter: ScanFilter): number[] {
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
