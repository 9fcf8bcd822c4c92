import { describe, expect, it } from 'vitest';
import { bitCount, bitCountOfFour, signCode, VectorCodes, VectorCodeScanner } from './vector-codes.js';

describe('vector codes', () => {
  it('counts bits and makes sign codes bit by bit', () => {
    expect([0, 1, 0xff, 0x80000000, 0xffffffff].map((word) => bitCount(word >>> 0))).toEqual([0, 1, 8, 1, 32]);
    expect(bitCountOfFour(0xff, 0x1, 0xffffffff, 0)).toBe(41);
    expect(Array.from(signCode(Float32Array.from([1, -1, 0, 2, ...Array.from({ length: 30 }, () => -1), 3])))).toEqual([
      0b1001, 0b100,
    ]);
  });

  it('scans five-word codes (four at a time and the rest) to the nearest, the newest of a tie at the cut', () => {
    const codes = new VectorCodes(5);
    const code = (bits: number) => {
      const words = new Uint32Array(5);
      for (let bit = 0; bit < bits; bit += 1) words[bit >>> 5]! |= 1 << (bit & 31);
      return new Uint8Array(words.buffer);
    };
    codes.addRows([
      [10, 'a', 1, code(150)],
      [11, 'a', 2, code(3)],
      [12, 'b', 3, code(3)],
      [13, 'b', 4, code(140)],
    ]);
    const scanner = new VectorCodeScanner();
    expect(scanner.nearest(codes, new Uint32Array(5), 2, {})).toEqual([12, 11]);
    expect(scanner.nearest(codes, new Uint32Array(5), 3, {})).toEqual([11, 12, 13]);
    expect(scanner.nearest(codes, new Uint32Array(5), 1, { conversationIds: ['a'] })).toEqual([11]);
  });
});
