import { describe, expect, it } from 'vitest';
import { UserCopies, type CopyData, type CopySource } from './user-copies.js';

// A source over rows with ids, counted deletions (a deletion makes copies stale) and a log of the reads.
interface Mark {
  readonly lastId: number;
  readonly deletions: number;
}

class Ids implements CopyData<number> {
  readonly ids: number[] = [];
  get bytes(): number {
    return 100 + this.ids.length * 8;
  }
  addRows(rows: readonly number[]): void {
    this.ids.push(...rows);
  }
}

function table(count: number) {
  const state = { rows: Array.from({ length: count }, (_, index) => index + 1), deletions: 0, reads: [] as number[] };
  // Set to make the next page find the rows changed under it (another process's deletion).
  let raceOnce = false;
  const source: CopySource<Mark, Mark, number> = {
    mark: () => Promise.resolve({ lastId: state.rows.at(-1) ?? 0, deletions: state.deletions }),
    start: (mark) => ({ ...mark, lastId: 0 }),
    fits: (position, mark) => position.deletions === mark.deletions && position.lastId <= mark.lastId,
    behind: (position, mark) => Math.max(0, mark.lastId - position.lastId),
    rowsSince: async (position, mark, limit) => {
      await Promise.resolve();
      if (raceOnce || state.deletions !== position.deletions) {
        raceOnce = false;
        return undefined;
      }
      const rows = state.rows.filter((id) => id > position.lastId).slice(0, limit);
      state.reads.push(rows.length);
      return { rows, position: { ...position, lastId: rows.at(-1) ?? mark.lastId } };
    },
  };
  return { state, source, race: () => (raceOnce = true) };
}

const options = { create: () => new Ids(), maxBytes: 1_000_000, pageRows: 10, inlineRows: 25 } as const;
const ids = (data: Ids) => [...data.ids];

describe('UserCopies', () => {
  it('reads only the rows after the copy, and reads afresh after a deletion', async () => {
    const { state, source } = table(20);
    const copies = new UserCopies<Mark, Mark, number, Ids>({ ...options, farBehind: 'wait' });
    expect(await copies.use('u', source, ids)).toEqual(state.rows);
    state.rows.push(21, 22);
    expect(await copies.use('u', source, ids)).toEqual(state.rows);
    expect(state.reads).toEqual([10, 10, 2]);
    state.rows.splice(0, 1);
    state.deletions += 1;
    expect(await copies.use('u', source, ids)).toEqual(state.rows);
    expect(state.reads).toEqual([10, 10, 2, 10, 10, 1]);
  });

  it('waits for a copy far behind a page at a time, and starts afresh when the rows change under a read', async () => {
    const { state, source, race } = table(95);
    const copies = new UserCopies<Mark, Mark, number, Ids>({ ...options, farBehind: 'wait' });
    race();
    expect(await copies.use('u', source, ids)).toEqual(state.rows);
    expect(state.reads).toEqual([10, 10, 10, 10, 10, 10, 10, 10, 10, 5]);
  });

  it('answers undefined while a copy far behind loads in the background, then from the copy', async () => {
    const { state, source } = table(95);
    const copies = new UserCopies<Mark, Mark, number, Ids>({ ...options, farBehind: 'load' });
    expect(await copies.use('u', source, ids)).toBeUndefined();
    expect(await copies.use('u', source, ids)).toBeUndefined();
    await copies.warm('u', source);
    expect(await copies.use('u', source, ids)).toEqual(state.rows);
    expect(state.reads.reduce((sum, read) => sum + read, 0)).toBe(95);
    const small = table(5);
    expect(await copies.use('small', small.source, ids)).toEqual(small.state.rows);
    await copies.close();
    expect(await copies.use('other', table(95).source, ids)).toBeUndefined();
  });

  it('forgets the least recently used copy past the byte budget', async () => {
    const a = table(20);
    const b = table(20);
    const copies = new UserCopies<Mark, Mark, number, Ids>({ ...options, maxBytes: 400, farBehind: 'wait' });
    await copies.use('a', a.source, ids);
    await copies.use('b', b.source, ids);
    expect(copies.bytes).toBeLessThanOrEqual(400);
    await copies.use('a', a.source, ids);
    expect(a.state.reads).toEqual([10, 10, 10, 10]);
    expect(b.state.reads).toEqual([10, 10]);
  });
});
