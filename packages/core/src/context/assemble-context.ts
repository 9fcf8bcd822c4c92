import { MemoryError } from '../errors/memory-error.js';
import type { Message } from '../messages/message.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { savedPercent } from '../usage/usage.js';
import type {
  BuiltContext,
  ContextMessage,
  ContextPart,
  ContextPolicy,
  ContextStablePrefix,
  DroppedMessages,
  DropReason,
  TruncatedMessage,
} from './context-types.js';
import { groupMessages, sumTokens, type MessageGroup } from './group-messages.js';
import { fittedTokens, selectNewest, splitUnits } from './select-recent.js';
import { summaryBlock, type SummaryBlock, type SummaryInput } from './summary-block.js';
import type { FittedMessage } from './truncate-group.js';

/** Everything {@link assembleContext} decides from: the newest stored messages and the conversation's totals. */
export interface AssembleInput {
  readonly policy: ContextPolicy;
  readonly maxTokens: number;
  readonly system?: string;
  /** Turns the `window` policy keeps. */
  readonly windowTurns: number;
  readonly counter: TokenCounter;
  /** The newest messages of the conversation, oldest first, starting at a group boundary (for `summary`: only raw ones, after the summary). */
  readonly tail: readonly Message[];
  /** Messages and tokens of the whole conversation (the tail and everything before it). */
  readonly totalMessages: number;
  readonly totalTokens: number;
  /** The current rolling summary, for the `summary` policy. */
  readonly summary?: SummaryInput;
}

/**
 * Chooses what fits the budget under a policy: the system prompt (pinned), for `summary` the memory
 * block, then the newest messages, contiguous, whole groups (a tool call never without its results),
 * whole turns for the turn policies. Only when not even the newest group fits is it shortened with a
 * marker; a summary gives way to the newest turn before that. Pure: no I/O, no clock.
 * Throws `budget_exceeded` when the system prompt alone does not fit.
 */
export function assembleContext(input: AssembleInput): BuiltContext {
  const { counter, maxTokens } = input;
  const { systemTokens, fixedTokens } = pinnedTokens(input);
  const { eligible, outsideWindow } = splitUnits(input.policy, groupMessages(input.tail), input.windowTurns);
  const { block, selected } = selectWithSummary(input, eligible, maxTokens - fixedTokens);

  const parts: ContextPart[] = [];
  if (input.system !== undefined) parts.push({ kind: 'system', tokens: systemTokens, messageCount: 1 });
  if (block !== undefined && input.summary !== undefined) {
    parts.push({
      kind: 'summary',
      tokens: block.tokens,
      messageCount: 1,
      seqRange: { from: 1, to: input.summary.toSeq },
      summaryId: input.summary.id,
      ...(block.truncated ? { truncated: true } : {}),
    });
  }
  if (selected.length > 0) {
    const seqRange = { from: selected[0]!.message.seq, to: selected[selected.length - 1]!.message.seq };
    parts.push({ kind: 'recent', tokens: fittedTokens(selected), messageCount: selected.length, seqRange });
  }
  const sentTokens = fixedTokens + (block?.tokens ?? 0) + fittedTokens(selected);
  const fullHistoryTokens = fixedTokens + input.totalTokens;
  const messages: ContextMessage[] = [];
  if (input.system !== undefined) messages.push({ role: 'system', content: input.system });
  if (block !== undefined) messages.push(block.message);
  messages.push(...selected.map(toContextMessage));
  // Pinned: the system prompt and a whole summary block. The raw turns count only while none of the
  // loaded ones was left out (the `window` policy slides by design, so never).
  const pinned = [
    ...(input.system === undefined ? [] : [systemTokens]),
    ...(block === undefined ? [] : block.truncated ? [] : [block.tokens]),
  ];
  const summarizedThrough = input.policy === 'summary' ? (input.summary?.toSeq ?? 0) : 0;
  const appendOnly =
    input.policy !== 'window' &&
    (summarizedThrough === 0 || (block !== undefined && !block.truncated)) &&
    selected.length === input.tail.length &&
    input.tail.length === input.totalMessages - summarizedThrough &&
    selected.every((item) => item.truncatedFrom === undefined);
  return {
    messages,
    report: {
      policy: input.policy,
      maxTokens,
      encoding: counter.encoding,
      parts,
      dropped: describeDropped(
        input,
        outsideWindow,
        selected[0]?.message.seq ?? Number.POSITIVE_INFINITY,
        block !== undefined,
      ),
      excludedItems: [],
      truncated: truncatedOf(selected),
      requestOverheadTokens: counter.requestOverheadTokens,
      fullHistoryTokens,
      sentTokens,
      savedTokens: fullHistoryTokens - sentTokens,
      savedPercent: savedPercent(sentTokens, fullHistoryTokens),
      stable: stablePrefix(pinned, appendOnly ? selected : []),
    },
  };
}

/**
 * The stable prefix of a context: the pinned leading messages (their tokens in order), then, when the raw
 * turns are sent append-only, those before the newest user message (that turn, and per-request material
 * placed before it, change with every request).
 */
export function stablePrefix(
  pinnedTokens: readonly number[],
  appendOnlyRaw: readonly FittedMessage[],
): ContextStablePrefix {
  const newestUser = appendOnlyRaw.map((item) => item.message.role).lastIndexOf('user');
  const raw = appendOnlyRaw.slice(0, Math.max(0, newestUser));
  return {
    messageCount: pinnedTokens.length + raw.length,
    tokens: pinnedTokens.reduce((sum, tokens) => sum + tokens, 0) + fittedTokens(raw),
  };
}

/** Tokens of the system prompt and of everything pinned (prompt + request overhead); `budget_exceeded` when they do not fit. */
export function pinnedTokens(input: Pick<AssembleInput, 'system' | 'counter' | 'maxTokens'>): {
  systemTokens: number;
  fixedTokens: number;
} {
  const systemTokens =
    input.system === undefined ? 0 : input.counter.countMessage({ role: 'system', content: input.system });
  const fixedTokens = input.counter.requestOverheadTokens + systemTokens;
  if (fixedTokens > input.maxTokens) {
    throw new MemoryError(
      'budget_exceeded',
      `the system prompt alone needs ${fixedTokens} tokens, over maxTokens ${input.maxTokens}`,
      {
        details: { systemTokens, maxTokens: input.maxTokens },
      },
    );
  }
  return { systemTokens, fixedTokens };
}

/** The report's list of messages sent shortened. */
export function truncatedOf(selected: readonly FittedMessage[]): TruncatedMessage[] {
  return selected.flatMap((item) =>
    item.truncatedFrom === undefined
      ? []
      : [{ seq: item.message.seq, originalTokens: item.truncatedFrom, keptTokens: item.tokens }],
  );
}

/**
 * Fits the summary block and the recent turns into `budget`. The summary goes in whole when the newest
 * turn still fits beside it; otherwise the newest turn wins and the summary is shortened into what is
 * left, or left out when too little is left.
 */
function selectWithSummary(
  input: AssembleInput,
  units: readonly (readonly MessageGroup[])[],
  budget: number,
): { block: SummaryBlock | undefined; selected: FittedMessage[] } {
  const whole =
    input.policy === 'summary' && input.summary !== undefined ? summaryBlock(input.summary, input.counter) : undefined;
  if (whole === undefined || input.summary === undefined)
    return { block: undefined, selected: selectNewest(units, budget, input.counter) };
  if (whole.tokens <= budget) {
    const selected = selectNewest(units, budget - whole.tokens, input.counter);
    if (selected.length > 0 || units.length === 0) return { block: whole, selected };
  }
  const newest = selectNewest(units.slice(-1), budget, input.counter);
  const shortened = summaryBlock(input.summary, input.counter, budget - fittedTokens(newest));
  if (shortened !== undefined) return { block: shortened, selected: newest };
  return { block: undefined, selected: selectNewest(units, budget, input.counter) };
}

/** The runs of stored messages a context left out, with the reason for each (shared by every policy). */
export function describeDropped(
  input: AssembleInput,
  outsideWindow: readonly Message[],
  firstSelectedSeq: number,
  summaryIncluded: boolean,
): DroppedMessages[] {
  const runs: DroppedMessages[] = [];
  const add = (messages: { from: number; to: number; count: number; tokens: number }, reason: DropReason) => {
    if (messages.count <= 0) return;
    const last = runs[runs.length - 1];
    if (last !== undefined && last.reason === reason && last.seqRange.to + 1 === messages.from) {
      runs[runs.length - 1] = {
        ...last,
        seqRange: { from: last.seqRange.from, to: messages.to },
        messageCount: last.messageCount + messages.count,
        tokens: last.tokens + messages.tokens,
      };
    } else {
      runs.push({
        seqRange: { from: messages.from, to: messages.to },
        messageCount: messages.count,
        tokens: messages.tokens,
        reason,
      });
    }
  };
  const run = (messages: readonly Message[]) => ({
    from: messages[0]?.seq ?? 0,
    to: messages[messages.length - 1]?.seq ?? 0,
    count: messages.length,
    tokens: sumTokens(messages),
  });
  const firstTailSeq = input.tail[0]?.seq ?? input.totalMessages + 1;
  const isSummaryPolicy = input.policy === 'summary' || input.policy === 'hybrid';
  const summary = isSummaryPolicy ? input.summary : undefined;
  const summarizedThrough = Math.min(summary?.toSeq ?? 0, firstTailSeq - 1);
  const coveredTokens = summarizedThrough > 0 ? (summary?.coveredTokens ?? 0) : 0;
  if (summarizedThrough > 0) {
    add(
      { from: 1, to: summarizedThrough, count: summarizedThrough, tokens: coveredTokens },
      summaryIncluded ? 'summarized' : 'over_budget',
    );
  }
  // What the loader did not read beyond the summary: excluded by the window or the budget.
  const notSent: DropReason = isSummaryPolicy
    ? 'awaiting_compaction'
    : input.policy === 'window'
      ? 'outside_window'
      : 'over_budget';
  const unreadTokens = input.totalTokens - coveredTokens - sumTokens(input.tail);
  add(
    {
      from: summarizedThrough + 1,
      to: firstTailSeq - 1,
      count: firstTailSeq - 1 - summarizedThrough,
      tokens: unreadTokens,
    },
    notSent,
  );
  if (outsideWindow.length > 0) add(run(outsideWindow), 'outside_window');
  const lastOutsideSeq = outsideWindow[outsideWindow.length - 1]?.seq ?? 0;
  add(
    run(input.tail.filter((message) => message.seq > lastOutsideSeq && message.seq < firstSelectedSeq)),
    isSummaryPolicy ? 'awaiting_compaction' : 'over_budget',
  );
  return runs;
}

/** A fitted stored message as it is sent. */
export function toContextMessage(item: FittedMessage): ContextMessage {
  const { role, name, toolCalls, toolCallId } = item.message;
  return {
    role,
    content: item.content,
    ...(name === undefined ? {} : { name }),
    ...(toolCalls === undefined ? {} : { toolCalls }),
    ...(toolCallId === undefined ? {} : { toolCallId }),
  };
}
