import type { CopySource } from '@mnemo/core/store-kit';
import type { SqliteDatabase } from './sqlite-driver.js';

/**
 * Where a user's rows stand in the file: the newest id (a `message_vectors.id`, a message rowid), the
 * user's deletions and all users' erasures counted so far. A copy's position is one too: the newest id it
 * has read, at the counts it was read at.
 */
export interface Watermark {
  readonly lastId: number;
  readonly deletions: number;
  readonly erasures: number;
}

/** The reads a {@link watermarkSource} is built on, each a statement of the user's rows. */
export interface WatermarkReads<Mark extends Watermark, Row> {
  /** Where the user's rows stand now. */
  readonly watermark: () => Mark;
  /** The user's rows with a larger id than `afterId`, in id order, at most `limit` (−1: all). */
  readonly rowsAfter: (afterId: number, limit: number) => readonly (readonly [id: number, ...unknown[]])[];
  /** A row as the copy adds it. */
  readonly toRow: (row: readonly [id: number, ...unknown[]]) => Row;
}

/**
 * The copy source of a user's rows in a SQLite file (decisions 0025, 0027): a new row always gets an id
 * above every row there is, a trigger counts every deleted row per user, and erasing a user counts an
 * erasure. So a copy read at the same counts is brought forward by the rows after the newest id it read,
 * and one read at other counts (or past the file's newest id) is read afresh. Each page is read in one
 * read transaction with the counts, and refused when they moved since the copy started.
 */
export function watermarkSource<Mark extends Watermark, Row>(
  database: Pick<SqliteDatabase, 'transaction'>,
  reads: WatermarkReads<Mark, Row>,
): CopySource<Mark, Mark, Row> {
  return {
    mark: reads.watermark,
    start: (mark) => ({ ...mark, lastId: 0 }),
    fits: (position, mark) =>
      position.deletions === mark.deletions && position.erasures === mark.erasures && position.lastId <= mark.lastId,
    behind: (position, mark) => Math.max(0, mark.lastId - position.lastId),
    rowsSince: (position, _mark, limit) =>
      database.transaction(() => {
        const now = reads.watermark();
        if (now.deletions !== position.deletions || now.erasures !== position.erasures) return undefined;
        const rows = reads.rowsAfter(position.lastId, Number.isFinite(limit) ? limit : -1);
        // A short page read every row up to the file's newest id in this snapshot.
        const lastRead = rows.length === 0 ? position.lastId : rows[rows.length - 1]![0];
        const lastId = rows.length < limit ? Math.max(lastRead, now.lastId) : lastRead;
        return { rows: rows.map(reads.toRow), position: { ...position, lastId } };
      })(),
  };
}
