import type { BuiltContext } from '@mnemo/core';

/**
 * How many leading messages of a context are its stable part (DESIGN invariant 7: the system prompt,
 * the memory block and the raw turns since the watermark), byte-identical from one request to the next
 * until a compaction: everything before the recalled snippets, or, without them, before the newest user
 * turn. A prompt cache breakpoint placed after them is read again by the next request.
 */
export function stableBoundary(context: BuiltContext): number {
  const newestUser = context.messages.findLastIndex((message) => message.role === 'user');
  if (newestUser < 0) return context.messages.length;
  // The hybrid policy puts its recalled block right before the newest user turn.
  const recalled = context.report.parts.some((part) => part.kind === 'recalled') ? 1 : 0;
  return Math.max(0, newestUser - recalled);
}
