import { supersedingMetadata, type MessageInput, type ToolCall } from '@mnemo/core';
import { readUpstreamCacheUsage, type UpstreamCacheUsage } from './upstream-cache.js';

/** An upstream reply, reassembled: what to store as the assistant's message. */
export interface AssistantReply {
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string | undefined;
  readonly model: string | undefined;
  /** False when a stream ended without its finish reason and `[DONE]` (the upstream broke off). */
  readonly complete: boolean;
  /** The prompt and cache figures the upstream reported, when it reported usage. */
  readonly usage?: UpstreamCacheUsage;
}

/**
 * The assistant message to store for a reply, or `undefined` when it says nothing (no text, no tool
 * calls). A refusal is stored as the content when there is no other text; the model, the finish
 * reason and an incomplete stream are recorded in `metadata.proxy`; a regenerated reply names the replies it
 * supersedes in `metadata.mnemo.supersedes`.
 */
export function toAssistantMessage(reply: AssistantReply, supersedes: readonly string[] = []): MessageInput | undefined {
  if (reply.content.trim() === '' && reply.toolCalls.length === 0) return undefined;
  const proxy = {
    ...(reply.model === undefined ? {} : { model: reply.model }),
    ...(reply.finishReason === undefined ? {} : { finishReason: reply.finishReason }),
    ...(reply.complete ? {} : { incomplete: true }),
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
      ? [{ id: call.id, type: 'function' as const, function: { name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '' } }]
      : [];
  });
  const usage = readUpstreamCacheUsage(completion?.usage);
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
  #buffer = '';
  #data: string[] = [];
  #content = '';
  #refusal = '';
  #finishReason: string | undefined;
  #model: string | undefined;
  #done = false;
  #usage: UpstreamCacheUsage | undefined;
  readonly #calls = new Map<number, { id: string; name: string; arguments: string }>();

  /** Feeds decoded text of the stream. */
  push(text: string): void {
    this.#buffer += text;
    const lines = this.#buffer.split(/\r\n|\r|\n/);
    this.#buffer = lines.pop() ?? '';
    for (const line of lines) this.#line(line);
  }

  /** The reply so far; call after the stream ended (or broke off). */
  finish(): AssistantReply {
    if (this.#buffer !== '') this.#line(this.#buffer);
    this.#buffer = '';
    this.#line('');
    const toolCalls = [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } }));
    return {
      content: textOr(this.#content, this.#refusal),
      toolCalls,
      finishReason: this.#finishReason,
      model: this.#model,
      complete: this.#done || this.#finishReason !== undefined,
      ...(this.#usage === undefined ? {} : { usage: this.#usage }),
    };
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#data.length > 0) this.#event(this.#data.join('\n'));
      this.#data = [];
      return;
    }
    if (line.startsWith('data:')) this.#data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }

  #event(data: string): void {
    if (data.trim() === '[DONE]') {
      this.#done = true;
      return;
    }
    let chunk: Record<string, unknown> | undefined;
    try {
      chunk = asRecord(JSON.parse(data));
    } catch {
      return;
    }
    if (typeof chunk?.model === 'string') this.#model = chunk.model;
    // With stream_options.include_usage the last chunk carries the usage (and no choices).
    const usage = readUpstreamCacheUsage(chunk?.usage);
    if (usage !== undefined) this.#usage = usage;
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

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function asArray(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}
