import { MemoryError, type MessageInput, type ToolCall } from '@mnemo/core';
import { asArray, asRecord } from '../read-json.js';

/**
 * Reads Anthropic messages (a request's `messages`, or a reply's content as one assistant message) into
 * the turns mnemo stores: text blocks joined line by line; an assistant's `tool_use` blocks are its tool
 * calls (arguments: the input as JSON); a user's `tool_result` blocks are tool turns, in place, before
 * or after its text; `thinking` blocks are skipped (mnemo stores no reasoning). Throws `invalid_input`
 * naming `field[i]` for a block mnemo cannot store (images, documents, server tools); `lenient` (an
 * upstream's reply) skips those instead.
 */
export function readAnthropicMessages(messages: readonly unknown[], field: string, lenient = false): MessageInput[] {
  const turns: MessageInput[] = [];
  messages.forEach((entry, index) => {
    const message = asRecord(entry);
    const at = `${field}[${index}]`;
    const role = message?.role;
    if (role !== 'user' && role !== 'assistant')
      throw invalid(`${at}.role`, `role must be user or assistant (got ${JSON.stringify(role)})`);
    const content = message?.content;
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : asArray(content);
    if (blocks === undefined) throw invalid(`${at}.content`, 'content must be a string or a list of blocks');
    if (role === 'assistant') turns.push(assistantTurn(blocks, `${at}.content`, lenient));
    else turns.push(...userTurns(blocks, `${at}.content`, lenient));
  });
  return turns;
}

function assistantTurn(blocks: readonly unknown[], at: string, lenient: boolean): MessageInput {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  blocks.forEach((entry, index) => {
    const block = asRecord(entry);
    if (block?.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block?.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: {
          name: block.name,
          arguments: typeof block.input === 'string' ? block.input : JSON.stringify(block.input ?? {}),
        },
      });
    } else if (!skipped(block, lenient)) throw unsupported(`${at}[${index}]`, block);
  });
  return { role: 'assistant', content: texts.join('\n'), ...(toolCalls.length === 0 ? {} : { toolCalls }) };
}

function userTurns(blocks: readonly unknown[], at: string, lenient: boolean): MessageInput[] {
  const turns: MessageInput[] = [];
  let texts: string[] = [];
  const flush = () => {
    if (texts.length > 0) turns.push({ role: 'user', content: texts.join('\n') });
    texts = [];
  };
  blocks.forEach((entry, index) => {
    const block = asRecord(entry);
    if (block?.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block?.type === 'tool_result' && typeof block.tool_use_id === 'string') {
      flush();
      turns.push({
        role: 'tool',
        toolCallId: block.tool_use_id,
        content: resultText(block.content, `${at}[${index}].content`, lenient),
      });
    } else if (!skipped(block, lenient)) throw unsupported(`${at}[${index}]`, block);
  });
  flush();
  return turns;
}

function resultText(content: unknown, at: string, lenient: boolean): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  const blocks = asArray(content);
  if (blocks === undefined) throw invalid(at, 'a tool_result content must be a string or a list of blocks');
  return blocks
    .flatMap((entry, index) => {
      const block = asRecord(entry);
      if (block?.type === 'text' && typeof block.text === 'string') return [block.text];
      if (lenient) return [];
      throw unsupported(`${at}[${index}]`, block);
    })
    .join('\n');
}

function skipped(block: Record<string, unknown> | undefined, lenient: boolean): boolean {
  return lenient || block?.type === 'thinking' || block?.type === 'redacted_thinking';
}

function unsupported(at: string, block: Record<string, unknown> | undefined): MemoryError {
  return invalid(at, `mnemo stores text, tool use and tool results; "${String(block?.type)}" blocks are not supported`);
}

function invalid(field: string, message: string): MemoryError {
  return new MemoryError('invalid_input', `body.${field}: ${message}`, { details: { field: `body.${field}` } });
}
