/** The token table of a {@link StaticTokenizer}: whole words first, then the teacher's sub-word pieces. */
export interface StaticVocabulary {
  /** Lower-cased whole words; word `i` is row `i` of the embedding table. */
  readonly words: readonly string[];
  /** Sub-word pieces (SentencePiece style, `▁` marks a word start) with their unigram log-probabilities; piece `j` is row `words.length + j`. */
  readonly pieces: readonly (readonly [piece: string, logProbability: number])[];
}

const wordStart = '\u2581';
// Words (runs of letters and digits) longer than this are cut: a pasted hash or a base64 blob is not language.
const maxWordChars = 48;
// Segmentations of words outside the word list, kept per tokenizer; bounded so that random strings cannot grow it.
const maxCachedSegmentations = 20_000;
const wordPattern = /[\p{L}\p{N}]+/gu;

/**
 * Splits a text into rows of a static embedding table: lower-cased words (runs of letters and digits)
 * found in the word list map to their own row; any other word is segmented into the teacher's
 * sub-word pieces by the unigram model (the most probable segmentation, as SentencePiece does).
 * Characters no piece covers are skipped. Pure and synchronous: microseconds a sentence.
 */
export class StaticTokenizer {
  readonly #wordRows: Map<string, number>;
  readonly #pieceRows: Map<string, { row: number; logProbability: number }>;
  readonly #maxPieceChars: number;
  readonly #segmentations = new Map<string, readonly number[]>();

  constructor(vocabulary: StaticVocabulary) {
    this.#wordRows = new Map(vocabulary.words.map((word, row) => [word, row]));
    this.#pieceRows = new Map();
    let maxPieceChars = 1;
    vocabulary.pieces.forEach(([piece, logProbability], index) => {
      if (this.#pieceRows.has(piece)) return;
      this.#pieceRows.set(piece, { row: vocabulary.words.length + index, logProbability });
      maxPieceChars = Math.max(maxPieceChars, piece.length);
    });
    this.#maxPieceChars = maxPieceChars;
  }

  /** The table rows of `text`'s words, in order (a word may give several rows; an empty text gives none). */
  rows(text: string): number[] {
    const rows: number[] = [];
    for (const match of text.normalize('NFKC').toLowerCase().matchAll(wordPattern)) {
      const word = match[0].length > maxWordChars ? match[0].slice(0, maxWordChars) : match[0];
      const row = this.#wordRows.get(word);
      if (row !== undefined) rows.push(row);
      else for (const piece of this.#segment(word)) rows.push(piece);
    }
    return rows;
  }

  #segment(word: string): readonly number[] {
    const cached = this.#segmentations.get(word);
    if (cached !== undefined) return cached;
    const segmentation = this.#bestSegmentation(wordStart + word);
    if (this.#segmentations.size >= maxCachedSegmentations) this.#segmentations.clear();
    this.#segmentations.set(word, segmentation);
    return segmentation;
  }

  /** Viterbi over the pieces: the segmentation with the highest summed log-probability; an uncovered character is skipped at a fixed penalty. */
  #bestSegmentation(symbols: string): number[] {
    const length = symbols.length;
    const best = new Float64Array(length + 1).fill(-Infinity);
    const from = new Int32Array(length + 1).fill(-1);
    const rowAt = new Int32Array(length + 1).fill(-1);
    best[0] = 0;
    for (let start = 0; start < length; start += 1) {
      if (best[start] === -Infinity) continue;
      // Skipping a character costs more than any piece, so it is a last resort.
      const skipped = best[start]! - 100;
      if (skipped > best[start + 1]!) {
        best[start + 1] = skipped;
        from[start + 1] = start;
        rowAt[start + 1] = -1;
      }
      for (let end = start + 1; end <= Math.min(length, start + this.#maxPieceChars); end += 1) {
        const piece = this.#pieceRows.get(symbols.slice(start, end));
        if (piece === undefined) continue;
        const score = best[start]! + piece.logProbability;
        if (score > best[end]!) {
          best[end] = score;
          from[end] = start;
          rowAt[end] = piece.row;
        }
      }
    }
    const rows: number[] = [];
    for (let end = length; end > 0; end = from[end]!) if (rowAt[end]! >= 0) rows.push(rowAt[end]!);
    return rows.reverse();
  }
}
