import type { NewSummary } from './summary.js';
import { MemoryError } from '../errors/memory-error.js';
import type { Conversation } from '../store/store.js';

/**
 * The checks every store makes inside the transaction that writes a summary: the watermark is still
 * where the compaction read it (else `conflict`: another worker won), and the summary covers a range
 * that starts at 1, does not go back behind the watermark and does not run past the last message.
 */
export function checkSummaryRange(
  conversation: Conversation,
  summary: NewSummary,
  expectedWatermark: number,
  expectedErasedMessages?: number,
): void {
  // An erase since the compaction read its messages: what it wrote may hold erased text, so it is lost.
  if (expectedErasedMessages !== undefined && (conversation.erasedMessages ?? 0) !== expectedErasedMessages) {
    throw new MemoryError(
      'conflict',
      `messages of conversation ${conversation.conversationId} were erased meanwhile; the summary is not written`,
      {
        details: { erased: true },
      },
    );
  }
  if (conversation.summarizedThroughSeq !== expectedWatermark) {
    throw new MemoryError(
      'conflict',
      `conversation ${conversation.conversationId} was compacted through seq ${conversation.summarizedThroughSeq} meanwhile (expected ${expectedWatermark})`,
      { details: { expectedWatermark, watermark: conversation.summarizedThroughSeq } },
    );
  }
  if (
    summary.fromSeq !== 1 ||
    summary.toSeq < expectedWatermark ||
    summary.toSeq > conversation.messageCount ||
    summary.toSeq < 1
  ) {
    throw new MemoryError(
      'invalid_input',
      `summary range ${summary.fromSeq}–${summary.toSeq} must start at 1 and end between the watermark ${expectedWatermark} and the last message ${conversation.messageCount}`,
      { details: { fromSeq: summary.fromSeq, toSeq: summary.toSeq } },
    );
  }
}
