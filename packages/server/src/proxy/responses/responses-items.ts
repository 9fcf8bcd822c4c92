import { MemoryError, type ContextMessage, type Message, type MessageInput, type ToolCall } from '@mnemo/core';
import { asArray, asRecord } from '../read-json.js';

/** Responses input turned into what mnemo stores: the system text (instructions, system and developer messages) and the turns in order. */
export interface ResponsesTurns {
  readonly system: readonly string[];
  readonly turns: readonly MessageInput[];
}

/**
 * Reads Responses items (a request's `input`, or a response's `output`): messages (text parts only),
 * `function_call` and `function_call_output` items, and `item_reference`s, which `resolve` turns into
 * the stored message that holds the item. An assistant's text and the function calls that follow it
 * are one turn, as chat completions has them; `reasoning` items are skipped (mnemo stores no reasoning).
 * Throws `invalid_input` naming `field[i]` for an item or part mnemo cannot store, `not_found` for a
 * reference `resolve` does not know; `lenient` (an upstream's output) skips what it cannot store instead.
 */
export function readResponsesItems(
  items: readonly unknown[],
  field: string,
  resolve: (id: string) => Message | undefined = () => undefined,
  lenient = false,
): ResponsesTurns {
  const system: string[] = [];
  const turns: MessageInput[] = [];
  // The stored message the previous turn came from, so that several references into one reply make one turn.
  let lastStoredId: string | undefined;
  const push = (turn: MessageInput, storedId?: string) => {
    turns.push(turn);
    lastStoredId = storedId;
  };
  items.forEach((entry, index) => {
    const item = asRecord(entry);
    const at = `${field}[${index}]`;
    if (item === undefined) throw invalid(at, 'an item must be an object');
    const type = typeof item.type === 'string' ? item.type : 'message';
    if (type === 'message') {
      const role = item.role;
      const text = messageText(item.content, at, lenient);
      if (role === 'system' || role === 'developer') system.push(text);
      else if (role === 'user') push({ role: 'user', content: text });
      else if (role === 'assistant') {
        const last = turns.at(-1);
        if (last?.role === 'assistant' && last.toolCalls === undefined && lastStoredId === undefined)
          turns[turns.length - 1] = { ...last, content: joinText(last.content, text) };
        else push({ role: 'assistant', content: text });
      } else
        throw invalid(`${at}.role`, `role must be user, assistant, system or developer (got ${JSON.stringify(role)})`);
    } else if (type === 'function_call') {
      addCall(turns, functionCall(item, at), (turn) => push(turn));
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string' || item.call_id === '')
        throw invalid(`${at}.call_id`, 'a function_call_output needs its call_id');
      push({
        role: 'tool',
        toolCallId: item.call_id,
        content: typeof item.output === 'string' ? item.output : messageText(item.output, `${at}.output`, lenient),
      });
    } else if (type === 'item_reference') {
      const id = typeof item.id === 'string' ? item.id : '';
      const stored = resolve(id);
      if (stored === undefined) {
        throw new MemoryError(
          'not_found',
          `body.${at}: item ${JSON.stringify(id)} is not in this conversation's recent history`,
          {
            details: { field: `body.${at}` },
          },
        );
      }
      if (stored.id !== lastStoredId) push(storedTurn(stored), stored.id);
    } else if (type !== 'reasoning' && !lenient) {
      throw invalid(at, `mnemo stores messages, function calls and their outputs; "${type}" items are not supported`);
    }
  });
  return { system, turns };
}

/** The reply an upstream's output items make: their text joined and every function call, in order. */
export function replyOfOutput(output: readonly unknown[]): { content: string; toolCalls: ToolCall[] } {
  const { turns } = readResponsesItems(output, 'output', undefined, true);
  return {
    content: turns
      .map((turn) => turn.content)
      .filter((text) => text !== '')
      .join('\n'),
    toolCalls: turns.flatMap((turn) => turn.toolCalls ?? []),
  };
}

/** The ids a response and its output items go by, so a later `item_reference` or `previous_response_id` finds the stored reply. */
export function idsOfResponse(response: Readonly<Record<string, unknown>>): string[] {
  const itemIds = (asArray(response.output) ?? [])
    .map((item) => asRecord(item)?.id)
    .filter((id): id is string => typeof id === 'string' && id !== '');
  return [...(typeof response.id === 'string' ? [response.id] : []), ...itemIds];
}

/** A context as Responses input items: messages, then each assistant's function calls as `function_call` items and tool results as `function_call_output`. */
export function toResponsesInput(messages: readonly ContextMessage[]): unknown[] {
  return messages.flatMap((message): unknown[] => {
    if (message.role === 'tool')
      return [{ type: 'function_call_output', call_id: message.toolCallId ?? '', output: message.content }];
    const text =
      message.content === '' && message.role === 'assistant'
        ? []
        : [{ type: 'message', role: message.role, content: message.content }];
    const calls = (message.toolCalls ?? []).map((call) => ({
      type: 'function_call',
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    }));
    return [...text, ...calls];
  });
}

function addCall(turns: MessageInput[], call: ToolCall, pushNew: (turn: MessageInput) => void): void {
  const last = turns.at(-1);
  if (last?.role !== 'assistant') return pushNew({ role: 'assistant', content: '', toolCalls: [call] });
  const calls = last.toolCalls ?? [];
  // A reference to a stored reply already brought its calls; the client may send them in full as well.
  if (calls.some((known) => known.id === call.id)) return;
  turns[turns.length - 1] = { ...last, toolCalls: [...calls, call] };
}

function functionCall(item: Record<string, unknown>, at: string): ToolCall {
  if (typeof item.call_id !== 'string' || item.call_id === '')
    throw invalid(`${at}.call_id`, 'a function_call needs its call_id');
  if (typeof item.name !== 'string' || item.name === '') throw invalid(`${at}.name`, 'a function_call needs its name');
  return {
    id: item.call_id,
    type: 'function',
    function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '' },
  };
}

function storedTurn(message: Message): MessageInput {
  return {
    role: message.role,
    content: message.content,
    ...(message.toolCalls === undefined || message.toolCalls.length === 0 ? {} : { toolCalls: message.toolCalls }),
    ...(message.toolCallId === undefined ? {} : { toolCallId: message.toolCallId }),
  };
}

// mnemo stores text: text parts are joined line by line; anything else (images, files, audio) is refused, not dropped silently.
function messageText(content: unknown, at: string, lenient: boolean): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  const parts = asArray(content);
  if (parts === undefined) throw invalid(`${at}.content`, 'content must be a string or a list of parts');
  return parts
    .flatMap((entry, index) => {
      const part = asRecord(entry);
      if (
        part !== undefined &&
        ['input_text', 'output_text', 'text'].includes(String(part.type)) &&
        typeof part.text === 'string'
      )
        return [part.text];
      if (part?.type === 'refusal' && typeof part.refusal === 'string') return [part.refusal];
      if (lenient) return [];
      throw invalid(
        `${at}.content[${index}]`,
        `mnemo stores text only; "${String(part?.type)}" parts are not supported`,
      );
    })
    .join('\n');
}

function joinText(first: string, second: string): string {
  return first === '' ? second : second === '' ? first : `${first}\n${second}`;
}

function invalid(field: string, message: string): MemoryError {
  return new MemoryError('invalid_input', `body.${field}: ${message}`, { details: { field: `body.${field}` } });
}
