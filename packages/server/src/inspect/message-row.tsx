import type { Child } from 'hono/jsx';
import type { Message } from '@mnemo/core';
import { DataTable } from './data-table.js';
import { formatCount, formatTime } from './inspector-text.js';

/**
 * One stored message as a table row: seq, role, tokens, time, and its content (tool calls shown as JSON);
 * with `erasable` (the user and conversation it belongs to), a button to erase it and all made of it.
 */
export function MessageRow({
  message,
  focus = false,
  erasable,
}: {
  message: Message;
  focus?: boolean;
  erasable?: { userId: string; conversationId: string };
}) {
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
        {erasable === undefined ? null : (
          <div>
            <button
              type="button"
              class="small"
              data-action="erase-message"
              data-user={erasable.userId}
              data-conversation={erasable.conversationId}
              data-seq={message.seq}
            >
              Erase…
            </button>
          </div>
        )}
      </td>
    </tr>
  );
}

/** Stored messages as a table (seq, role, tokens, time, content): its children are {@link MessageRow}s and any rows between them. */
export function MessageTable({
  children,
  bodyData,
}: {
  children?: Child;
  bodyData?: Readonly<Record<string, string>>;
}) {
  return (
    <DataTable
      columns={[
        { label: 'Seq', numeric: true },
        'Role',
        { label: 'Tokens', numeric: true },
        { label: 'Time', hideNarrow: true },
        'Content',
      ]}
      {...(bodyData === undefined ? {} : { bodyData })}
    >
      {children}
    </DataTable>
  );
}
