import type { Fact } from '@mnemo/core';
import { DataTable } from './data-table.js';
import { hashLink, inspectorRoutes } from './inspector-links.js';
import { formatTime } from './inspector-text.js';

/**
 * Facts with their validity and a link to the message each was said in; with `editable`, a current fact
 * has buttons to retire or correct it (the page asks for confirmation, then calls the API with its key).
 */
export function FactTable({ facts, editable = false }: { facts: readonly Fact[]; editable?: boolean }) {
  const columns = [
    'Subject',
    'Attribute',
    'Value',
    'Valid from',
    'Valid to',
    { label: 'Confidence', numeric: true, hideNarrow: true },
    'Said in',
  ];
  return (
    <DataTable columns={editable ? [...columns, 'Edit'] : columns}>
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
            {fact.expiresAt === undefined ? null : <span class="tag warn">expires {formatTime(fact.expiresAt)}</span>}
          </td>
          <td class="num hide-narrow">{fact.confidence.toFixed(2)}</td>
          <td>
            {fact.sourceConversationId === undefined ? (
              <span class="hint">{fact.extractor}</span>
            ) : (
              <SourceLinks userId={fact.userId} conversationId={fact.sourceConversationId} seqs={fact.sourceSeqs} />
            )}
          </td>
          {editable ? <td>{fact.validTo === undefined ? <FactActions fact={fact} /> : null}</td> : null}
        </tr>
      ))}
    </DataTable>
  );
}

/** Retire and Correct buttons of a current fact: the page's script confirms and calls `DELETE` / `PATCH /v1/facts/{id}`. */
function FactActions({ fact }: { fact: Fact }) {
  const data = {
    'data-fact-id': fact.id,
    'data-user': fact.userId,
    'data-label': `${fact.attribute}: ${fact.value}`,
    'data-value': fact.value,
  };
  return (
    <span class="actions">
      <button type="button" class="small" data-action="retire-fact" {...data}>
        Retire
      </button>
      <button type="button" class="small" data-action="correct-fact" {...data}>
        Correct…
      </button>
    </span>
  );
}

/** Links to the messages a fact or relation came from, each opening the transcript at that message. */
export function SourceLinks({
  userId,
  conversationId,
  seqs,
}: {
  userId: string;
  conversationId: string;
  seqs: readonly number[];
}) {
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
