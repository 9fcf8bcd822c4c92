import type { AssistantReply } from '../assistant-reply.js';
import { asArray, asRecord, parseEventData, ServerSentEventReader } from '../read-json.js';
import type { StreamAssembler, StreamProtocol } from '../relay-stream.js';
import { mergeUpstreamUsage, readUpstreamUsage, type UpstreamUsage } from '../upstream-usage.js';
import { readAnthropicMessages } from './messages-blocks.js';

/**
 * The reply in an Anthropic `message` (a non-streamed answer, or one a stream rebuilt): its text and
 * tool uses, `stop_reason` as the finish reason, usage with cache reads and writes, and its id.
 * `undefined` when the body is no message.
 */
export function replyFromMessage(body: unknown, complete = true): AssistantReply | undefined {
  const message = asRecord(body);
  const content = asArray(message?.content);
  if (message?.type !== 'message' || content === undefined) return undefined;
  const [turn] = readAnthropicMessages([{ role: 'assistant', content }], 'content', true);
  const usage = readUpstreamUsage(message.usage);
  return {
    content: turn?.content ?? '',
    toolCalls: turn?.toolCalls ?? [],
    finishReason: typeof message.stop_reason === 'string' ? message.stop_reason : undefined,
    model: typeof message.model === 'string' ? message.model : undefined,
    complete,
    ...(usage === undefined ? {} : { usage }),
    ...(typeof message.id === 'string' ? { ids: [message.id] } : {}),
  };
}

/**
 * Reassembles a reply from a Messages event stream: `message_start` (id, model, input usage),
 * `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`), `message_delta`
 * (stop reason, output usage) and `message_stop`, which makes it complete.
 */
export class MessagesStreamAssembler implements StreamAssembler {
  readonly #events = new ServerSentEventReader((data) => this.#event(data));
  readonly #blocks = new Map<number, { block: Record<string, unknown>; json: string }>();
  #message: Record<string, unknown> = { type: 'message', content: [] };
  #usage: UpstreamUsage | undefined;
  #stopped = false;

  push(text: string): void {
    this.#events.push(text);
  }

  finish(): AssistantReply {
    this.#events.end();
    const content = [...this.#blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, { block, json }]) =>
        block.type === 'tool_use' ? { ...block, input: toolInput(json, block.input) } : block,
      );
    const reply = replyFromMessage({ ...this.#message, type: 'message', content }, this.#stopped)!;
    return { ...reply, ...(this.#usage === undefined ? {} : { usage: this.#usage }) };
  }

  #event(data: string): void {
    const event = parseEventData(data);
    const index = typeof event?.index === 'number' ? event.index : undefined;
    switch (event?.type) {
      case 'message_start': {
        const message = asRecord(event.message) ?? {};
        this.#message = { ...message };
        this.#usage = mergeUpstreamUsage(this.#usage, readUpstreamUsage(message.usage));
        return;
      }
      case 'content_block_start': {
        const block = asRecord(event.content_block);
        if (index !== undefined && block !== undefined) this.#blocks.set(index, { block: { ...block }, json: '' });
        return;
      }
      case 'content_block_delta': {
        const entry = index === undefined ? undefined : this.#blocks.get(index);
        const delta = asRecord(event.delta);
        if (entry === undefined || delta === undefined) return;
        if (delta.type === 'text_delta' && typeof delta.text === 'string')
          entry.block.text = `${typeof entry.block.text === 'string' ? entry.block.text : ''}${delta.text}`;
        if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string')
          entry.json += delta.partial_json;
        return;
      }
      case 'message_delta': {
        const stopReason = asRecord(event.delta)?.stop_reason;
        if (typeof stopReason === 'string') this.#message.stop_reason = stopReason;
        this.#usage = mergeUpstreamUsage(this.#usage, readUpstreamUsage(event.usage));
        return;
      }
      case 'message_stop':
        this.#stopped = true;
        return;
      default:
        return;
    }
  }
}

// A tool's input streams as JSON text; a stream cut mid-way keeps the text that came.
function toolInput(json: string, started: unknown): unknown {
  if (json === '') return started ?? {};
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/** The Messages stream protocol: whole once `message_stop` came; a break is told with Anthropic's `error` event, which its SDK raises. */
export const messagesStreamProtocol: StreamProtocol = Object.freeze({
  createAssembler: () => new MessagesStreamAssembler(),
  failureEvent: (message: string, code: string) =>
    `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: code === 'upstream_timeout' ? 'timeout_error' : 'api_error', message } })}\n\n`,
  unfinished: 'without message_stop',
});
