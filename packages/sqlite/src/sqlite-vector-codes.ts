// Vector search on SQLite (docs/decisions/0025-sqlite-vectors-in-a-plain-table.md, after 0020): each vector
// is stored with its sign code (bit i set where dimension i is > 0) in `message_vectors`; a search takes the
// nearest codes by Hamming distance, a few times more than asked, and ranks those candidates by exact cosine
// distance on their float vectors. The codes of a user are scanned in this process's memory
// (`sqlite-vector-code-index.ts`); the floats are read for the candidates only.

/** How many Hamming candidates a vector search takes per hit asked for, before the exact cosine rescoring. */
export const binaryCandidatesPerHit = 2;

/** How many Hamming candidates a search for `k` hits takes. */
export function binaryCandidates(k: number): number {
  return k * binaryCandidatesPerHit;
}

/** 32-bit words of a code for vectors of `dimensions` (padded with zero bits). */
export function codeWords(dimensions: number): number {
  return Math.ceil(dimensions / 32);
}

/** The sign code of `vector`: bit `i % 32` of word `i / 32` is set where `vector[i] > 0`. */
export function signCode(vector: Float32Array): Uint32Array {
  const code = new Uint32Array(codeWords(vector.length));
  for (let index = 0; index < vector.length; index += 1) {
    if (vector[index]! > 0) code[index >>> 5]! |= 1 << (index & 31);
  }
  return code;
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

/** A float32 vector as the blob stored in `message_vectors.vector` (and a code as `code`). */
export function vectorBlob(vector: Float32Array | Uint32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A stored float32 blob as a vector (copied when the blob is not 4-byte aligned). */
export function blobVector(blob: Uint8Array): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}
