import { MemoryError } from '../errors/memory-error.js';
import type { Message } from '../messages/message.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { savedPercent } from '../usage/usage.js';
import type { BuiltContext, ContextMessage, ContextPart, ContextPolicy, DroppedMessages, DropReason } from './context-types.js';
import { groupMessages, groupTurns, sumTokens, type MessageGroup } from './group-messages.js';
import { fitWhole, truncateGroup, type FittedMessage } from './truncate-group.js';

/** Everything {@link assembleContext} decides from: the newest stored messages and the conversation's totals. */
export interface AssembleInput {
  readonly policy: ContextPolicy;
  readonly maxTokens: number;
  readonly system?: string;
  /** Turns the `window` policy keeps. */
  readonly windowTurns: number;
  readonly counter: TokenCounter;
  /** The newest messages of the conversation, oldest first, starting at a group boundary. */
  readonly tail: readonly Message[];
  /** Messages and tokens of the whole conversation (the tail and everything before it). */
  readonly totalMessages: number;
  readonly totalTokens: number;
}

/**
 * Chooses what of a conversation's tail fits the budget under a policy: the newest messages, contiguous,
 * whole groups (a tool call never without its results), whole turns for the turn policies. Only when
 * not even the newest group fits is it shortened with a marker. Pure: no I/O, no clock.
 * Throws `budget_exceeded` when the system prompt alone does not fit.
 */
export function assembleContext(input: AssembleInput): BuiltContext {
  const { counter, maxTokens } = input;
  const systemTokens = input.system === undefined ? 0 : counter.countMessage({ role: 'system', content: input.system });
  const fixedTokens = counter.requestOverheadTokens + systemTokens;
  if (fixedTokens > maxTokens) {
    throw new MemoryError('budget_exceeded', `the system prompt alone needs ${fixedTokens} tokens, over maxTokens ${maxTokens}`, {
      details: { systemTokens, maxTokens },
    });
  }
  const groups = groupMessages(input.tail);
  const { eligible, outsideWindow } = splitWindow(input.policy, groups, input.windowTurns);
  const selected = selectNewest(eligible, maxTokens - fixedTokens, counter);

  const firstSelectedSeq = selected[0]?.message.seq ?? Number.POSITIVE_INFINITY;
  const dropped = describeDropped(input, outsideWindow, firstSelectedSeq);
  const recentTokens = selected.reduce((sum, item) => sum + item.tokens, 0);
  const parts: ContextPart[] = [];
  if (input.system !== undefined) parts.push({ kind: 'system', tokens: systemTokens, messageCount: 1 });
  if (selected.length > 0) {
    const seqRange = { from: selected[0]!.message.seq, to: selected[selected.length - 1]!.message.seq };
    parts.push({ kind: 'recent', tokens: recentTokens, messageCount: selected.length, seqRange });
  }
  const sentTokens = fixedTokens + recentTokens;
  const fullHistoryTokens = fixedTokens + input.totalTokens;
  const messages: ContextMessage[] = [];
  if (input.system !== undefined) messages.push({ role: 'system', content: input.system });
  messages.push(...selected.map(toContextMessage));
  return {
    messages,
    report: {
      policy: input.policy,
      maxTokens,
      encoding: counter.encoding,
      parts,
      dropped,
      truncated: selected.flatMap((item) =>
        item.truncatedFrom === undefined ? [] : [{ seq: item.message.seq, originalTokens: item.truncatedFrom, keptTokens: item.tokens }],
      ),
      requestOverheadTokens: counter.requestOverheadTokens,
      fullHistoryTokens,
      sentTokens,
      savedTokens: fullHistoryTokens - sentTokens,
      savedPercent: savedPercent(sentTokens, fullHistoryTokens),
    },
  };
}

/** The units a policy fits (newest last) and the messages its window excludes up front. */
function splitWindow(policy: ContextPolicy, groups: readonly MessageGroup[], windowTurns: number) {
  if (policy === 'full') return { eligible: groups.map((group) => [group]), outsideWindow: [] as Message[] };
  const turns = groupTurns(groups).map((turn) => turn.groups);
  if (policy === 'token-window') return { eligible: turns, outsideWindow: [] as Message[] };
  const keep = Math.max(0, turns.length - windowTurns);
  return { eligible: turns.slice(keep), outsideWindow: turns.slice(0, keep).flat().flatMap((group) => group.messages) };
}

/** Takes whole units newest first while they fit; if the newest unit does not, takes what of it can fit. */
function selectNewest(units: readonly (readonly MessageGroup[])[], budget: number, counter: TokenCounter): FittedMessage[] {
  const chosen: FittedMessage[][] = [];
  let remaining = budget;
  for (let index = units.length - 1; index >= 0; index -= 1) {
    const unit = units[index]!;
    const unitTokens = unit.reduce((sum, group) => sum + group.tokens, 0);
    if (unitTokens <= remaining) {
      chosen.unshift(unit.flatMap((group) => group.messages.map(fitWhole)));
      remaining -= unitTokens;
      continue;
    }
    if (chosen.length === 0) chosen.unshift(fitPartialUnit(unit, remaining, counter));
    break;
  }
  return chosen.flat();
}

/** The newest groups of a unit that fit whole; when none does, the newest group shortened. */
function fitPartialUnit(unit: readonly MessageGroup[], budget: number, counter: TokenCounter): FittedMessage[] {
  const taken: FittedMessage[] = [];
  let remaining = budget;
  for (let index = unit.length - 1; index >= 0; index -= 1) {
    const group = unit[index]!;
    if (group.tokens > remaining) {
      if (taken.length > 0) break;
      return truncateGroup(group, remaining, counter) ?? [];
    }
    taken.unshift(...group.messages.map(fitWhole));
    remaining -= group.tokens;
  }
  return taken;
}

function describeDropped(input: AssembleInput, outsideWindow: readonly Message[], firstSelectedSeq: number): DroppedMessages[] {
  const runs: DroppedMessages[] = [];
  const add = (from: number, to: number, messageCount: number, tokens: number, reason: DropReason) => {
    if (messageCount <= 0) return;
    const last = runs[runs.length - 1];
    if (last !== undefined && last.reason === reason && last.seqRange.to + 1 === from) {
      runs[runs.length - 1] = { ...last, seqRange: { from: last.seqRange.from, to }, messageCount: last.messageCount + messageCount, tokens: last.tokens + tokens };
    } else {
      runs.push({ seqRange: { from, to }, messageCount, tokens, reason });
    }
  };
  const firstTailSeq = input.tail[0]?.seq ?? input.totalMessages + 1;
  // The loader reads, before the tail, only what the window or the budget already excludes.
  const beforeTailReason: DropReason = input.policy === 'window' ? 'outside_window' : 'over_budget';
  add(1, firstTailSeq - 1, firstTailSeq - 1, input.totalTokens - sumTokens(input.tail), beforeTailReason);
  if (outsideWindow.length > 0) {
    add(outsideWindow[0]!.seq, outsideWindow[outsideWindow.length - 1]!.seq, outsideWindow.length, sumTokens(outsideWindow), 'outside_window');
  }
  const lastOutsideSeq = outsideWindow[outsideWindow.length - 1]?.seq ?? 0;
  const overBudget = input.tail.filter((message) => message.seq > lastOutsideSeq && message.seq < firstSelectedSeq);
  if (overBudget.length > 0) {
    add(overBudget[0]!.seq, overBudget[overBudget.length - 1]!.seq, overBudget.length, sumTokens(overBudget), 'over_budget');
  }
  return runs;
}

function toContextMessage(item: FittedMessage): ContextMessage {
  const { role, name, toolCalls, toolCallId } = item.message;
  return {
    role,
    content: item.content,
    ...(name === undefined ? {} : { name }),
    ...(toolCalls === undefined ? {} : { toolCalls }),
    ...(toolCallId === undefined ? {} : { toolCallId }),
  };
}
