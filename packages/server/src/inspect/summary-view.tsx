import type { ExpandedSummary } from '@mnemo/core';
import { formatCount } from './inspector-text.js';
import { MessageRow, MessageTable } from './message-row.js';

/** A summary opened up (`expand`): the exact messages it stands for, and the summaries it folded in. */
export function SummaryExpansionView({ expanded }: { expanded: ExpandedSummary }) {
  const { summary, messages, folded } = expanded;
  return (
    <div data-expansion={summary.id}>
      <p class="hint">
        {formatCount(messages.length)} messages, seq {summary.fromSeq}–{summary.toSeq}, {formatCount(messages.reduce((sum, message) => sum + message.tokens, 0))}{' '}
        tokens verbatim.
      </p>
      <MessageTable bodyData={{ 'source-messages': 'true' }}>
        {messages.map((message) => (
          <MessageRow message={message} />
        ))}
      </MessageTable>
      {folded.length === 0 ? null : (
        <>
          <h3>Folded summaries</h3>
          <ul>
            {folded.map((source) => (
              <li data-folded={source.id}>
                level {source.level}, seq {source.fromSeq}–{source.toSeq}, {formatCount(source.tokens)} tokens, <code>{source.summarizer}</code>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
