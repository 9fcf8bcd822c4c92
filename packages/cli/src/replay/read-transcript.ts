import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { MemoryError } from '@mnemo/core';
import { parseJsonlTranscript } from './parse-jsonl-transcript.js';
import { parseLocomoTranscript } from './parse-locomo-transcript.js';
import type { Transcript, TranscriptFormat } from './transcript.js';

/** Options of {@link readTranscript}. */
export interface ReadTranscriptOptions {
  /** Default: `locomo` for a `.json` file, `jsonl` otherwise. */
  readonly format?: TranscriptFormat;
  /** LoCoMo `sample_id` to read; only with the `locomo` format. */
  readonly conversation?: string;
  /** LoCoMo only: date a session whose date cannot be read by session order, with a warning, instead of refusing the file. */
  readonly lenient?: boolean;
  readonly signal?: AbortSignal;
}

/**
 * Reads and parses a whole transcript file before anything is stored. Throws the fs error of an
 * unreadable file, `invalid_input` for a malformed one (naming the line or field), `not_found` for an
 * unknown LoCoMo conversation.
 */
export async function readTranscript(path: string, options: ReadTranscriptOptions = {}): Promise<Transcript> {
  const format = options.format ?? (extname(path).toLowerCase() === '.json' ? 'locomo' : 'jsonl');
  if (options.conversation !== undefined && format !== 'locomo') {
    throw new MemoryError('invalid_input', '--conversation selects a LoCoMo sample; it needs --format locomo', {
      details: { field: 'conversation' },
    });
  }
  const text = await readFile(path, {
    encoding: 'utf8',
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const source = basename(path);
  if (format === 'locomo')
    return parseLocomoTranscript(text, source, options.conversation, { lenient: options.lenient === true });
  const messages = parseJsonlTranscript(text, source);
  return { name: basename(path, extname(path)), messages };
}
