// The in-memory copy protocol of a store's search (issue 21, decision 0041): when a process's copy of a
// user's rows is brought forward, when it is read afresh, how it is paged, and which copies are forgotten.
// An adapter supplies only its reads (where the user's rows stand, the rows after a copy's position) and
// what its positions mean; the copies themselves are core's (keyword postings, vector codes).
import { MemoryError } from '../errors/memory-error.js';
import { createKeyedLock } from '../jobs/keyed-lock.js';
import { nextTurn } from '../jobs/next-turn.js';
import { ByteBudgetCache } from '../store/byte-budget-cache.js';
import type { Awaitable } from '../store/port.js';

/** Rows read after a copy's position, and the position after them. */
export interface CopyPage<Position, Row> {
  readonly rows: readonly Row[];
  readonly position: Position;
}

/**
 * What an adapter tells the copies about one user's rows. A `Mark` says where the rows stand now (SQLite:
 * the newest rowid and the deletion and erasure counts; PostgreSQL: per conversation its creation time,
 * message count and erasures), a `Position` how far a copy has read; both are the adapter's own types.
 */
export interface CopySource<Mark, Position, Row> {
  /** Where the user's rows stand now. */
  mark(): Awaitable<Mark>;
  /** The position of an empty copy about to be read up to `mark`. */
  start(mark: Mark): Position;
  /** False when rows were deleted or erased since the copy read up to `position`: it is read afresh. */
  fits(position: Position, mark: Mark): boolean;
  /** Rows a copy at `position` lacks by `mark` (an upper bound), 0 once it holds every row `mark` names. */
  behind(position: Position, mark: Mark): number;
  /**
   * At most `limit` of the rows after `position`, in the order they are added, read where the rows still
   * stand as `mark` says (each page checked against it); undefined when they no longer do (the copy is
   * then read afresh from a new mark).
   */
  rowsSince(position: Position, mark: Mark, limit: number): Awaitable<CopyPage<Position, Row> | undefined>;
}

/** A copy of one user's rows as core keeps it (keyword postings, vector codes). */
export interface CopyData<Row> {
  /** Bytes held, roughly; counted against the budget at each use. */
  readonly bytes: number;
  addRows(rows: readonly Row[]): void;
}

/** How {@link UserCopies} reads. */
export interface UserCopiesOptions<Mark, Data> {
  /** An empty copy for a user whose rows stand at `mark`. */
  readonly create: (mark: Mark) => Data;
  /** Bytes of copies a store keeps before it forgets the least recently searched user. */
  readonly maxBytes: number;
  /** Rows one read takes when a copy is far behind (each read its own page, a turn of the event loop between). */
  readonly pageRows: number;
  /** A copy at most this many rows behind is brought forward by the search itself, in one read. */
  readonly inlineRows: number;
  /**
   * What a search does with a copy further behind: `wait` reads it a page at a time (a turn of the
   * event loop between pages) and then answers; `load` answers `undefined` at once (the adapter answers
   * another way) while a background task reads it, one per user, retried {@link retryAfterMs} after it fails.
   */
  readonly farBehind: 'wait' | 'load';
}

/** Milliseconds a failed background load of a user is not started again. */
const retryAfterMs = 10_000;
/** Fresh starts one bringing forward tries before it gives up (every read found the rows changed under it). */
const maxFreshStarts = 100;

interface Entry<Position, Data> {
  position: Position;
  readonly data: Data;
  readonly bytes: number;
}

/**
 * Users' copies in one process, kept in step with the store by the adapter's marks: a copy that fits the
 * mark is brought forward by the rows since its position; one that no longer fits (a deletion, an
 * erasure, a conversation created again) is read afresh. One change of a user's copy runs at a time
 * (a keyed lock), and copies past `maxBytes` are forgotten least recently searched first. A copy only
 * ranks: the adapter reads every hit from the store with its owner checked, so a stale copy can miss a
 * hit but never show one that is gone or another user's.
 */
export class UserCopies<Mark, Position, Row, Data extends CopyData<Row>> {
  readonly #options: UserCopiesOptions<Mark, Data>;
  readonly #entries: ByteBudgetCache<Entry<Position, Data>>;
  readonly #locks = createKeyedLock();
  readonly #loads = new Map<string, Promise<void>>();
  readonly #failed = new Map<string, number>();
  #closed = false;

  constructor(options: UserCopiesOptions<Mark, Data>) {
    this.#options = Object.freeze({ ...options });
    this.#entries = new ByteBudgetCache(options.maxBytes);
  }

  /** Bytes of copies held now (an estimate). */
  get bytes(): number {
    return this.#entries.bytes;
  }

  /**
   * The user's copy brought up to `mark` (read from `source` when not given), then `use`d under the
   * user's lock; `undefined` (and `use` not called) while a copy far behind loads in the background.
   */
  async use<Result>(
    key: string,
    source: CopySource<Mark, Position, Row>,
    use: (data: Data, mark: Mark) => Awaitable<Result>,
    mark?: Mark,
  ): Promise<Result | undefined> {
    if (this.#loads.has(key)) return undefined;
    let far = false;
    const result = await this.#locks.run(key, async () => {
      let current = mark ?? (await source.mark());
      for (let start = 0; start < maxFreshStarts; start += 1) {
        const entry = this.#current(key, source, current);
        if (source.behind(entry.position, current) > this.#options.inlineRows) {
          if (this.#options.farBehind === 'load') {
            far = true;
            return undefined;
          }
          const loaded = await this.#load(key, source);
          return use(loaded.entry.data, loaded.mark);
        }
        if (await this.#read(entry, source, current, Infinity)) {
          this.#entries.put(key, entry);
          return use(entry.data, current);
        }
        this.#entries.delete(key);
        current = await source.mark();
      }
      throw changedUnderReads();
    });
    if (far) this.#startLoad(key, source);
    return result;
  }

  /** Reads the user's copy now if it is behind (a large user's first search would otherwise wait or be answered another way). */
  async warm(key: string, source: CopySource<Mark, Position, Row>): Promise<void> {
    this.#startLoad(key, source, true);
    await this.#loads.get(key);
  }

  /** Stops background loads (each after its current page) and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#loads.values()]);
  }

  #startLoad(key: string, source: CopySource<Mark, Position, Row>, force = false): void {
    if (this.#closed || this.#loads.has(key)) return;
    if (!force && Date.now() - (this.#failed.get(key) ?? -Infinity) < retryAfterMs) return;
    const load = (async () => {
      try {
        await this.#locks.run(key, () => this.#load(key, source));
        this.#failed.delete(key);
      } catch {
        // The next search after `retryAfterMs` tries again; the adapter answers until then.
        this.#failed.set(key, Date.now());
        this.#entries.delete(key);
      } finally {
        this.#loads.delete(key);
      }
    })();
    this.#loads.set(key, load);
  }

  // Brings the user's copy up to the store a page at a time, each page from a new mark, a turn of the
  // event loop between pages, so that a large user's first read does not hold the loop. A page that finds
  // the rows changed under it starts the copy afresh. Holds the user's lock (the caller's).
  async #load(
    key: string,
    source: CopySource<Mark, Position, Row>,
  ): Promise<{ entry: Entry<Position, Data>; mark: Mark }> {
    for (let freshStarts = 0; freshStarts < maxFreshStarts;) {
      const mark = await source.mark();
      const entry = this.#current(key, source, mark);
      if (source.behind(entry.position, mark) === 0 || this.#closed) {
        this.#entries.put(key, entry);
        return { entry, mark };
      }
      if (await this.#read(entry, source, mark, this.#options.pageRows)) {
        this.#entries.put(key, entry);
        if (source.behind(entry.position, mark) === 0) return { entry, mark };
      } else {
        this.#entries.delete(key);
        freshStarts += 1;
      }
      await nextTurn();
    }
    throw changedUnderReads();
  }

  // The user's copy if it fits `mark`, else a new empty one (held once it has been read into and put).
  #current(key: string, source: CopySource<Mark, Position, Row>, mark: Mark): Entry<Position, Data> {
    const entry = this.#entries.get(key);
    if (entry !== undefined && source.fits(entry.position, mark)) return entry;
    this.#entries.delete(key);
    const data = this.#options.create(mark);
    return {
      position: source.start(mark),
      data,
      get bytes() {
        return data.bytes;
      },
    };
  }

  // Reads up to `limit` rows the copy lacks by `mark` (all of them for Infinity) into it; false when the
  // store no longer stands as `mark` says (the copy keeps the pages read before and must be dropped).
  async #read(
    entry: Entry<Position, Data>,
    source: CopySource<Mark, Position, Row>,
    mark: Mark,
    limit: number,
  ): Promise<boolean> {
    let left = limit;
    while (left > 0 && source.behind(entry.position, mark) > 0) {
      const page = await source.rowsSince(entry.position, mark, Math.min(left, this.#options.pageRows));
      if (page === undefined) return false;
      entry.data.addRows(page.rows);
      entry.position = page.position;
      left -= Math.max(page.rows.length, 1);
    }
    return true;
  }
}

function changedUnderReads(): MemoryError {
  return new MemoryError(
    'unavailable',
    `a user's rows changed under ${maxFreshStarts} reads of their search copy; retry`,
    {
      details: { retryable: true },
    },
  );
}
