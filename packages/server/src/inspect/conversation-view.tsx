import type { ConversationStats, Fact, Message, Relation, Summary } from '@mnemo/core';
import { ConversationHeader } from './conversation-header.js';
import { hashLink, inspectorRoutes } from './inspector-links.js';
import { formatCount, formatTime } from './inspector-text.js';
import { DataTable } from './data-table.js';
import { FactTable, SourceLinks } from './fact-table.js';
import { MessageRow, MessageTable } from './message-row.js';

/** A relation extracted from the conversation, with the names of its two ends. */
export interface NamedRelation {
  readonly relation: Relation;
  readonly subject: string;
  readonly object: string;
}

/** What one conversation's transcript view shows. */
export interface ConversationViewProps {
  readonly stats: ConversationStats;
  readonly messages: readonly Message[];
  readonly afterSeq: number;
  readonly pageSize: number;
  readonly focusSeq?: number;
  readonly summaries: readonly Summary[];
  readonly facts: readonly Fact[];
  readonly relations: readonly NamedRelation[];
}

/**
 * A conversation: its counters, every summary version (expandable to its exact source messages), the
 * facts and relations extracted from it (linked to their source messages), and one page of the
 * transcript with the summary watermark drawn where it lies.
 */
export function ConversationView(props: ConversationViewProps) {
  const { stats, summaries } = props;
  const { userId, conversationId } = stats;
  return (
    <section data-view="conversation">
      <ConversationHeader userId={userId} conversationId={conversationId} tab="transcript" />
      <div class="stats">
        <Stat label="messages" value={formatCount(stats.messageCount)} />
        <Stat label="tokens stored" value={formatCount(stats.totalTokens)} />
        <Stat
          label="summarized through"
          value={stats.summarizedThroughSeq === 0 ? 'not yet' : `seq ${formatCount(stats.summarizedThroughSeq)}`}
        />
        <Stat label="context requests" value={formatCount(stats.usage.requests)} />
        <Stat label="tokens saved" value={formatCount(stats.usage.savedTokens)} />
        <Stat label="last message" value={formatTime(stats.lastMessageAt)} />
      </div>
      <h2>Summaries</h2>
      {summaries.length === 0 ? (
        <p class="state state-empty">No summary yet: compaction runs once the raw history outgrows its trigger.</p>
      ) : (
        [...summaries]
          .reverse()
          .map((summary) => <SummaryDetails summary={summary} latest={summary.id === summaries.at(-1)?.id} />)
      )}
      <KnowledgeSection {...props} />
      <Transcript {...props} />
    </section>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div class="stat">
      <b>{value}</b>
      <span>{label}</span>
    </div>
  );
}

function SummaryDetails({ summary, latest }: { summary: Summary; latest: boolean }) {
  return (
    <details
      class="summary"
      data-summary={summary.id}
      data-fragment={inspectorRoutes.summary(summary.userId, summary.id)}
    >
      <summary>
        <b>Level {summary.level}</b> · seq {summary.fromSeq}–{summary.toSeq} · {formatCount(summary.tokens)} tokens ·{' '}
        <code>{summary.summarizer}</code>
        {latest ? <span class="tag">current</span> : null}
        {summary.fallbackReason === undefined ? null : <span class="tag warn">fallback: {summary.fallbackReason}</span>}
        <span class="hint"> · {formatTime(summary.createdAt)}</span>
      </summary>
      <div>
        <p class="summary-text">{summary.content}</p>
        <p class="hint">
          Cost {formatCount(summary.inputTokens)} prompt + {formatCount(summary.outputTokens)} output tokens
          {summary.foldedSummaryIds.length === 0
            ? ''
            : `; folded ${summary.foldedSummaryIds.length} earlier summar${summary.foldedSummaryIds.length === 1 ? 'y' : 'ies'}`}
          .
        </p>
        <h3>Source messages</h3>
        <div data-fragment-body></div>
      </div>
    </details>
  );
}

function KnowledgeSection({ facts, relations }: ConversationViewProps) {
  return (
    <>
      <h2>Facts from this conversation</h2>
      {facts.length === 0 ? (
        <p class="state state-empty">No fact was extracted from this conversation.</p>
      ) : (
        <FactTable facts={facts} />
      )}
      <h2>Entities and relations from this conversation</h2>
      {relations.length === 0 ? (
        <p class="state state-empty">No relation between entities was extracted from this conversation.</p>
      ) : (
        <DataTable columns={['Entity', 'Relation', 'Entity', 'Said in']}>
          {relations.map(({ relation, subject, object }) => (
            <tr data-relation={relation.id}>
              <td>{subject}</td>
              <td>
                <code>{relation.predicate}</code>
                {relation.validTo === undefined ? null : (
                  <span class="tag warn">ended {formatTime(relation.validTo)}</span>
                )}
              </td>
              <td>{object}</td>
              <td>
                {relation.sourceConversationId === undefined ? null : (
                  <SourceLinks
                    userId={relation.userId}
                    conversationId={relation.sourceConversationId}
                    seqs={relation.sourceSeqs}
                  />
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

function Transcript({ stats, messages, afterSeq, pageSize, focusSeq }: ConversationViewProps) {
  const { userId, conversationId, summarizedThroughSeq: watermark } = stats;
  const first = messages[0]?.seq ?? afterSeq + 1;
  const last = messages.at(-1)?.seq ?? afterSeq;
  const older = afterSeq > 0 ? Math.max(0, afterSeq - pageSize) : undefined;
  const newer = last < stats.messageCount ? last : undefined;
  const pager = (
    <p class="pager">
      {older === undefined ? null : (
        <a href={hashLink(inspectorRoutes.conversation(userId, conversationId, { afterSeq: older }))}>← Older</a>
      )}
      <span class="hint">
        seq {first}–{last} of {formatCount(stats.messageCount)}
      </span>
      {newer === undefined ? null : (
        <a href={hashLink(inspectorRoutes.conversation(userId, conversationId, { afterSeq: newer }))}>Newer →</a>
      )}
    </p>
  );
  const watermarkRow = (
    <tr class="watermark" data-watermark={watermark}>
      <td colspan={5}>
        Summary watermark: messages 1–{watermark} are covered by the current summary; the context sends them as that
        summary. Newer messages are raw.
      </td>
    </tr>
  );
  return (
    <>
      <h2>Transcript</h2>
      {pager}
      <MessageTable bodyData={{ transcript: 'true' }}>
        {watermark > 0 && watermark < first && messages.length > 0 ? watermarkRow : null}
        {messages.map((message) => (
          <>
            <MessageRow message={message} focus={message.seq === focusSeq} erasable={{ userId, conversationId }} />
            {watermark === message.seq ? watermarkRow : null}
          </>
        ))}
        {/* The line lies past this page: say so at its end. */}
        {watermark > last && messages.length > 0 ? watermarkRow : null}
      </MessageTable>
      {pager}
    </>
  );
}
