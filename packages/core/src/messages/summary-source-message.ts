import type { MessageRole } from './message.js';

/** A stored message as a summarizer or an extractor sees it: the input of compaction and of fact and graph extraction. */
export interface SummarySourceMessage {
  readonly seq: number;
  readonly role: MessageRole;
  readonly content: string;
  readonly name?: string;
  /** ISO 8601. */
  readonly createdAt: string;
}
