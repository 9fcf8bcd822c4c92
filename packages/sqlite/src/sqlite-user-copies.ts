import { ByteBudgetCache } from '@mnemo/core/store-kit';

/**
 * Where a user's rows stand in the file: the newest id (a `message_vectors.id`, a message rowid), the
 * user's deletions and all users' erasures counted so far.
 */
export interface Watermark {
  readonly lastId: number;
  readonly deletions: number;
  readonly erasures: number;
}

/** A process's copy of one user's rows, as {@link UserCopies} keeps it. */
export interface UserCopy {
  /** The deletion and erasure counts when the first row was read, and the newest id read since. */
  deletions: number;
  erasures: number;
  lastRead: number;
  readonly bytes: number;
}

/**
 * Copies of users' rows in a process, kept in step with the file by a watermark per user: rows newer
 * than the copy's last id are read and added; a deletion since the copy was read (another process's
 * erase, a re-embedded message) or any user's erasure makes the copy be read afresh. The least recently
 * searched users are forgotten once the copies pass `maxBytes`.
 */
export class UserCopies<Copy extends UserCopy, Row> {
  readonly #users: ByteBudgetCache<Copy>;

  constructor(maxBytes: number) {
    this.#users = new ByteBudgetCache(maxBytes);
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#users.bytes;
  }

  /**
   * The user's copy, started afresh (`create`) when it was read at another deletion or erasure count, past
   * the file's newest id, or when `stale` says so, then brought forward with `read(afterId)` (the user's
   * rows with a larger id, in id order): to the watermark, or by one `read` when `complete` is false.
   * Undefined when the user has no rows.
   */
  sync(
    key: string,
    watermark: Watermark,
    read: (afterId: number) => readonly Row[],
    create: () => Copy,
    add: (copy: Copy, rows: readonly Row[]) => void,
    complete: boolean,
    stale: (copy: Copy) => boolean = () => false,
  ): Copy | undefined {
    if (watermark.lastId === 0) {
      this.#users.delete(key);
      return undefined;
    }
    let copy = this.#users.get(key);
    if (
      copy !== undefined &&
      (stale(copy) ||
        copy.deletions !== watermark.deletions ||
        copy.erasures !== watermark.erasures ||
        copy.lastRead > watermark.lastId)
    ) {
      copy = undefined;
    }
    if (copy === undefined) {
      copy = create();
      copy.deletions = watermark.deletions;
      copy.erasures = watermark.erasures;
    }
    while (copy.lastRead < watermark.lastId) {
      const rows = read(copy.lastRead);
      add(copy, rows);
      if (rows.length === 0 || !complete) break;
    }
    this.#users.put(key, copy);
    return copy;
  }
}
