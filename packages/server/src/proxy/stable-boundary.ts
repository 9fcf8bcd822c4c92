import type { BuiltContext } from '@mnemo/core';

/**
 * How many leading messages of a context are its stable part (DESIGN invariant 7: the system prompt,
 * the memory block and the raw turns since the watermark), byte-identical from one request to the next
 * until a compaction: the report's `stable.messageCount` (everything before the recalled snippets and
 * the newest user turn; 0 for a sliding window). A prompt cache breakpoint placed after them is read
 * again by the next request.
 */
export function stableBoundary(context: BuiltContext): number {
  return Math.min(context.report.stable.messageCount, context.messages.length);
}
