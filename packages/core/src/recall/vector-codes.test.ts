import { describe, expect, it } from 'vitest';
import {
  bitCount,
  bitCountOfFour,
  codeBits,
  codeDirections,
  codeWords,
  signCode,
  VectorCodes,
  VectorCodeScanner,
} from './vector-codes.js';

const PINNED_DIRECTIONS = [1, 1, 1, -1, -1, 1, -1, 1, -1, -1, -1, 1];

describe('vector codes', () => {
  it('counts bits and makes sign codes bit by bit', () => {
    expect([0, 1, 0xff, 0x80000000, 0xffffffff].map((word) => bitCount(word >>> 0))).toEqual([0, 1, 8, 1, 32]);
    expect(bitCountOfFour(0xff, 0x1, 0xffffffff, 0)).toBe(41);
    const wide = new Float32Array(512).fill(-1);
    wide.set([1, -1, 0, 2], 0);
    wide[34] = 3;
    const code = signCode(wide);
    expect(code).toHaveLength(16);
    expect(Array.from(code.subarray(0, 2))).toEqual([0b1001, 0b100]);
    expect(code.subarray(2).every((word) => word === 0)).toBe(true);
  });

  it('projects a vector of fewer than 512 dimensions on 512 fixed ±1 directions, the same in every process', () => {
    expect([codeBits(64), codeWords(64), codeBits(1536), codeWords(1536)]).toEqual([512, 16, 1536, 48]);
    // The directions are part of the stored format (SQLite keeps the codes): pinned.
    expect(Array.from(codeDirections(4).subarray(0, 12))).toEqual(PINNED_DIRECTIONS);
    expect(codeDirections(64).every((value) => value === 1 || value === -1)).toBe(true);
    const ones = codeDirections(64).filter((value) => value === 1).length;
    expect(Math.abs(ones / (512 * 64) - 0.5)).toBeLessThan(0.01);

    const vector = Float32Array.from({ length: 64 }, (_, index) => Math.sin(index + 1));
    const code = signCode(vector);
    expect(code).toHaveLength(16);
    // The side of each hyperplane: a scaled vector has the same code, the opposite one the complement.
    expect(signCode(vector.map((value) => 3 * value))).toEqual(code);
    expect(Array.from(signCode(vector.map((value) => -value)))).toEqual(Array.from(code, (word) => ~word >>> 0));
    // Hamming distance follows the angle: a slightly moved vector is much nearer than an unrelated one.
    const hamming = (a: Uint32Array, b: Uint32Array) =>
      a.reduce((sum, word, index) => sum + bitCount(word ^ b[index]!), 0);
    const near = vector.map((value, index) => value + (index % 7 === 0 ? 0.1 : 0));
    const far = Float32Array.from({ length: 64 }, (_, index) => Math.cos(3 * index));
    expect(hamming(code, signCode(near))).toBeLessThan(hamming(code, signCode(far)) / 3);
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
