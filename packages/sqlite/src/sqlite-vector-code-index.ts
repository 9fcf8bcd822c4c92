import {
  UserCopies,
  VectorCodes,
  VectorCodeScanner,
  type CodeRow,
  type CopySource,
  type ScanFilter,
} from '@mnemo/core/store-kit';
import type { Watermark } from './sqlite-user-copies.js';

/** Where a user's codes of one model stand in the file (`lastId`: the newest `message_vectors.id`), and the code's length in 32-bit words. */
export interface CodeWatermark extends Watermark {
  readonly words: number;
}

/** The most bytes of codes one store keeps in memory before it forgets the least recently searched user. */
export const defaultCodeCacheBytes = 256 * 1024 * 1024;
/** Code rows one read of a user's first search takes before it gives the event loop a turn (≈ 20–30 ms each). */
export const codePageRows = 5000;

/**
 * A process's copy of users' vector codes, per user and model, kept in step with the file by core's copy
 * protocol (`UserCopies` over a `watermarkSource`; the key names the model and the code's length). The
 * copy is only ever a prefilter: candidates are rescored from the file, checked against their owner, so a
 * stale copy can miss a hit but never show one that is gone or someone else's. The least recently
 * searched users are forgotten once the copies pass `maxBytes`.
 */
export class VectorCodeIndex {
  readonly #copies: UserCopies<CodeWatermark, CodeWatermark, CodeRow, VectorCodes>;
  readonly #scanner = new VectorCodeScanner();

  constructor(maxBytes = defaultCodeCacheBytes) {
    this.#copies = new UserCopies({
      create: (mark) => new VectorCodes(mark.words),
      maxBytes,
      pageRows: codePageRows,
      inlineRows: codePageRows,
      farBehind: 'wait',
    });
  }

  /** Bytes of codes held now. */
  get bytes(): number {
    return this.#copies.bytes;
  }

  /**
   * The message rowids of the `count` codes nearest to `query` by Hamming distance among the user's codes
   * that pass `filter` (ties at the cut go to the newest message); brings the user's copy up to the file
   * first. `key` names the user, the model and the code's length.
   */
  async nearest(
    key: string,
    source: CopySource<CodeWatermark, CodeWatermark, CodeRow>,
    query: Uint32Array,
    count: number,
    filter: ScanFilter,
  ): Promise<number[]> {
    return (await this.#copies.use(key, source, (codes) => this.#scanner.nearest(codes, query, count, filter))) ?? [];
  }
}
