import { groupMessages, groupTurns } from '../context/group-messages.js';
import type { Message } from '../messages/message.js';
import type { CompactionSettings } from './compaction-settings.js';

/** Raw state of a conversation, enough to decide whether compaction is due without reading messages. */
export interface RawBacklog {
  readonly rawMessages: number;
  readonly rawTokens: number;
  /** True when the conversation was never compacted (its first compaction waits for `verbatimTokens`). */
  readonly neverCompacted?: boolean;
}

/** True when a compaction job should be queued for a conversation with this raw backlog. */
export function isCompactionDue(backlog: RawBacklog, settings: CompactionSettings): boolean {
  if (settings.everyMessages !== undefined)
    return backlog.rawMessages >= settings.everyMessages + settings.keepRecentTurns * 2;
  const trigger =
    backlog.neverCompacted === true && settings.verbatimTokens !== undefined
      ? Math.max(settings.triggerTokens, settings.verbatimTokens)
      : settings.triggerTokens;
  return backlog.rawTokens > trigger;
}

/**
 * Picks the range to fold into the summary from the raw messages (oldest first, all newer than the
 * watermark): everything before the newest turns that stay verbatim, cut at a turn boundary so a turn
 * (and a tool call with its results) is never split, and at most `maxSourceTokensPerRound` tokens.
 * With `force` only the `keepRecentTurns` floor applies (an explicit compaction folds all it may).
 * Returns the messages to summarize, or `[]` when nothing can be cut yet.
 */
export function planCompaction(raw: readonly Message[], settings: CompactionSettings, force = false): Message[] {
  const turns = groupTurns(groupMessages(raw));
  let keptTokens = 0;
  let keptTurns = 0;
  // Walk back from the newest turn, keeping turns until both the turn and token floors are met.
  while (keptTurns < turns.length) {
    const turn = turns[turns.length - 1 - keptTurns]!;
    const needTurns = keptTurns < settings.keepRecentTurns;
    const needTokens =
      !force && settings.everyMessages === undefined && keptTokens + turn.tokens <= settings.keepRecentTokens;
    if (!needTurns && !needTokens) break;
    keptTokens += turn.tokens;
    keptTurns += 1;
  }
  const foldable = turns.slice(0, turns.length - keptTurns);
  const range: Message[] = [];
  let tokens = 0;
  for (const turn of foldable) {
    if (range.length > 0 && tokens + turn.tokens > settings.maxSourceTokensPerRound) break;
    for (const group of turn.groups) range.push(...group.messages);
    tokens += turn.tokens;
  }
  return range;
}
