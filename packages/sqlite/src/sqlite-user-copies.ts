/**
 * Where a user's rows stand in the file: the newest id (a `message_vectors.id`, a message rowid), the
 * user's deletions and all users' erasures counted so far.
 */
export interface Watermark {
  readonly lastId: number;
  readonly deletions: number;
  readonly erasures: number;
}

/** What a scan keeps: a time window and a set of conversations (all when absent). */
export interface ScanFilter {
  readonly conversationIds?: readonly string[];
  readonly since?: number;
  readonly until?: number;
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
  readonly #users = new Map<string, Copy>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
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
    let copy = this.#users.get(key);
    if (copy !== undefined) this.#forget(key, copy);
    if (watermark.lastId === 0) return undefined;
    if (copy !== undefined && (stale(copy) || copy.deletions !== watermark.deletions || copy.erasures !== watermark.erasures || copy.lastRead > watermark.lastId)) {
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
    // Most recently searched last: eviction takes the first.
    this.#users.set(key, copy);
    this.#bytes += copy.bytes;
    for (const [oldKey, old] of this.#users) {
      if (this.#bytes <= this.#maxBytes || old === copy) break;
      this.#forget(oldKey, old);
    }
    return copy;
  }

  #forget(key: string, copy: Copy): void {
    if (this.#users.delete(key)) this.#bytes -= copy.bytes;
  }
}

/** A copy's conversation ids, each given a small number once. */
export class ConversationNames {
  readonly #names: string[] = [];
  readonly #index = new Map<string, number>();

  numberOf(conversationId: string): number {
    let name = this.#index.get(conversationId);
    if (name === undefined) {
      name = this.#names.length;
      this.#names.push(conversationId);
      this.#index.set(conversationId, name);
    }
    return name;
  }

  /** 1 at the numbers of the given conversations, 0 elsewhere. */
  allowed(conversationIds: readonly string[]): Uint8Array {
    const allowed = new Uint8Array(this.#names.length);
    for (const conversationId of conversationIds) {
      const name = this.#index.get(conversationId);
      if (name !== undefined) allowed[name] = 1;
    }
    return allowed;
  }
}

/** A predicate over slots for a filter (conversation numbers and times by slot), or undefined for none. */
export function slotFilter(filter: ScanFilter, names: ConversationNames, conversations: Int32Array, createdAt: Float64Array): ((slot: number) => boolean) | undefined {
  if (filter.conversationIds === undefined && filter.since === undefined && filter.until === undefined) return undefined;
  const allowed = filter.conversationIds === undefined ? undefined : names.allowed(filter.conversationIds);
  const since = filter.since ?? -Infinity;
  const until = filter.until ?? Infinity;
  return (slot) => {
    const at = createdAt[slot]!;
    return (allowed === undefined || allowed[conversations[slot]!] === 1) && at >= since && at < until;
  };
}

/** `source`'s first `size` items copied into `target` (a larger array), which is returned. */
export function copyInto<T extends Float64Array | Int32Array | Uint32Array | Uint16Array>(target: T, source: T, size: number): T {
  target.set(source.subarray(0, size) as never);
  return target;
}
