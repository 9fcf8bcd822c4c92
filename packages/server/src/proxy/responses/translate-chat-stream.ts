import { asArray, asRecord, parseEventData, ServerSentEventReader } from '../read-json.js';
import { mergeUpstreamUsage, readUpstreamUsage, type UpstreamUsage } from '../upstream-usage.js';
import { incompleteReasonOf } from './chat-translation.js';
import { buildResponse, functionCallItem, messageItem, newResponsesId, outputText } from './responses-object.js';
import type { ResponsesBody } from './responses-request.js';

/** An output item being streamed: its index, id and what arrived so far. */
type OpenItem =
  | { readonly kind: 'message'; readonly index: number; readonly id: string; text: string }
  | {
      readonly kind: 'call';
      readonly index: number;
      readonly id: string;
      readonly callIndex: number;
      callId: string;
      name: string;
      arguments: string;
    };

/**
 * Turns a chat-completions event stream into the Responses event stream OpenAI's SDKs parse:
 * `response.created`, `response.in_progress`, then per output item `response.output_item.added`, its
 * `content_part.added` / `output_text.delta`s / `output_text.done` / `content_part.done` (text) or
 * `function_call_arguments.delta`s / `.done` (a call), `response.output_item.done`, and at the end
 * `response.completed` (`response.incomplete` for `length`) with the whole response and its usage. A
 * chat stream that ends without a finish reason or `[DONE]` gets no closing event (the relay then tells
 * the client it broke off); an `error` chunk becomes an `error` event.
 */
export function translateChatStream(
  upstream: ReadableStream<Uint8Array>,
  body: ResponsesBody,
): ReadableStream<Uint8Array> {
  const translator = new ChatToResponsesEvents(body);
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  return upstream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(translator.start()));
      },
      transform(chunk, controller) {
        const text = translator.push(decoder.decode(chunk, { stream: true }));
        if (text !== '') controller.enqueue(encoder.encode(text));
      },
      flush(controller) {
        const text = translator.end(decoder.decode());
        if (text !== '') controller.enqueue(encoder.encode(text));
      },
    }),
  );
}

class ChatToResponsesEvents {
  readonly #body: ResponsesBody;
  readonly #id = newResponsesId('resp');
  readonly #createdAt = Math.floor(Date.now() / 1000);
  readonly #reader = new ServerSentEventReader((data) => this.#chunk(data));
  readonly #done: Record<string, unknown>[] = [];
  #model: string;
  #open: OpenItem | undefined;
  #sequence = 0;
  #out = '';
  #finishReason: string | undefined;
  #finished = false;
  #usage: UpstreamUsage | undefined;

  constructor(body: ResponsesBody) {
    this.#body = body;
    this.#model = body.model ?? '';
  }

  start(): string {
    const response = this.#response('in_progress', []);
    this.#emit('response.created', { response });
    this.#emit('response.in_progress', { response });
    return this.#take();
  }

  push(text: string): string {
    this.#reader.push(text);
    return this.#take();
  }

  end(text: string): string {
    this.#reader.push(text);
    this.#reader.end();
    if (this.#finished || this.#finishReason !== undefined) {
      this.#close();
      const reason = incompleteReasonOf(this.#finishReason);
      const response = this.#response(reason === undefined ? 'completed' : 'incomplete', this.#done, reason);
      this.#emit(reason === undefined ? 'response.completed' : 'response.incomplete', { response });
    }
    return this.#take();
  }

  #chunk(data: string): void {
    if (data.trim() === '[DONE]') {
      this.#finished = true;
      return;
    }
    const chunk = parseEventData(data);
    if (chunk === undefined) return;
    const error = asRecord(chunk.error);
    if (error !== undefined) {
      this.#emit('error', {
        code: error.code ?? null,
        // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the upstream's message as text, whatever JSON it sent (text in practice)
        message: String(error.message ?? 'upstream error'),
        param: null,
        error,
      });
      return;
    }
    if (typeof chunk.model === 'string') this.#model = chunk.model;
    this.#usage = mergeUpstreamUsage(this.#usage, readUpstreamUsage(chunk.usage));
    const choice = asRecord(asArray(chunk.choices)?.find((entry) => (asRecord(entry)?.index ?? 0) === 0));
    if (choice === undefined) return;
    const delta = asRecord(choice.delta);
    const content =
      typeof delta?.content === 'string' ? delta.content : typeof delta?.refusal === 'string' ? delta.refusal : '';
    if (content !== '') this.#text(content);
    for (const entry of asArray(delta?.tool_calls) ?? []) this.#callDelta(asRecord(entry) ?? {});
    if (typeof choice.finish_reason === 'string') this.#finishReason = choice.finish_reason;
  }

  #text(delta: string): void {
    if (this.#open?.kind !== 'message') {
      this.#close();
      const open: OpenItem = { kind: 'message', index: this.#done.length, id: newResponsesId('msg'), text: '' };
      this.#open = open;
      this.#emit('response.output_item.added', {
        output_index: open.index,
        item: messageItem(open.id, '', 'in_progress'),
      });
      this.#emit('response.content_part.added', {
        item_id: open.id,
        output_index: open.index,
        content_index: 0,
        part: outputText(''),
      });
    }
    const open = this.#open;
    open.text += delta;
    this.#emit('response.output_text.delta', {
      item_id: open.id,
      output_index: open.index,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  #callDelta(delta: Record<string, unknown>): void {
    const callIndex = typeof delta.index === 'number' ? delta.index : 0;
    const fn = asRecord(delta.function);
    if (this.#open?.kind !== 'call' || this.#open.callIndex !== callIndex) {
      this.#close();
      const open: OpenItem = {
        kind: 'call',
        index: this.#done.length,
        id: newResponsesId('fc'),
        callIndex,
        callId: typeof delta.id === 'string' ? delta.id : '',
        name: typeof fn?.name === 'string' ? fn.name : '',
        arguments: '',
      };
      this.#open = open;
      this.#emit('response.output_item.added', {
        output_index: open.index,
        item: functionCallItem(open.id, { id: open.callId, name: open.name, arguments: '' }, 'in_progress'),
      });
    }
    const open = this.#open;
    if (typeof delta.id === 'string' && delta.id !== '' && open.callId === '') open.callId = delta.id;
    if (typeof fn?.arguments === 'string' && fn.arguments !== '') {
      open.arguments += fn.arguments;
      this.#emit('response.function_call_arguments.delta', {
        item_id: open.id,
        output_index: open.index,
        delta: fn.arguments,
      });
    }
  }

  // Ends the item being streamed with its done events, and keeps it for the closing response.
  #close(): void {
    const open = this.#open;
    if (open === undefined) return;
    this.#open = undefined;
    if (open.kind === 'message') {
      this.#emit('response.output_text.done', {
        item_id: open.id,
        output_index: open.index,
        content_index: 0,
        text: open.text,
        logprobs: [],
      });
      this.#emit('response.content_part.done', {
        item_id: open.id,
        output_index: open.index,
        content_index: 0,
        part: outputText(open.text),
      });
      const item = messageItem(open.id, open.text, 'completed');
      this.#done.push(item);
      this.#emit('response.output_item.done', { output_index: open.index, item });
      return;
    }
    this.#emit('response.function_call_arguments.done', {
      item_id: open.id,
      output_index: open.index,
      name: open.name,
      arguments: open.arguments,
    });
    const item = functionCallItem(
      open.id,
      { id: open.callId, name: open.name, arguments: open.arguments },
      'completed',
    );
    this.#done.push(item);
    this.#emit('response.output_item.done', { output_index: open.index, item });
  }

  #response(
    status: 'in_progress' | 'completed' | 'incomplete',
    output: readonly unknown[],
    incompleteReason?: string,
  ): Record<string, unknown> {
    return buildResponse(
      {
        id: this.#id,
        createdAt: this.#createdAt,
        model: this.#model,
        status,
        ...(incompleteReason === undefined ? {} : { incompleteReason }),
        output: [...output],
        ...(status === 'in_progress' || this.#usage === undefined ? {} : { usage: this.#usage }),
      },
      this.#body,
    );
  }

  #emit(type: string, fields: Record<string, unknown>): void {
    const event = { type, sequence_number: this.#sequence, ...fields };
    this.#sequence += 1;
    this.#out += `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
  }

  #take(): string {
    const out = this.#out;
    this.#out = '';
    return out;
  }
}
