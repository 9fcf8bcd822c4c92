import type { Message } from '@mnemo/core';
import { formatCount, formatTime } from './inspector-text.js';

/** One stored message as a table row: seq, role, tokens, time, and its content (tool calls shown as JSON). */
export function MessageRow({ message, focus = false }: { message: Message; focus?: boolean }) {
  const calls = message.toolCalls?.map((call) => `${call.function.name}(${call.function.arguments})`).join('\n');
  return (
    <tr data-seq={message.seq} class={focus ? 'focus' : undefined} {...(focus ? { 'data-focus': 'true' } : {})}>
      <td class="num">{message.seq}</td>
      <td>
        <span class={`role role-${message.role}`}>{message.role}</span>
        {message.name === undefined ? null : <div class="hint">{message.name}</div>}
      </td>
      <td class="num">{formatCount(message.tokens)}</td>
      <td class="hide-narrow">{formatTime(message.createdAt)}</td>
      <td class="content" data-content>
        {message.content}
        {calls === undefined ? null : <code class="mono">{`\n→ ${calls}`}</code>}
        {message.toolCallId === undefined ? null : <div class="hint">result of {message.toolCallId}</div>}
      </td>
    </tr>
  );
}
