import {
  contextPolicies,
  type BuiltContext,
  type ContextItem,
  type ContextPolicy,
  type ContextRecallReport,
  type DropReason,
  type ExcludedItem,
  type Fact,
  type Message,
} from '@mnemo/core';
import { ConversationHeader } from './conversation-header.js';
import { DataTable } from './data-table.js';
import { hashLink, inspectorRoutes } from './inspector-links.js';
import { formatCount, formatScore } from './inspector-text.js';

/** The settings of the previewed request, as the form holds them. */
export interface ContextSettings {
  readonly policy: ContextPolicy;
  readonly maxTokens: number;
  readonly query?: string;
  readonly windowTurns: number;
}

/** What the "next request" view shows: the settings, the context built with them, and what its items point at. */
export interface ContextViewProps {
  readonly userId: string;
  readonly conversationId: string;
  readonly settings: ContextSettings;
  readonly built: BuiltContext;
  /** The user's facts by id, to name the fact items. */
  readonly facts: ReadonlyMap<string, Fact>;
  /** Recalled messages by id, to show what was recalled. */
  readonly recalled: ReadonlyMap<string, Message>;
}

const dropReasons: Readonly<Record<DropReason, string>> = {
  outside_window: 'outside the window of recent turns',
  over_budget: 'did not fit the budget',
  summarized: 'covered by the summary instead',
  awaiting_compaction: 'raw, not summarized yet, and did not fit (compaction will fold them)',
};

const excludedReasons: Readonly<Record<ExcludedItem['reason'], string>> = {
  over_budget: 'did not fit its share of the budget',
  already_in_context: 'already in the recent turns',
  conversation_fits: 'the whole conversation fits the budget, so it is sent verbatim and alone',
};

/** The context mnemo would send next, part by part, with what it left out and why each snippet was recalled. Builds a preview: the ledger is untouched. */
export function ContextView(props: ContextViewProps) {
  const { userId, conversationId, settings, built } = props;
  const { report } = built;
  return (
    <section data-view="context">
      <ConversationHeader userId={userId} conversationId={conversationId} tab="context" />
      <form class="bar" data-route={inspectorRoutes.context(userId, conversationId)}>
        <label>
          Policy
          <select name="policy">
            {contextPolicies.map((policy) => (
              <option value={policy} selected={policy === settings.policy}>
                {policy}
              </option>
            ))}
          </select>
        </label>
        <label>
          Budget (tokens)
          <input type="number" name="maxTokens" min={1} max={10000000} value={String(settings.maxTokens)} />
        </label>
        <label>
          Window turns
          <input type="number" name="windowTurns" min={1} value={String(settings.windowTurns)} />
        </label>
        <label>
          Query (the turn to recall for)
          <input type="text" name="query" value={settings.query ?? ''} placeholder="default: the newest user message" />
        </label>
        <button type="submit">Build</button>
      </form>
      <p class="hint">
        A preview: building it here does not enter the usage ledger. Counts are in {report.encoding} tokens.
      </p>
      <div class="stats">
        <div class="stat" data-sent-tokens={report.sentTokens}>
          <b>{formatCount(report.sentTokens)}</b>
          <span>tokens sent of {formatCount(report.maxTokens)}</span>
        </div>
        <div class="stat" data-full-history-tokens={report.fullHistoryTokens}>
          <b>{formatCount(report.fullHistoryTokens)}</b>
          <span>tokens with the full history</span>
        </div>
        <div class="stat">
          <b>{report.savedPercent}%</b>
          <span>saved ({formatCount(report.savedTokens)} tokens)</span>
        </div>
        <div class="stat">
          <b>{formatCount(built.messages.length)}</b>
          <span>messages, {formatCount(report.requestOverheadTokens)} tokens framing</span>
        </div>
      </div>
      <h2>Parts</h2>
      <DataTable columns={['Part', { label: 'Tokens', numeric: true }, { label: 'Messages', numeric: true }, 'Covers']}>
        {report.parts.map((part) => (
          <tr data-part={part.kind} data-tokens={part.tokens}>
            <td>
              {part.kind}
              {part.truncated === true ? <span class="tag warn">shortened to fit</span> : null}
            </td>
            <td class="num">{formatCount(part.tokens)}</td>
            <td class="num">{formatCount(part.messageCount)}</td>
            <td>
              {part.seqRange === undefined ? '—' : `seq ${part.seqRange.from}–${part.seqRange.to}`}
              {part.items === undefined ? '' : ` · ${part.items.length} item${part.items.length === 1 ? '' : 's'}`}
            </td>
          </tr>
        ))}
      </DataTable>
      <LeftOut {...props} />
      <Recalled {...props} />
      <Facts {...props} />
      <h2>Messages as sent</h2>
      <details class="summary">
        <summary>{formatCount(built.messages.length)} messages in order</summary>
        <div>
          {built.messages.map((message) => (
            <p class="summary-text">
              <span class={`role role-${message.role}`}>{message.role}</span> {message.content}
            </p>
          ))}
        </div>
      </details>
    </section>
  );
}

function LeftOut({ built }: ContextViewProps) {
  const { dropped, truncated } = built.report;
  return (
    <>
      <h2>Left out</h2>
      {dropped.length === 0 && truncated.length === 0 ? (
        <p class="state state-empty">Nothing: every stored message is in this context.</p>
      ) : (
        <DataTable columns={['Messages', { label: 'Count', numeric: true }, { label: 'Tokens', numeric: true }, 'Why']}>
          {dropped.map((run) => (
            <tr data-dropped={run.reason}>
              <td>
                seq {run.seqRange.from}–{run.seqRange.to}
              </td>
              <td class="num">{formatCount(run.messageCount)}</td>
              <td class="num">{formatCount(run.tokens)}</td>
              <td>{dropReasons[run.reason]}</td>
            </tr>
          ))}
          {truncated.map((cut) => (
            <tr data-truncated={cut.seq}>
              <td>seq {cut.seq}</td>
              <td class="num">1</td>
              <td class="num">{formatCount(cut.originalTokens - cut.keptTokens)}</td>
              <td>
                shortened from {formatCount(cut.originalTokens)} to {formatCount(cut.keptTokens)} tokens: alone it did
                not fit
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

function itemsOf(
  built: BuiltContext,
  kind: ContextItem['kind'],
): { item: ContextItem; reason?: ExcludedItem['reason'] }[] {
  const included = built.report.parts.flatMap((part) => part.items ?? []).filter((item) => item.kind === kind);
  const excluded = built.report.excludedItems.filter((item) => item.kind === kind);
  return [...included.map((item) => ({ item })), ...excluded.map((item) => ({ item, reason: item.reason }))];
}

const keywordOnlyReasons: Readonly<Record<Exclude<ContextRecallReport['reason'], 'not_asked' | undefined>, string>> = {
  no_embedder:
    'no embedder is configured, so there is no vector search (MNEMO_EMBEDDER picks one; the default static model is offline)',
  embedding_deadline:
    "the query's embedding missed its deadline (the embedder was busy or slow), so this request did not wait for it",
  embedder_failed:
    "the query's embedding failed (an embedding endpoint down or rejecting its key, a model that stopped): the server's log has the error",
};

/** How recall searched for this context: a line saying so, and why when it went keyword-only. */
function RecallMode({ recall }: { recall: ContextRecallReport | undefined }) {
  if (recall === undefined)
    return (
      <p class="hint" data-recall-mode="none">
        No query to recall for: the conversation has no user message yet and none was given.
      </p>
    );
  if (recall.mode === 'skipped')
    return (
      <p class="hint" data-recall-mode="skipped">
        No recall for this turn: it asks nothing, and recall is when-asked (a question or a request such as "remind me
        …" recalls; MNEMO_RECALL=every-turn recalls on every turn).
      </p>
    );
  const followUp =
    recall.bestInContext === true
      ? ' Its best match is one of the recent turns, so the turn follows up on them and its snippets got only the least room (160 tokens).'
      : '';
  if (recall.mode === 'hybrid')
    return (
      <p class="hint" data-recall-mode="hybrid" data-best-in-context={recall.bestInContext === true ? 'true' : 'false'}>
        Recall searched keywords and vectors and fused the two rankings.{followUp}
      </p>
    );
  const reason =
    recall.reason === undefined || recall.reason === 'not_asked'
      ? 'no vector search ran'
      : keywordOnlyReasons[recall.reason];
  return (
    <p class="state state-warn" data-recall-mode="keyword-only" data-recall-reason={recall.reason ?? ''}>
      Recall went keyword-only: {reason}. Vector similarity is therefore empty for every snippet.{followUp}
    </p>
  );
}

/** A vector similarity, or why there is none: no vector search ran, or the message was not among the vector hits. */
function similarityOf(item: ContextItem, recall: ContextRecallReport | undefined): string {
  const similarity = item.explain?.vectorSimilarity;
  if (similarity !== undefined) return formatScore(similarity);
  return recall?.mode === 'hybrid' ? 'not a vector hit' : 'not searched';
}

function Recalled({ userId, built, recalled, settings }: ContextViewProps) {
  // Best first, included or not: the order recall ranked them in.
  const rows = itemsOf(built, 'recalled').sort(
    (a, b) => (b.item.explain?.fused ?? b.item.score ?? 0) - (a.item.explain?.fused ?? a.item.score ?? 0),
  );
  if (settings.policy !== 'hybrid') return null;
  return (
    <>
      <h2>Recalled: why each snippet</h2>
      <RecallMode recall={built.report.recall} />
      {rows.length === 0 ? (
        <p class="state state-empty">Nothing recalled for this query.</p>
      ) : (
        <DataTable
          columns={[
            'Message',
            { label: 'Keyword rank', numeric: true },
            { label: 'BM25', numeric: true, hideNarrow: true },
            { label: 'Vector sim.', numeric: true },
            { label: 'Fused', numeric: true },
            'In context',
            'Said',
          ]}
        >
          {rows.map(({ item, reason }) => (
            <tr data-recalled={item.id} data-included={reason === undefined ? 'true' : 'false'}>
              <td>
                {item.conversationId === undefined || item.seq === undefined ? (
                  item.id
                ) : (
                  <a href={hashLink(inspectorRoutes.conversation(userId, item.conversationId, { seq: item.seq }))}>
                    {item.conversationId} · seq {item.seq}
                  </a>
                )}
              </td>
              <td class="num">{item.explain?.keywordRank ?? '—'}</td>
              <td class="num hide-narrow">{formatScore(item.explain?.keywordScore)}</td>
              <td class="num">{similarityOf(item, built.report.recall)}</td>
              <td class="num">{formatScore(item.explain?.fused ?? item.score)}</td>
              <td>
                <Inclusion reason={reason} />
              </td>
              <td class="content">{recalled.get(item.id)?.content ?? ''}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

function Facts({ built, facts, settings }: ContextViewProps) {
  const rows = itemsOf(built, 'fact');
  if (settings.policy !== 'hybrid') return null;
  return (
    <>
      <h2>Facts considered</h2>
      {rows.length === 0 ? (
        <p class="state state-empty">No current fact about this user.</p>
      ) : (
        <DataTable columns={['Fact', { label: 'Confidence', numeric: true }, 'In context']}>
          {rows.map(({ item, reason }) => {
            const fact = facts.get(item.id);
            return (
              <tr data-fact-item={item.id}>
                <td>
                  {fact === undefined
                    ? item.id
                    : `${fact.subject === 'user' ? '' : `${fact.subject} `}${fact.attribute}: ${fact.value}`}
                </td>
                <td class="num">{formatScore(item.score)}</td>
                <td>
                  <Inclusion reason={reason} />
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </>
  );
}

function Inclusion({ reason }: { reason: ExcludedItem['reason'] | undefined }) {
  return reason === undefined ? (
    <span class="tag">included</span>
  ) : (
    <span class="tag warn">{excludedReasons[reason]}</span>
  );
}
