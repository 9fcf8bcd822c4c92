import type { SearchHit } from './search.js';

/**
 * Who said each candidate: 1 for the assistant's replies, 0 for everything else (the user's turns, and
 * both people of a chat imported with names). In a user–assistant chat the user's turns hold what the
 * user told; the reply after one is commentary on it, however many of its words it repeats.
 */
export function assistantFlags(hits: readonly SearchHit[]): Uint8Array {
  return Uint8Array.from(hits, (hit) => (hit.message.role === 'assistant' ? 1 : 0));
}

/**
 * Per candidate: for an assistant reply whose previous message (the turn it answers) is a user turn among
 * the candidates, the share (0–1) of the query terms the reply contains that that user turn contains too —
 * how much of the reply's match is an echo of the user's own words. 0 for every other candidate, and for a
 * reply whose user turn is not a candidate (it shares none of the query's terms, so nothing was echoed).
 */
export function echoShares(masks: Uint32Array, assistant: Uint8Array, previous: Int32Array): Float64Array {
  const echo = new Float64Array(masks.length);
  for (let at = 0; at < masks.length; at += 1) {
    const before = previous[at]!;
    if (assistant[at] !== 1 || before < 0 || assistant[before] === 1) continue;
    const own = bitCount(masks[at]!);
    if (own > 0) echo[at] = bitCount((masks[at]! & masks[before]!) >>> 0) / own;
  }
  return echo;
}

function bitCount(mask: number): number {
  let count = 0;
  for (let rest = mask; rest !== 0; rest &= rest - 1) count += 1;
  return count;
}
