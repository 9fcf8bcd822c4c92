import { randomBytes } from 'node:crypto';
import type { UpstreamUsage } from '../upstream-usage.js';
import type { ResponsesBody } from './responses-request.js';

/** A fresh id in OpenAI's style, e.g. `resp_…`, `msg_…`, `fc_…`. */
export function newResponsesId(prefix: 'resp' | 'msg' | 'fc'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** What a response object is made of when mnemo writes it (translating a chat completion). */
export interface ResponseParts {
  readonly id: string;
  readonly createdAt: number;
  readonly model: string;
  readonly status: 'in_progress' | 'completed' | 'incomplete';
  readonly incompleteReason?: string;
  readonly output: readonly unknown[];
  readonly usage?: UpstreamUsage;
}

/** An assistant message output item holding `text`. */
export function messageItem(id: string, text: string, status: 'in_progress' | 'completed'): Record<string, unknown> {
  return { id, type: 'message', status, role: 'assistant', content: status === 'completed' ? [outputText(text)] : [] };
}

/** An `output_text` content part. */
export function outputText(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/** A function call output item. */
export function functionCallItem(
  id: string,
  call: { id: string; name: string; arguments: string },
  status: 'in_progress' | 'completed',
): Record<string, unknown> {
  return { id, type: 'function_call', status, call_id: call.id, name: call.name, arguments: call.arguments };
}

/**
 * A Responses `response` object as OpenAI sends it: the parts, the request's settings echoed
 * (instructions, tools, tool choice, sampling, `store`, `previous_response_id`, user fields, metadata)
 * and usage in Responses' shape (`input_tokens_details.cached_tokens`).
 */
export function buildResponse(parts: ResponseParts, body: ResponsesBody): Record<string, unknown> {
  const { usage } = parts;
  return {
    id: parts.id,
    object: 'response',
    created_at: parts.createdAt,
    status: parts.status,
    background: false,
    error: null,
    incomplete_details: parts.incompleteReason === undefined ? null : { reason: parts.incompleteReason },
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: parts.model,
    output: parts.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null, ...body.reasoning },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage:
      usage === undefined
        ? null
        : {
            input_tokens: usage.inputTokens,
            input_tokens_details: { cached_tokens: usage.cachedInputTokens },
            output_tokens: usage.outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: usage.inputTokens + usage.outputTokens,
          },
    user: body.user ?? null,
    ...(body.safety_identifier === undefined ? {} : { safety_identifier: body.safety_identifier }),
    metadata: body.metadata ?? {},
  };
}
