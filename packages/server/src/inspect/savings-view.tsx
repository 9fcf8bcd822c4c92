import type { UsageEntry } from '@mnemo/core';
import { ConversationHeader } from './conversation-header.js';
import { DataTable } from './data-table.js';
import { inspectorRoutes } from './inspector-links.js';
import { formatCount, formatDollars } from './inspector-text.js';
import { SavingsPlot } from './savings-plot.js';

/** What the savings view shows: one conversation's ledger and the price to put on it. */
export interface SavingsViewProps {
  readonly userId: string;
  readonly conversationId: string;
  readonly entries: readonly UsageEntry[];
  /** Dollars per million input tokens. */
  readonly pricePerMillion: number;
  /** True when the ledger is longer than the view read. */
  readonly cut: boolean;
}

/** Tokens sent against what full-history requests would have cost, per request, with compaction's cost and the totals in tokens and dollars. */
export function SavingsView({ userId, conversationId, entries, pricePerMillion, cut }: SavingsViewProps) {
  const requests = entries.filter((entry) => entry.kind === 'context');
  const sent = requests.reduce((sum, entry) => sum + entry.sentTokens, 0);
  const full = requests.reduce((sum, entry) => sum + entry.fullHistoryTokens, 0);
  const compaction = entries
    .filter((entry) => entry.kind === 'summarize')
    .reduce((sum, entry) => sum + (entry.inputTokens ?? 0) + (entry.outputTokens ?? 0), 0);
  const net = full - sent - compaction;
  const rows: [string, number, string][] = [
    ['Sent', sent, 'tokens of the requests mnemo built'],
    ['Full history', full, 'the same requests carrying every stored message'],
    [
      'Compaction',
      compaction,
      'prompt + output tokens of the summaries (for the offline summarizer: what an LLM call would have cost)',
    ],
    ['Net saved', net, 'full history − sent − compaction'],
  ];
  return (
    <section data-view="savings">
      <ConversationHeader userId={userId} conversationId={conversationId} tab="savings" />
      <form class="bar" data-route={inspectorRoutes.savings(userId, conversationId)}>
        <label>
          Price ($ per million input tokens)
          <input type="number" name="price" min={0} step="0.01" value={String(pricePerMillion)} />
        </label>
        <button type="submit">Apply</button>
      </form>
      {requests.length === 0 ? (
        <p class="state state-empty" data-empty>
          No context request in the ledger yet: each request built through the API or the proxy adds a point here.
        </p>
      ) : (
        <>
          <div class="legend">
            <span>
              <i></i>sent per request
            </span>
            <span>
              <i class="full"></i>full history would have cost
            </span>
            <span>
              <i class="compaction"></i>compaction cost
            </span>
          </div>
          <SavingsPlot entries={entries} />
          {cut ? (
            <p class="hint">The ledger is longer: the plot shows its first {formatCount(entries.length)} entries.</p>
          ) : null}
        </>
      )}
      <h2>Totals over {formatCount(requests.length)} requests</h2>
      <p class="hint" data-cache-note>
        These totals price every token at the base price. Providers charge a prompt prefix they saw on the previous
        request at a fraction of it (10 % is common), and mnemo keeps its prompt's start the same from one request to
        the next until the next compaction, so you pay about a tenth for most of what it sends and full price for the
        newest turn, the recalled snippets and the request after each compaction.
      </p>
      <DataTable
        columns={[
          '',
          { label: 'Tokens', numeric: true },
          { label: `At $${pricePerMillion}/M`, numeric: true },
          { label: 'What', hideNarrow: true },
        ]}
      >
        {rows.map(([name, tokens, what]) => (
          <tr data-total={name.toLowerCase().replace(' ', '-')} data-tokens={tokens}>
            <td>{name}</td>
            <td class="num">{formatCount(tokens)}</td>
            <td class="num">{formatDollars(tokens, pricePerMillion)}</td>
            <td class="hide-narrow hint">{what}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}
