import type { Message } from '../messages/message.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { ContextPolicy } from './context-types.js';
import { groupTurns, type MessageGroup } from './group-messages.js';
import { fitWhole, truncateGroup, type FittedMessage } from './truncate-group.js';

/** Units of selection (each a list of groups, newest last) and the messages a window excludes up front. */
export interface SelectionUnits {
  readonly eligible: readonly (readonly MessageGroup[])[];
  readonly outsideWindow: readonly Message[];
}

/** `full` selects by group; the turn policies by whole turn; `window` keeps only its last N turns. */
export function splitUnits(
  policy: ContextPolicy,
  groups: readonly MessageGroup[],
  windowTurns: number,
): SelectionUnits {
  if (policy === 'full') return { eligible: groups.map((group) => [group]), outsideWindow: [] };
  const turns = groupTurns(groups).map((turn) => turn.groups);
  if (policy !== 'window') return { eligible: turns, outsideWindow: [] };
  const keep = Math.max(0, turns.length - windowTurns);
  return {
    eligible: turns.slice(keep),
    outsideWindow: turns
      .slice(0, keep)
      .flat()
      .flatMap((group) => group.messages),
  };
}

/** Takes whole units newest first while they fit; if the newest unit does not, takes what of it can fit. */
export function selectNewest(
  units: readonly (readonly MessageGroup[])[],
  budget: number,
  counter: TokenCounter,
): FittedMessage[] {
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

/** Sum of the tokens of fitted messages. */
export function fittedTokens(items: readonly FittedMessage[]): number {
  return items.reduce((sum, item) => sum + item.tokens, 0);
}
