import type { Fact } from '../facts/fact.js';
import { factLine } from '../facts/fact-line.js';
import type { RecallHit } from '../recall/recall.js';
import { savedPercent } from '../usage/usage.js';
import {
  describeDropped,
  pinnedTokens,
  stablePrefix,
  toContextMessage,
  truncatedOf,
  type AssembleInput,
} from './assemble-context.js';
import type {
  BuiltContext,
  ContextMessage,
  ContextPart,
  ContextRecallReport,
  ExcludedItem,
  RecallMode,
} from './context-types.js';
import { groupMessages, groupTurns } from './group-messages.js';
import { factsBlock, recalledBlock, type ItemBlock } from './memory-blocks.js';
import { fittedTokens, selectNewest } from './select-recent.js';
import { summaryBlock, type SummaryBlock } from './summary-block.js';
import { fitWhole, type FittedMessage } from './truncate-group.js';

/** What the hybrid policy adds to {@link AssembleInput}: the user's facts and the recalled messages for this turn. */
export interface HybridInput extends AssembleInput {
  readonly conversationId: string;
  /** The user's facts as of the last compaction, in a stable order (see `factsAsOf`). */
  readonly facts: readonly Fact[];
  readonly recalled: readonly RecallHit[];
  /** When recall runs (default `when-asked`): under `every-turn` a turn's snippets always get the full share. */
  readonly recall?: RecallMode;
  /** How the recall search ran, for the report (`report.recall`); none when no search was asked for. */
  readonly recallReport?: ContextRecallReport;
  /** Recall's `longReplies`: the assistant answers at length, so its recalled replies get short snippets. */
  readonly longReplies?: boolean;
}

/**
 * Shares of the budget (after the system prompt) each memory part may take at most. Recall runs only for
 * a turn that asks something (decision 0043), so its snippets, which no provider's cache ever holds, are
 * paid only where they answer; such a turn gets up to 45 % (recalling on every turn at 25 %, a 2,000-token
 * context held 78.3 % of LoCoMo's evidence and cost 0.88 of full history at a 10 % cached price; asking
 * turns at 45 %: 84.8 % for 0.62; a follow-up on the recent turns only {@link minRecallTokens}: 84.5 %
 * for 0.53, decision 0044; the time of day on recent days' snippets only: 85.0 % for 0.53). At least
 * {@link minRecallTokens} all the same, so a small budget still has room for a whole snippet.
 */
export const hybridShares = Object.freeze({ facts: 0.15, summary: 0.2, recalled: 0.45 });

/**
 * Recall's room is never capped below this many tokens (one snippet at its longest), and a turn whose
 * best match the recent turns already hold gets no more (see {@link assembleHybrid}).
 */
export const minRecallTokens = 160;

/**
 * The hybrid context, stable parts first (invariant 7): [system] [facts] [summary] [raw turns since the
 * watermark] [recalled snippets] [newest user turn]. Facts and summary are those of the last compaction,
 * the raw turns all of those since it, so everything before the recalled snippets is byte-identical
 * from one request to the next until the next compaction; `report.stable` says where it ends. Only
 * when the raw turns outgrow the budget before compaction caught up do the newest that fit go (a sliding
 * window, nothing stable after the summary). The newest turn is never given up for memory; facts and
 * summary stay within their share of the budget; recall takes what is left, at most its share,
 * skipping messages the context already holds. A turn whose best match is one of the recent turns
 * follows up on what the context holds ("What made you pick it?"), so under `when-asked` its snippets
 * get only {@link minRecallTokens}: the older matches after it are paid at full price on every such
 * request, and rarely what it asks about (`report.recall.bestInContext`). Every included and left-out
 * item is in the report.
 */
export function assembleHybrid(input: HybridInput): BuiltContext {
  const { counter } = input;
  const { systemTokens, fixedTokens } = pinnedTokens(input);
  const room = input.maxTokens - fixedTokens;
  const turns = groupTurns(groupMessages(input.tail)).map((turn) => turn.groups);
  if (input.tail.length === input.totalMessages && sumTokens(input.tail) <= room)
    return wholeConversation(input, turns, systemTokens, fixedTokens);

  const watermark = input.summary?.toSeq ?? 0;
  let summary =
    input.summary === undefined
      ? undefined
      : summaryBlock(input.summary, counter, Math.floor(room * hybridShares.summary));
  // A fact stated in the raw turns since the watermark, or kept as a line of the summary (decision 0022),
  // is said there already: sending it again only costs tokens. Neither test depends on the request.
  const summaryLines = new Set((summary?.message.content ?? '').split('\n'));
  const alreadySaid = (fact: Fact) =>
    (fact.sourceConversationId === input.conversationId &&
      fact.sourceSeqs.length > 0 &&
      fact.sourceSeqs.every((seq) => seq > watermark)) ||
    summaryLines.has(`- ${factLine(fact)}`);
  const factsSaid = input.facts.filter(alreadySaid);
  const kept = factsBlock(
    input.facts.filter((fact) => !alreadySaid(fact)),
    counter,
    Math.floor(room * hybridShares.facts),
  );
  let facts: ItemBlock = {
    ...kept,
    excluded: [...kept.excluded, ...factsSaid.map((fact) => factExcluded(fact, 'already_in_context'))],
  };

  const newestTurn = turns.slice(-1);
  const olderTurns = turns.slice(0, -1);
  let newest = selectNewest(newestTurn, room - facts.tokens - (summary?.tokens ?? 0), counter);
  const crowded = newest.length === 0 && newestTurn.length > 0;
  if (crowded) {
    // Memory crowded out the newest turn: the turn the model must answer wins, memory goes.
    facts = {
      message: undefined,
      tokens: 0,
      items: [],
      excluded: [...facts.items, ...facts.excluded].map((item) => ({ ...item, reason: 'over_budget' })),
    };
    summary = undefined;
    newest = selectNewest(newestTurn, room, counter);
  }
  const recallShare =
    input.recalled.length === 0 ? 0 : Math.max(minRecallTokens, Math.floor(room * hybridShares.recalled));
  const rawRoom = room - facts.tokens - (summary?.tokens ?? 0) - fittedTokens(newest);
  const olderTokens = olderTurns.reduce((sum, turn) => sum + turn.reduce((total, group) => total + group.tokens, 0), 0);
  const tailIsWhole = input.tail.length === input.totalMessages - watermark;
  // Append-only while every raw turn since the watermark fits; else (compaction behind) the newest that fit beside recall's share.
  const appendOnly = tailIsWhole && olderTokens <= rawRoom && newest.every((item) => item.truncatedFrom === undefined);
  const older = appendOnly
    ? olderTurns.flatMap((turn) => turn.flatMap((group) => group.messages.map(fitWhole)))
    : selectNewest(olderTurns, rawRoom - recallShare, counter);
  // Contiguous, newest first: older turns only beside the whole newest turn.
  const selected =
    newest.length === fittedCount(newestTurn) && newest.every((item) => item.truncatedFrom === undefined)
      ? [...older, ...newest]
      : newest;
  const firstRecentSeq = selected[0]?.message.seq ?? Number.POSITIVE_INFINITY;
  const inContext = (hit: RecallHit) =>
    hit.conversationId === input.conversationId && hit.message.seq >= firstRecentSeq;
  const best = input.recalled.reduce<RecallHit | undefined>(
    (top, hit) => (top === undefined || hit.score > top.score ? hit : top),
    undefined,
  );
  const bestInContext = (input.recall ?? 'when-asked') === 'when-asked' && best !== undefined && inContext(best);
  const recallRoom = Math.min(
    bestInContext ? minRecallTokens : recallShare,
    room - facts.tokens - (summary?.tokens ?? 0) - fittedTokens(selected),
  );
  const recalled = recalledBlock(
    input.recalled.filter((hit) => !inContext(hit)),
    counter,
    Math.max(0, recallRoom),
    input.tail[input.tail.length - 1]?.createdAt,
    input.longReplies === true,
  );
  const alreadyIn: ExcludedItem[] = input.recalled
    .filter(inContext)
    .map((hit) => recalledExcluded(hit, 'already_in_context'));

  const messages = order(input.system, facts, summary, selected, recalled);
  const sentTokens = fixedTokens + facts.tokens + (summary?.tokens ?? 0) + fittedTokens(selected) + recalled.tokens;
  const fullHistoryTokens = fixedTokens + input.totalTokens;
  const pinned = [
    ...(input.system === undefined ? [] : [systemTokens]),
    ...(facts.message === undefined ? [] : [facts.tokens]),
    ...(summary === undefined ? [] : [summary.tokens]),
  ];
  // The memory blocks' sizes follow from the budget alone (a summary shortened to its share is shortened the same way every time).
  return {
    messages,
    report: {
      policy: input.policy,
      maxTokens: input.maxTokens,
      encoding: counter.encoding,
      parts: parts(input, systemTokens, facts, summary, selected, recalled),
      dropped: describeDropped(input, [], firstRecentSeq, summary !== undefined),
      truncated: truncatedOf(selected),
      excludedItems: [...facts.excluded, ...alreadyIn, ...recalled.excluded],
      requestOverheadTokens: counter.requestOverheadTokens,
      fullHistoryTokens,
      sentTokens,
      savedTokens: fullHistoryTokens - sentTokens,
      savedPercent: savedPercent(sentTokens, fullHistoryTokens),
      ...(input.recallReport === undefined
        ? {}
        : { recall: bestInContext ? { ...input.recallReport, bestInContext: true } : input.recallReport }),
      stable: stablePrefix(pinned, appendOnly && !crowded ? selected : []),
    },
  };
}

function fittedCount(units: readonly (readonly { messages: readonly unknown[] }[])[]): number {
  return units.reduce((sum, unit) => sum + unit.reduce((total, group) => total + group.messages.length, 0), 0);
}

/**
 * A conversation that fits the budget whole goes verbatim and alone: its facts and snippets would only
 * repeat what it says (or, from the user's other conversations, make the request larger than resending
 * the history), so the context is never larger than the conversation plus the system prompt.
 */
function wholeConversation(
  input: HybridInput,
  turns: Parameters<typeof selectNewest>[0],
  systemTokens: number,
  fixedTokens: number,
): BuiltContext {
  const { counter } = input;
  const selected = selectNewest(turns, input.maxTokens - fixedTokens, counter);
  const empty: ItemBlock = { message: undefined, tokens: 0, items: [], excluded: [] };
  const excluded = [
    ...input.facts.map((fact) =>
      factExcluded(
        fact,
        fact.sourceConversationId === input.conversationId ? 'already_in_context' : 'conversation_fits',
      ),
    ),
    ...input.recalled.map((hit) =>
      recalledExcluded(hit, hit.conversationId === input.conversationId ? 'already_in_context' : 'conversation_fits'),
    ),
  ];
  const sentTokens = fixedTokens + fittedTokens(selected);
  const fullHistoryTokens = fixedTokens + input.totalTokens;
  return {
    messages: order(input.system, empty, undefined, selected, empty),
    report: {
      policy: input.policy,
      maxTokens: input.maxTokens,
      encoding: counter.encoding,
      parts: parts(input, systemTokens, empty, undefined, selected, empty),
      dropped: describeDropped(input, [], selected[0]?.message.seq ?? input.totalMessages + 1, false),
      truncated: truncatedOf(selected),
      excludedItems: excluded,
      requestOverheadTokens: counter.requestOverheadTokens,
      fullHistoryTokens,
      sentTokens,
      savedTokens: fullHistoryTokens - sentTokens,
      savedPercent: savedPercent(sentTokens, fullHistoryTokens),
      ...(input.recallReport === undefined ? {} : { recall: input.recallReport }),
      stable: stablePrefix(input.system === undefined ? [] : [systemTokens], selected),
    },
  };
}

function factExcluded(fact: Fact, reason: ExcludedItem['reason']): ExcludedItem {
  return { kind: 'fact', id: fact.id, tokens: 0, score: fact.confidence, reason };
}

function recalledExcluded(hit: RecallHit, reason: ExcludedItem['reason']): ExcludedItem {
  return {
    kind: 'recalled',
    id: hit.message.id,
    conversationId: hit.conversationId,
    seq: hit.message.seq,
    tokens: 0,
    score: hit.score,
    explain: hit.explain,
    reason,
  };
}

function sumTokens(messages: readonly { tokens: number }[]): number {
  return messages.reduce((sum, message) => sum + message.tokens, 0);
}

// Stable parts first (prompt caches stay warm), volatile recall right before the newest user turn.
function order(
  system: string | undefined,
  facts: ItemBlock,
  summary: SummaryBlock | undefined,
  selected: readonly FittedMessage[],
  recalled: ItemBlock,
): ContextMessage[] {
  const recent = selected.map(toContextMessage);
  const newestUser = recent.map((message) => message.role).lastIndexOf('user');
  const split = newestUser < 0 ? recent.length : newestUser;
  return [
    ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
    ...(facts.message === undefined ? [] : [facts.message]),
    ...(summary === undefined ? [] : [summary.message]),
    ...recent.slice(0, split),
    ...(recalled.message === undefined ? [] : [recalled.message]),
    ...recent.slice(split),
  ];
}

function parts(
  input: HybridInput,
  systemTokens: number,
  facts: ItemBlock,
  summary: SummaryBlock | undefined,
  selected: readonly FittedMessage[],
  recalled: ItemBlock,
): ContextPart[] {
  const list: ContextPart[] = [];
  if (input.system !== undefined) list.push({ kind: 'system', tokens: systemTokens, messageCount: 1 });
  if (facts.message !== undefined)
    list.push({ kind: 'facts', tokens: facts.tokens, messageCount: 1, items: facts.items });
  if (summary !== undefined && input.summary !== undefined) {
    list.push({
      kind: 'summary',
      tokens: summary.tokens,
      messageCount: 1,
      seqRange: { from: 1, to: input.summary.toSeq },
      summaryId: input.summary.id,
      ...(summary.truncated ? { truncated: true } : {}),
    });
  }
  if (selected.length > 0) {
    list.push({
      kind: 'recent',
      tokens: fittedTokens(selected),
      messageCount: selected.length,
      seqRange: { from: selected[0]!.message.seq, to: selected[selected.length - 1]!.message.seq },
    });
  }
  if (recalled.message !== undefined)
    list.push({ kind: 'recalled', tokens: recalled.tokens, messageCount: 1, items: recalled.items });
  return list;
}
