import { describe, expect, it } from 'vitest';
import { VectorCodeIndex, type CodeRow } from './sqlite-vector-code-index.js';
import { bitCount, signCode, vectorBlob } from './sqlite-vector-codes.js';

/** A code row whose code is `bits` set bits (from bit 0 up) in a 64-bit code. */
function row(id: number, bits: number, conversationId = 'c1', createdAt = id): CodeRow {
  const code = new Uint32Array(2);
  for (let bit = 0; bit < bits; bit += 1) code[bit >>> 5]! |= 1 << (bit & 31);
  return [id, 1000 + id, conversationId, createdAt, new Uint8Array(vectorBlob(code))];
}

const zero = new Uint32Array(2);

describe('VectorCodeIndex', () => {
  it('counts bits and makes sign codes bit by bit', () => {
    expect([0, 1, 0xff, 0x80000000, 0xffffffff].map((word) => bitCount(word >>> 0))).toEqual([0, 1, 8, 1, 32]);
    expect(Array.from(signCode(Float32Array.from([1, -1, 0, 2, ...Array.from({ length: 30 }, () => -1), 3])))).toEqual([
      0b1001, 0b100,
    ]);
  });

  it('returns the nearest codes, the newest of a tie at the cut, and applies the filters', () => {
    const rows = [row(1, 5), row(2, 1), row(3, 3), row(4, 3), row(5, 3, 'c2', 50), row(6, 9)];
    const index = new VectorCodeIndex();
    const read = (afterId: number) => rows.filter(([id]) => id > afterId);
    const watermark = { lastId: 6, deletions: 0, erasures: 0 };
    expect(index.nearest('u', 2, watermark, read, zero, 3, {})).toEqual([1002, 1005, 1004]);
    expect(index.nearest('u', 2, watermark, read, zero, 2, { conversationIds: ['c1'] })).toEqual([1002, 1004]);
    expect(index.nearest('u', 2, watermark, read, zero, 10, { since: 4, until: 50 })).toEqual([1004, 1006]);
    expect(index.nearest('u', 2, watermark, read, zero, 10, { conversationIds: ['nope'] })).toEqual([]);
  });

  it('reads only newer rows while nothing was deleted, and everything again after a deletion', () => {
    const rows = [row(1, 1), row(2, 2)];
    const reads: number[] = [];
    const read = (afterId: number) => {
      reads.push(afterId);
      return rows.filter(([id]) => id > afterId);
    };
    const index = new VectorCodeIndex();
    expect(index.nearest('u', 2, { lastId: 2, deletions: 0, erasures: 0 }, read, zero, 1, {})).toEqual([1001]);
    expect(index.nearest('u', 2, { lastId: 2, deletions: 0, erasures: 0 }, read, zero, 1, {})).toEqual([1001]);
    rows.push(row(3, 0));
    expect(index.nearest('u', 2, { lastId: 3, deletions: 0, erasures: 0 }, read, zero, 1, {})).toEqual([1003]);
    // Row 3 (the nearest) deleted while row 4 was added: the newest id grew, but the copy is stale.
    rows.splice(2, 1);
    rows.push(row(4, 2));
    expect(index.nearest('u', 2, { lastId: 4, deletions: 1, erasures: 0 }, read, zero, 1, {})).toEqual([1001]);
    // Another user's erasure: the copy is read afresh although nothing of this user changed.
    expect(index.nearest('u', 2, { lastId: 4, deletions: 1, erasures: 1 }, read, zero, 1, {})).toEqual([1001]);
    expect(index.nearest('u', 2, { lastId: 0, deletions: 3, erasures: 1 }, read, zero, 1, {})).toEqual([]);
    expect(reads).toEqual([0, 2, 0, 0]);
  });

  it('forgets the least recently searched user past its byte budget and still answers for both', () => {
    const rows = Array.from({ length: 100 }, (_, at) => row(at + 1, at % 60));
    const read = (afterId: number) => rows.filter(([id]) => id > afterId);
    const index = new VectorCodeIndex(10_000);
    const watermark = { lastId: 100, deletions: 0, erasures: 0 };
    for (let round = 0; round < 3; round += 1) {
      expect(index.nearest('a', 2, watermark, read, zero, 1, {})).toEqual([1061]);
      expect(index.nearest('b', 2, watermark, read, zero, 1, {})).toEqual([1061]);
      expect(index.bytes).toBeLessThanOrEqual(10_000 + 128 * 28);
    }
  });
});
