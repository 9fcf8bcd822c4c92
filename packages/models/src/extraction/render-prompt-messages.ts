import type { SummarySourceMessage } from '@mnemo/core';

/**
 * Renders messages for an extraction prompt, one per line with the seq the model must cite:
 * `[seq 12 · 2024-05-02 08:15] user: …` (`role (name)` when the message has a name; continuation lines indented).
 */
export function renderPromptMessages(messages: readonly SummarySourceMessage[]): string {
  return messages
    .map((message) => {
      const when = message.createdAt.slice(0, 16).replace('T', ' ');
      const speaker = message.name === undefined ? message.role : `${message.role} (${message.name})`;
      return `[seq ${message.seq} · ${when}] ${speaker}: ${message.content.replace(/\n/g, '\n  ')}`;
    })
    .join('\n');
}
