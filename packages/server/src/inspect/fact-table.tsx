import type { Fact } from '@mnemo/core';
import { DataTable } from './data-table.js';
import { hashLink, inspectorRoutes } from './inspector-links.js';
import { formatTime } from './inspector-text.js';

/** Facts with their validity and a link to the message each was said in. */
export function FactTable({ facts }: { facts: readonly Fact[] }) {
  return (
    <DataTable columns={['Subject', 'Attribute', 'Value', 'Valid from', 'Valid to', { label: 'Confidence', numeric: true, hideNarrow: true }, 'Said in']}>
      {facts.map((fact) => (
        <tr data-fact={fact.id} data-current={fact.validTo === undefined ? 'true' : 'false'}>
          <td>{fact.subject}</td>
          <td>
            <code>{fact.attribute}</code>
          </td>
          <td>
            {fact.value}
            <div class="hint hide-narrow">“{fact.text}”</div>
          </td>
          <td>{formatTime(fact.validFrom)}</td>
          <td>
            {fact.validTo === undefined ? <span class="tag">current</span> : formatTime(fact.validTo)}
            {fact.supersededBy === undefined ? null : <span class="tag warn">superseded</span>}
          </td>
          <td class="num hide-narrow">{fact.confidence.toFixed(2)}</td>
          <td>
            {fact.sourceConversationId === undefined ? (
              <span class="hint">{fact.extractor}</span>
            ) : (
              <SourceLinks userId={fact.userId} conversationId={fact.sourceConversationId} seqs={fact.sourceSeqs} />
            )}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/** Links to the messages a fact or relation came from, each opening the transcript at that message. */
export function SourceLinks({ userId, conversationId, seqs }: { userId: string; conversationId: string; seqs: readonly number[] }) {
  if (seqs.length === 0) return <span class="hint">{conversationId}</span>;
  return (
    <span>
      {seqs.map((seq, index) => (
        <>
          {index === 0 ? '' : ', '}
          <a data-source-seq={seq} href={hashLink(inspectorRoutes.conversation(userId, conversationId, { seq }))}>
            {index === 0 ? `${conversationId} · ` : ''}seq {seq}
          </a>
        </>
      ))}
    </span>
  );
}
