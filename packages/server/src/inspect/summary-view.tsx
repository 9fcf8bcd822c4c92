import type { ExpandedSummary } from '@mnemo/core';
import { inspectorRoutes } from './inspector-links.js';
import { formatCount } from './inspector-text.js';
import { MessageRow, MessageTable } from './message-row.js';

/** Source messages shown per page of an expanded summary. */
export const summaryPageSize = 100;

/**
 * A summary opened up (`expand`): the exact messages it stands for, a page of {@link summaryPageSize}
 * at a time (from `offset`, with links to the pages around it), and the summaries it folded in.
 */
export function SummaryExpansionView({ expanded, offset = 0 }: { expanded: ExpandedSummary; offset?: number }) {
  const { summary, messages, folded } = expanded;
  const start = Math.min(Math.max(0, offset), Math.max(0, messages.length - 1));
  const page = messages.slice(start, start + summaryPageSize);
  const route = (at: number) => inspectorRoutes.summary(summary.userId, summary.id, at);
  const pager =
    messages.length <= summaryPageSize ? null : (
      <p class="pager" data-summary-pager={summary.id}>
        {start === 0 ? null : (
          <a href="#" data-fragment-page={route(Math.max(0, start - summaryPageSize))}>
            ← Earlier {summaryPageSize}
          </a>
        )}
        <span class="hint">
          messages {formatCount(start + 1)}–{formatCount(start + page.length)} of {formatCount(messages.length)}
        </span>
        {start + summaryPageSize >= messages.length ? null : (
          <a href="#" data-fragment-page={route(start + summaryPageSize)}>
            Later {Math.min(summaryPageSize, messages.length - start - summaryPageSize)} →
          </a>
        )}
      </p>
    );
  return (
    <div data-expansion={summary.id}>
      <p class="hint">
        {formatCount(messages.length)} messages, seq {summary.fromSeq}–{summary.toSeq},{' '}
        {formatCount(messages.reduce((sum, message) => sum + message.tokens, 0))} tokens verbatim.
      </p>
      {pager}
      <MessageTable bodyData={{ 'source-messages': 'true' }}>
        {page.map((message) => (
          <MessageRow message={message} />
        ))}
      </MessageTable>
      {pager}
      {folded.length === 0 ? null : (
        <>
          <h3>Folded summaries</h3>
          <ul>
            {folded.map((source) => (
              <li data-folded={source.id}>
                level {source.level}, seq {source.fromSeq}–{source.toSeq}, {formatCount(source.tokens)} tokens,{' '}
                <code>{source.summarizer}</code>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
