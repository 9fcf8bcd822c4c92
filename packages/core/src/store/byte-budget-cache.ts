/**
 * Values a process keeps per key within a byte budget (a store's in-memory copies of users' rows):
 * `put` counts a value's bytes as they are then and makes it the most recently used; past `maxBytes` the
 * least recently used others are forgotten. A value that grows is counted again at its next `put`.
 */
export class ByteBudgetCache<Value extends { readonly bytes: number }> {
  readonly #entries = new Map<string, { readonly value: Value; readonly bytes: number }>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes counted now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The value under `key`, without making it more recently used. */
  get(key: string): Value | undefined {
    return this.#entries.get(key)?.value;
  }

  /** Puts `value` under `key` as the most recently used, then forgets the least recently used others while over budget. */
  put(key: string, value: Value): void {
    this.delete(key);
    this.#entries.set(key, { value, bytes: value.bytes });
    this.#bytes += value.bytes;
    for (const [oldKey] of this.#entries) {
      if (this.#bytes <= this.#maxBytes || oldKey === key) break;
      this.delete(oldKey);
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}
