import { type MessageInput, type ToolCall } from '@mnemo/core';
import { supersedingMetadata } from '@mnemo/core/internals';
import { asArray, asRecord, parseEventData, ServerSentEventReader } from './read-json.js';
import { readUpstreamUsage, type UpstreamUsage } from './upstream-usage.js';

/** An upstream reply, reassembled: what to store as the assistant's message. */
export interface AssistantReply {
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string | undefined;
  readonly model: string | undefined;
  /** False when a stream ended without its finish reason and `[DONE]` (the upstream broke off). */
  readonly complete: boolean;
  /** What the upstream said the call cost, when it said. */
  readonly usage?: UpstreamUsage;
  /** Ids the upstream gave the reply and its parts (a Responses `resp_…` with its items' ids), so a client's later reference to one finds this reply. */
  readonly ids?: readonly string[];
}

/**
 * The assistant message to store for a reply, or `undefined` when it says nothing (no text, no tool
 * calls). A refusal is stored as the content when there is no other text; the model, the finish
 * reason and an incomplete stream are recorded in `metadata.proxy`; a regenerated reply names the replies it
 * supersedes in `metadata.mnemo.supersedes`.
 */
export function toAssistantMessage(
  reply: AssistantReply,
  supersedes: readonly string[] = [],
): MessageInput | undefined {
  if (reply.content.trim() === '' && reply.toolCalls.length === 0) return undefined;
  const proxy = {
    ...(reply.model === undefined ? {} : { model: reply.model }),
    ...(reply.finishReason === undefined ? {} : { finishReason: reply.finishReason }),
    ...(reply.complete ? {} : { incomplete: true }),
    ...(reply.usage === undefined ? {} : { usage: reply.usage }),
    ...(reply.ids === undefined || reply.ids.length === 0 ? {} : { ids: reply.ids }),
  };
  return {
    role: 'assistant',
    content: reply.content,
    ...(reply.toolCalls.length === 0 ? {} : { toolCalls: reply.toolCalls }),
    metadata: { proxy, ...(supersedes.length === 0 ? {} : supersedingMetadata(supersedes)) },
  };
}

/** Reads the first choice of a non-streamed `chat.completion` body; `undefined` when the body has none. */
export function replyFromCompletion(body: unknown): AssistantReply | undefined {
  const completion = asRecord(body);
  const choice = asRecord(asArray(completion?.choices)?.[0]);
  const message = asRecord(choice?.message);
  if (message === undefined) return undefined;
  const toolCalls = (asArray(message.tool_calls) ?? []).flatMap((entry) => {
    const call = asRecord(entry);
    const fn = asRecord(call?.function);
    return typeof call?.id === 'string' && typeof fn?.name === 'string'
      ? [
          {
            id: call.id,
            type: 'function' as const,
            function: { name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '' },
          },
        ]
      : [];
  });
  const usage = readUpstreamUsage(completion?.usage);
  return {
    content: textOr(message.content, message.refusal),
    toolCalls,
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : undefined,
    model: typeof completion?.model === 'string' ? completion.model : undefined,
    complete: true,
    ...(usage === undefined ? {} : { usage }),
  };
}

/**
 * Reassembles a streamed reply from its server-sent events as they arrive in pieces of any size:
 * content deltas are concatenated, tool calls are gathered by index (arguments concatenated), and the
 * finish reason and `[DONE]` are noted. Only the first choice is kept; events that are not JSON are skipped.
 */
export class ChatStreamAssembler {
  readonly #events = new ServerSentEventReader((data) => this.#event(data));
  #content = '';
  #refusal = '';
  #finishReason: string | undefined;
  #model: string | undefined;
  #usage: UpstreamUsage | undefined;
  #done = false;
  readonly #calls = new Map<number, { id: string; name: string; arguments: string }>();

  /** Feeds decoded text of the stream. */
  push(text: string): void {
    this.#events.push(text);
  }

  /** The reply so far; call after the stream ended (or broke off). */
  finish(): AssistantReply {
    this.#events.end();
    const toolCalls = [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        id: call.id,
        type: 'function' as const,
        function: { name: call.name, arguments: call.arguments },
      }));
    return {
      content: textOr(this.#content, this.#refusal),
      toolCalls,
      finishReason: this.#finishReason,
      model: this.#model,
      complete: this.#done || this.#finishReason !== undefined,
      ...(this.#usage === undefined ? {} : { usage: this.#usage }),
    };
  }

  #event(data: string): void {
    if (data.trim() === '[DONE]') {
      this.#done = true;
      return;
    }
    const chunk = parseEventData(data);
    if (typeof chunk?.model === 'string') this.#model = chunk.model;
    // With stream_options.include_usage the last chunk carries the usage (and no choices).
    this.#usage = readUpstreamUsage(chunk?.usage) ?? this.#usage;
    const choice = asRecord(asArray(chunk?.choices)?.find((entry) => (asRecord(entry)?.index ?? 0) === 0));
    if (choice === undefined) return;
    if (typeof choice.finish_reason === 'string') this.#finishReason = choice.finish_reason;
    const delta = asRecord(choice.delta);
    if (typeof delta?.content === 'string') this.#content += delta.content;
    if (typeof delta?.refusal === 'string') this.#refusal += delta.refusal;
    for (const entry of asArray(delta?.tool_calls) ?? []) this.#toolCallDelta(asRecord(entry));
  }

  #toolCallDelta(delta: Record<string, unknown> | undefined): void {
    if (delta === undefined) return;
    const index = typeof delta.index === 'number' ? delta.index : this.#calls.size;
    const call = this.#calls.get(index) ?? { id: '', name: '', arguments: '' };
    const fn = asRecord(delta.function);
    if (typeof delta.id === 'string' && delta.id !== '') call.id = delta.id;
    // The name arrives whole in the call's first delta; providers that repeat it later must not double it.
    if (typeof fn?.name === 'string' && call.name === '') call.name = fn.name;
    if (typeof fn?.arguments === 'string') call.arguments += fn.arguments;
    this.#calls.set(index, call);
  }
}

function textOr(content: unknown, refusal: unknown): string {
  if (typeof content === 'string' && content !== '') return content;
  return typeof refusal === 'string' ? refusal : '';
}
