import type { Fact } from '../facts/fact.js';
import { isExpired } from '../facts/fact-rules.js';
import type { Message } from '../messages/message.js';
import { withoutSuperseded } from '../messages/regenerated-replies.js';
import type { Scope } from '../messages/scope.js';
import type { Embedder } from '../recall/embedder.js';
import { searchRecall, type RecallSearch } from '../recall/recall.js';
import { turnAsks } from '../recall/turn-asks.js';
import type { Store } from '../store/store.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { assembleContext, type AssembleInput } from './assemble-context.js';
import { assembleHybrid } from './assemble-hybrid.js';
import type { BuiltContext, ContextPolicy, ContextRecallReport, RecallMode } from './context-types.js';
import { compareText } from '../text/compare-text.js';

/** What building a context reads from and counts with; `embedder` adds vector search to the hybrid policy's recall. */
export interface ContextDependencies {
  readonly store: Store;
  readonly counter: TokenCounter;
  readonly embedder?: Embedder;
  /** Deadline of the hybrid policy's query embedding, in ms; past it recall is keyword-only and the report says so. Default none. */
  readonly queryEmbeddingTimeoutMs?: number;
  /** Takes a failed query embedding, which makes recall keyword-only (see `RecallDependencies.onQueryEmbeddingError`); default: ignored (the report still says `embedder_failed`). */
  readonly onQueryEmbeddingError?: (error: unknown) => void;
  /** The refining model beside `embedder` (see `RecallDependencies.refiner`). */
  readonly refiner?: Embedder;
  readonly now?: () => number;
  /**
   * Takes the usage ledger write of a build instead of the build waiting for it, so the answer never
   * waits on a write (a SQLite write lock held elsewhere, a slow disk). Default: the build awaits it.
   */
  readonly deferWrite?: (write: Promise<void>) => void;
}

/** Settled options of one context build (the engine fills defaults). */
export interface ContextRequest {
  readonly policy: ContextPolicy;
  readonly maxTokens: number;
  readonly system?: string;
  readonly windowTurns: number;
  /** The current turn's text for recall (hybrid); default the newest user message. */
  readonly query?: string;
  /** Messages the hybrid policy recalls at most; default {@link defaultRecallK} of `maxTokens`. */
  readonly recallK?: number;
  /** When the hybrid policy recalls; default `when-asked`: only for a query that asks something ({@link turnAsks}). */
  readonly recall?: RecallMode;
  /** Build as if the conversation ended at this seq (a regenerated reply is built from its user turn); default: its newest message. */
  readonly throughSeq?: number;
  /** False leaves the usage ledger untouched (a preview); default true. */
  readonly record?: boolean;
  readonly signal?: AbortSignal;
}

const pageSize = 128;

/**
 * How many messages the hybrid policy recalls by default: one per 64 tokens of budget, 8 to 100 (16 at
 * 1,000 tokens, 31 at 2,000). The recalled block keeps only the best that fit its room, so a bigger budget
 * can hold more of them; a fixed 8 left half of a 2,000-token budget unused on LoCoMo and held 71 % of the
 * evidence turns, against 81 % now (see `packages/cli/src/bench/README.md`).
 */
export function defaultRecallK(maxTokens: number): number {
  return Math.min(100, Math.max(8, Math.round(maxTokens / 64)));
}

/**
 * Builds the context of one conversation from the store: reads only the newest messages the policy can
 * use (never the whole history of a long conversation), assembles them under the budget, and records the
 * build in the usage ledger (for a conversation that exists, unless `record` is false).
 */
export async function buildContext(
  dependencies: ContextDependencies,
  scope: Scope,
  request: ContextRequest,
): Promise<BuiltContext> {
  const { store, counter } = dependencies;
  const now = dependencies.now ?? Date.now;
  const callOptions = request.signal === undefined ? {} : { signal: request.signal };
  const conversation = await store.getConversation(scope, callOptions);
  // Only the summary-based policies read past the watermark through the summary; the others see raw history.
  const usesSummary = request.policy === 'summary' || request.policy === 'hybrid';
  const watermark = usesSummary ? (conversation?.summarizedThroughSeq ?? 0) : 0;
  const summary = watermark > 0 ? await store.getLatestSummary(scope, callOptions) : undefined;
  const tail = conversation === undefined ? [] : await loadTail(store, scope, request, watermark);
  const later =
    conversation === undefined || request.throughSeq === undefined || request.throughSeq >= conversation.messageCount
      ? []
      : await store.listMessages(scope, { afterSeq: request.throughSeq }, callOptions);
  const input: AssembleInput = {
    ...request,
    counter,
    tail,
    totalMessages: (conversation?.messageCount ?? 0) - later.length,
    totalTokens: (conversation?.totalTokens ?? 0) - later.reduce((sum, message) => sum + message.tokens, 0),
    ...(summary === undefined || conversation === undefined
      ? {}
      : {
          summary: {
            id: summary.id,
            content: summary.content,
            toSeq: summary.toSeq,
            coveredTokens: conversation.summarizedTokens,
            createdAt: summary.createdAt,
          },
        }),
  };
  const assembled =
    request.policy === 'hybrid'
      ? await buildHybrid(dependencies, scope, request, input, conversation?.createdAt ?? new Date(now()).toISOString())
      : assembleContext(input);
  const built: BuiltContext = {
    ...assembled,
    report: { ...assembled.report, conversationFound: conversation !== undefined },
  };
  if (conversation !== undefined && request.record !== false) {
    const { policy, sentTokens, fullHistoryTokens } = built.report;
    const record = {
      kind: 'context' as const,
      policy,
      sentTokens,
      fullHistoryTokens,
      createdAt: new Date(now()).toISOString(),
    };
    const write = store.insertUsage(scope, record, { signal: request.signal });
    if (dependencies.deferWrite === undefined) await write;
    else dependencies.deferWrite(write);
  }
  return built;
}

async function buildHybrid(
  dependencies: ContextDependencies,
  scope: Scope,
  request: ContextRequest,
  input: AssembleInput,
  conversationStart: string,
): Promise<BuiltContext> {
  const user = { tenantId: scope.tenantId, userId: scope.userId };
  const callOptions = request.signal === undefined ? {} : { signal: request.signal };
  const query = request.query ?? [...input.tail].reverse().find((message) => message.role === 'user')?.content;
  // The facts as of the last compaction (or the conversation's start): nothing in the stable prefix may
  // change between compactions but an expiry, which the user set to happen.
  const history = await dependencies.store.listFacts(user, { includeHistory: true }, callOptions);
  const facts = factsAsOf(
    history,
    input.summary?.createdAt ?? conversationStart,
    new Date((dependencies.now ?? Date.now)()).toISOString(),
  );
  const { embedder, refiner, queryEmbeddingTimeoutMs, onQueryEmbeddingError = ignoreError } = dependencies;
  const hasQuery = query !== undefined && query.trim().length > 0;
  // A turn that tells rather than asks is answered from the recent turns, summary and facts: its snippets
  // would be paid at full price on every request, since no provider caches them (decision 0043).
  const skipped = hasQuery && (request.recall ?? 'when-asked') === 'when-asked' && !turnAsks(query);
  const searched: RecallSearch | undefined =
    !hasQuery || skipped
      ? undefined
      : await searchRecall(
          {
            store: dependencies.store,
            ...(embedder === undefined ? {} : { embedder }),
            ...(refiner === undefined ? {} : { refiner }),
            ...(queryEmbeddingTimeoutMs === undefined ? {} : { queryEmbeddingTimeoutMs }),
            // ML on the request path degrades, never fails the context (DESIGN.md invariant 4).
            onQueryEmbeddingError,
          },
          user,
          query,
          {
            k: request.recallK ?? defaultRecallK(request.maxTokens),
            facts: history,
            // Built as of an earlier turn: what the conversation said after it is not recalled either.
            ...(request.throughSeq === undefined
              ? {}
              : { exclude: { conversationId: scope.conversationId, fromSeq: request.throughSeq + 1 } }),
            ...callOptions,
          },
        );
  const recallReport: ContextRecallReport | undefined = skipped
    ? { mode: 'skipped', reason: 'not_asked' }
    : searched === undefined
      ? undefined
      : {
          mode: searched.mode,
          ...(searched.reason === undefined ? {} : { reason: searched.reason }),
          ...(searched.model === undefined ? {} : { model: searched.model }),
        };
  return assembleHybrid({
    ...input,
    conversationId: scope.conversationId,
    facts,
    recalled: searched?.hits ?? [],
    longReplies: searched?.longReplies === true,
    recall: request.recall ?? 'when-asked',
    ...(recallReport === undefined ? {} : { recallReport }),
  });
}

/**
 * The facts a store held at `cutoff` (an ISO time; the last compaction's): those recorded by then and
 * not yet superseded by a fact recorded by then, in a stable order (valid from, recorded, id). A fact
 * learned since is in the raw turns anyway; one superseded since keeps its old value until the next
 * compaction, so the memory block stays byte-identical between compactions. A retired fact goes at once,
 * and so does one expired by `now` (ISO 8601) when it is given.
 */
export function factsAsOf(facts: readonly Fact[], cutoff: string, now?: string): Fact[] {
  const known = facts.filter((fact) => fact.createdAt <= cutoff);
  const knownIds = new Set(known.map((fact) => fact.id));
  // An expired successor still ended the fact it superseded: expiry is applied after supersession.
  const current = known.filter(
    (fact) =>
      (fact.validTo === undefined || (fact.supersededBy !== undefined && !knownIds.has(fact.supersededBy))) &&
      (now === undefined || !isExpired(fact, now)),
  );
  return current.sort(
    (a, b) => compareText(a.validFrom, b.validFrom) || compareText(a.createdAt, b.createdAt) || compareText(a.id, b.id),
  );
}

/**
 * Reads pages newest first until the policy cannot use anything older: the `window` policy once it holds
 * one user message more than its window (so the oldest window turn is whole), the others once the tail
 * alone exceeds the budget, never reading at or before `afterSeq` (the summary's watermark). Then it
 * extends the tail back to a message that is not a tool result, so a tool call is never read without
 * its results (compaction cuts at turn boundaries, so the watermark never splits one). Nothing after
 * `request.throughSeq` is read, and replies that a later (regenerated) reply supersedes are left out.
 */
async function loadTail(store: Store, scope: Scope, request: ContextRequest, afterSeq: number): Promise<Message[]> {
  const tail: Message[] = [];
  const endBefore = request.throughSeq === undefined ? undefined : request.throughSeq + 1;
  let tokens = 0;
  let userMessages = 0;
  const enough = () => (request.policy === 'window' ? userMessages > request.windowTurns : tokens > request.maxTokens);
  while (!enough() || tail[0]?.role === 'tool') {
    const beforeSeq = tail[0]?.seq ?? endBefore;
    const page = await store.listMessages(
      scope,
      { order: 'desc', limit: pageSize, afterSeq, ...(beforeSeq === undefined ? {} : { beforeSeq }) },
      { signal: request.signal },
    );
    for (const message of page) {
      tail.unshift(message);
      tokens += message.tokens;
      if (message.role === 'user') userMessages += 1;
    }
    if (page.length < pageSize) break;
  }
  return withoutSuperseded(tail);
}

function ignoreError(): void {}
