import { MemoryError } from '../errors/memory-error.js';
import type { MessageInput } from './message.js';
import type { Scope } from './scope.js';

/** The fields of a message that decide whether a tool result may follow it. */
export type ToolSequenceItem = Pick<MessageInput, 'role' | 'toolCalls' | 'toolCallId'>;

/**
 * Tool call ids still waiting for a result at the end of `history` (oldest first): those of the last
 * assistant message with tool calls, when only tool messages follow it.
 */
export function openToolCallIds(history: readonly ToolSequenceItem[]): Set<string> {
  const answered = new Set<string>();
  for (let index = history.length - 1; index >= 0; index -= 1) {
    const message = history[index]!;
    if (message.role === 'tool') {
      if (message.toolCallId !== undefined) answered.add(message.toolCallId);
      continue;
    }
    if (message.role !== 'assistant' || message.toolCalls === undefined) return new Set();
    return new Set(message.toolCalls.map((call) => call.id).filter((id) => !answered.has(id)));
  }
  return new Set();
}

/**
 * Checks that every tool message in `batch` answers an open call of the assistant message right before
 * it (after `history`, the stored tail of the conversation), once. This is the pairing the OpenAI chat
 * protocol requires; a history that breaks it could never be sent. Throws `invalid_input`.
 */
export function checkToolSequence(history: readonly ToolSequenceItem[], batch: readonly ToolSequenceItem[]): void {
  let open = openToolCallIds(history);
  batch.forEach((message, index) => {
    if (message.role === 'tool') {
      const id = message.toolCallId ?? '';
      if (!open.has(id)) {
        throw new MemoryError(
          'invalid_input',
          `message ${index}: tool result ${JSON.stringify(id)} does not answer an open tool call of the preceding assistant message`,
          { details: { field: 'toolCallId', index, openToolCallIds: [...open] } },
        );
      }
      open.delete(id);
      return;
    }
    open =
      message.role === 'assistant' && message.toolCalls !== undefined
        ? new Set(message.toolCalls.map((call) => call.id))
        : new Set();
  });
}

// How far back an append looks for the assistant message that a tool result answers.
const toolLookbackMessages = 64;

/**
 * {@link checkToolSequence} for a batch about to be appended: when it holds a tool result, reads the
 * conversation's newest messages (at most 64) to find the calls it answers. Throws `invalid_input`.
 */
export async function checkToolAppend(
  // The one store read it needs, typed here so that messages/ does not depend on store/.
  store: {
    listMessages(
      scope: Scope,
      range: { order: 'desc'; limit: number },
      options?: { signal?: AbortSignal },
    ): Promise<readonly ToolSequenceItem[]>;
  },
  scope: Scope,
  batch: readonly ToolSequenceItem[],
  options?: { signal?: AbortSignal },
): Promise<void> {
  if (!batch.some((message) => message.role === 'tool')) return;
  const tail = await store.listMessages(scope, { order: 'desc', limit: toolLookbackMessages }, options);
  checkToolSequence([...tail].reverse(), batch);
}
