import type { BuiltContext } from '@mnemo/core';
import { stableBoundary } from '../stable-boundary.js';

/** A content block of the Messages protocol, as mnemo writes it. */
type Block = Record<string, unknown>;

/** A context in the Messages protocol's shape: the top-level `system` blocks and the alternating `messages`. */
export interface AnthropicContext {
  readonly system: Block[];
  readonly messages: { role: 'user' | 'assistant'; content: Block[] }[];
}

/** Anthropic allows this many `cache_control` breakpoints in one request (tools, system and messages together). */
export const maxCacheBreakpoints = 4;

const ephemeral = Object.freeze({ type: 'ephemeral' });

/**
 * Writes a context for a Messages upstream. Its leading system messages (the system prompt, the memory
 * block) are the `system` blocks; the rest are messages, same-role neighbours merged into one (tool
 * results are user blocks, a system message after the first turn — the recalled snippets — a user text
 * block). `cache_control` breakpoints go on the system prompt, on the last system block when the memory
 * block follows it, and on the last block of the context's stable part ({@link stableBoundary}), so a
 * provider cache written by one request is read by the next; at most `maxCacheBreakpoints -
 * usedBreakpoints` of them (the client's tools may hold some), the stable part's first.
 */
export function toAnthropicContext(context: BuiltContext, usedBreakpoints = 0): AnthropicContext {
  const firstTurn = context.messages.findIndex((message) => message.role !== 'system');
  const leading = firstTurn < 0 ? context.messages.length : firstTurn;
  const system: Block[] = context.messages
    .slice(0, leading)
    .filter((message) => message.content !== '')
    .map((message) => ({ type: 'text', text: message.content }));
  const messages: AnthropicContext['messages'] = [];
  const lastBlockOf = new Map<number, Block>();
  context.messages.slice(leading).forEach((message, offset) => {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message);
    if (blocks.length === 0) return;
    lastBlockOf.set(leading + offset, blocks.at(-1)!);
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  });
  const breakpoints: Block[] = [];
  const boundary = stableBoundary(context);
  for (let index = boundary - 1; index >= leading; index -= 1) {
    const block = lastBlockOf.get(index);
    if (block === undefined) continue;
    breakpoints.push(block);
    break;
  }
  const hasSystemPrompt = context.report.parts.some((part) => part.kind === 'system');
  if (hasSystemPrompt && system[0] !== undefined) breakpoints.push(system[0]);
  if (system.length > 1) breakpoints.push(system.at(-1)!);
  for (const block of breakpoints.slice(0, Math.max(0, maxCacheBreakpoints - usedBreakpoints)))
    block.cache_control = { ...ephemeral };
  return { system, messages };
}

function blocksOf(message: BuiltContext['messages'][number]): Block[] {
  if (message.role === 'tool')
    return [{ type: 'tool_result', tool_use_id: message.toolCallId ?? '', content: message.content }];
  // Anthropic refuses empty text blocks.
  const text: Block[] = message.content === '' ? [] : [{ type: 'text', text: message.content }];
  const calls = (message.toolCalls ?? []).map((call) => ({
    type: 'tool_use',
    id: call.id,
    name: call.function.name,
    input: parseInput(call.function.arguments),
  }));
  return [...text, ...calls];
}

function parseInput(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // A model's broken JSON stays visible to the next model rather than vanishing.
    return { arguments: text };
  }
}
