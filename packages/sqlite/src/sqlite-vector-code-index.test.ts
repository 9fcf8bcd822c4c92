import { describe, expect, it } from 'vitest';
import type { CodeRow } from '@mnemo/core/store-kit';
import { VectorCodeIndex } from './sqlite-vector-code-index.js';
import { vectorBlob } from './sqlite-vector-codes.js';
import { watermarkSource } from './sqlite-user-copies.js';

type FileRow = readonly [id: number, ...CodeRow];

/** A code row whose code is `bits` set bits (from bit 0 up) in a 64-bit code. */
function row(id: number, bits: number, conversationId = 'c1', createdAt = id): FileRow {
  const code = new Uint32Array(2);
  for (let bit = 0; bit < bits; bit += 1) code[bit >>> 5]! |= 1 << (bit & 31);
  return [id, 1000 + id, conversationId, createdAt, new Uint8Array(vectorBlob(code))];
}

// Each read runs at once (the counts stand in for the file's, read in the same "transaction").
const noTransaction = { transaction: <T>(fn: () => T) => Object.assign(() => fn(), { immediate: () => fn() }) };

/** The user's code rows of a 64-bit model as a file holds them, its counts, and the ids each read started after. */
function file(rows: FileRow[]) {
  const counts = { deletions: 0, erasures: 0 };
  const reads: number[] = [];
  const source = watermarkSource(noTransaction, {
    watermark: () => ({ lastId: rows.at(-1)?.[0] ?? 0, ...counts, words: 2 }),
    rowsAfter: (afterId, limit) => {
      reads.push(afterId);
      return rows.filter(([id]) => id > afterId).slice(0, limit < 0 ? undefined : limit);
    },
    toRow: (fileRow) => fileRow.slice(1) as unknown as CodeRow,
  });
  return { source, counts, reads };
}

const zero = new Uint32Array(2);

describe('VectorCodeIndex', () => {
  it('returns the nearest codes, the newest of a tie at the cut, and applies the filters', async () => {
    const { source } = file([row(1, 5), row(2, 1), row(3, 3), row(4, 3), row(5, 3, 'c2', 50), row(6, 9)]);
    const index = new VectorCodeIndex();
    expect(await index.nearest('u', source, zero, 3, {})).toEqual([1002, 1005, 1004]);
    expect(await index.nearest('u', source, zero, 2, { conversationIds: ['c1'] })).toEqual([1002, 1004]);
    expect(await index.nearest('u', source, zero, 10, { since: 4, until: 50 })).toEqual([1004, 1006]);
    expect(await index.nearest('u', source, zero, 10, { conversationIds: ['nope'] })).toEqual([]);
  });

  it('reads only newer rows while nothing was deleted, and everything again after a deletion', async () => {
    const rows = [row(1, 1), row(2, 2)];
    const { source, counts, reads } = file(rows);
    const index = new VectorCodeIndex();
    expect(await index.nearest('u', source, zero, 1, {})).toEqual([1001]);
    expect(await index.nearest('u', source, zero, 1, {})).toEqual([1001]);
    rows.push(row(3, 0));
    expect(await index.nearest('u', source, zero, 1, {})).toEqual([1003]);
    // Row 3 (the nearest) deleted while row 4 was added: the newest id grew, but the copy is stale.
    rows.splice(2, 1);
    rows.push(row(4, 2));
    counts.deletions = 1;
    expect(await index.nearest('u', source, zero, 1, {})).toEqual([1001]);
    // Another user's erasure: the copy is read afresh although nothing of this user changed.
    counts.erasures = 1;
    expect(await index.nearest('u', source, zero, 1, {})).toEqual([1001]);
    rows.length = 0;
    counts.deletions = 3;
    expect(await index.nearest('u', source, zero, 1, {})).toEqual([]);
    expect(reads).toEqual([0, 2, 0, 0]);
  });

  it('forgets the least recently searched user past its byte budget and still answers for both', async () => {
    const { source } = file(Array.from({ length: 100 }, (_, at) => row(at + 1, at % 60)));
    const index = new VectorCodeIndex(10_000);
    for (let round = 0; round < 3; round += 1) {
      expect(await index.nearest('a', source, zero, 1, {})).toEqual([1061]);
      expect(await index.nearest('b', source, zero, 1, {})).toEqual([1061]);
      expect(index.bytes).toBeLessThanOrEqual(10_000 + 128 * 28);
    }
  });
});
