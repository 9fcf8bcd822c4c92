import type { AssistantReply } from '../assistant-reply.js';
import { asArray, asRecord, parseEventData, ServerSentEventReader } from '../read-json.js';
import type { StreamAssembler, StreamProtocol } from '../relay-stream.js';
import { readUpstreamUsage } from '../upstream-usage.js';
import { idsOfResponse, replyOfOutput } from './responses-items.js';

/**
 * The reply in a Responses `response` object (a non-streamed answer, or the one `response.completed`
 * carries): its output's text and function calls, a chat-style finish reason (`tool_calls`, `stop`,
 * `length` for `max_output_tokens`, else the incomplete reason), usage and ids. `undefined` when the
 * body is no response (no `output` list).
 */
export function replyFromResponse(body: unknown): AssistantReply | undefined {
  const response = asRecord(body);
  const output = asArray(response?.output);
  if (response === undefined || output === undefined || response.object !== 'response') return undefined;
  const { content, toolCalls } = replyOfOutput(output);
  const usage = readUpstreamUsage(response.usage);
  return {
    content,
    toolCalls,
    finishReason: finishReasonOf(response, toolCalls.length > 0),
    model: typeof response.model === 'string' ? response.model : undefined,
    complete: true,
    ...(usage === undefined ? {} : { usage }),
    ids: idsOfResponse(response),
  };
}

function finishReasonOf(response: Record<string, unknown>, calledTools: boolean): string | undefined {
  if (response.status === 'incomplete') {
    const reason = asRecord(response.incomplete_details)?.reason;
    return reason === 'max_output_tokens' ? 'length' : typeof reason === 'string' ? reason : 'incomplete';
  }
  if (response.status === 'failed') return 'failed';
  return calledTools ? 'tool_calls' : 'stop';
}

/**
 * Reassembles a reply from a Responses event stream: the response of its closing event
 * (`response.completed`, `response.incomplete` or `response.failed`) when it came; else, for a stream
 * that broke off, the items so far (added, their text and argument deltas, done), marked incomplete.
 */
export class ResponsesStreamAssembler implements StreamAssembler {
  readonly #events = new ServerSentEventReader((data) => this.#event(data));
  readonly #items = new Map<number, Record<string, unknown>>();
  #final: AssistantReply | undefined;
  #id: string | undefined;
  #model: string | undefined;

  push(text: string): void {
    this.#events.push(text);
  }

  finish(): AssistantReply {
    this.#events.end();
    if (this.#final !== undefined) return this.#final;
    const output = [...this.#items.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
    const { content, toolCalls } = replyOfOutput(output);
    return {
      content,
      toolCalls,
      finishReason: undefined,
      model: this.#model,
      complete: false,
      ids: idsOfResponse({ id: this.#id, output }),
    };
  }

  #event(data: string): void {
    const event = parseEventData(data);
    const type = event?.type;
    if (event === undefined || typeof type !== 'string') return;
    const response = asRecord(event.response);
    if (response !== undefined) {
      if (typeof response.id === 'string') this.#id = response.id;
      if (typeof response.model === 'string') this.#model = response.model;
    }
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      this.#final = replyFromResponse(response);
      return;
    }
    const index = typeof event.output_index === 'number' ? event.output_index : undefined;
    if (index === undefined) return;
    const item = asRecord(event.item);
    if ((type === 'response.output_item.added' || type === 'response.output_item.done') && item !== undefined)
      this.#items.set(index, { ...item });
    const current = this.#items.get(index);
    if (current === undefined || typeof event.delta !== 'string') return;
    if (type === 'response.output_text.delta')
      current.content = [{ type: 'output_text', text: textOf(current) + event.delta }];
    if (type === 'response.function_call_arguments.delta')
      current.arguments = `${typeof current.arguments === 'string' ? current.arguments : ''}${event.delta}`;
  }
}

function textOf(item: Record<string, unknown>): string {
  return (asArray(item.content) ?? [])
    .map((part) => asRecord(part)?.text)
    .filter((text): text is string => typeof text === 'string')
    .join('');
}

/**
 * The Responses stream protocol: a stream is whole once its closing event came; a break is told with an
 * `error` event (OpenAI's own shape, plus an `error` object, which makes the openai SDK raise it).
 */
export const responsesStreamProtocol: StreamProtocol = Object.freeze({
  createAssembler: () => new ResponsesStreamAssembler(),
  failureEvent: (message: string, code: string) =>
    `event: error\ndata: ${JSON.stringify({ type: 'error', code, message, param: null, sequence_number: 0, error: { type: 'upstream_error', code, message } })}\n\n`,
  unfinished: 'without response.completed',
});
