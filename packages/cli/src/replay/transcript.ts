import type { MessageInput } from '@mnemo/core';

/** A parsed transcript: its messages in order, validated, and a short name for ids and reports. */
export interface Transcript {
  /** E.g. the file name without extension, or a LoCoMo `sample_id`. */
  readonly name: string;
  readonly messages: readonly MessageInput[];
  /** What the reader repaired and the user should know (a LoCoMo session dated by session order with `lenient`). */
  readonly warnings?: readonly string[];
}

/** Formats `mnemo replay` reads. */
export const transcriptFormats = ['jsonl', 'locomo'] as const;

/** One of {@link transcriptFormats}. */
export type TranscriptFormat = (typeof transcriptFormats)[number];
