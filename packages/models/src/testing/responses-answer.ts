import type { ServerResponse } from 'node:http';
import type { ScriptedContentReply, ScriptedUsage } from './scripted-openai-server.js';
import { contentPieces } from './stream-completion.js';

/** What a scripted Responses answer is made of. */
export interface ScriptedResponse {
  /** Numbers the response and its items, e.g. `resp_scripted_3`, `msg_scripted_3_0`. */
  readonly number: number;
  readonly model: string;
  readonly reply: ScriptedContentReply;
  readonly usage: ScriptedUsage;
}

/**
 * The Responses `response` object for a scripted reply: a message item with the content (when any),
 * one `function_call` item per tool call, `usage` with `input_tokens_details.cached_tokens`.
 */
export function buildScriptedResponse(
  answer: ScriptedResponse,
  status: 'in_progress' | 'completed' = 'completed',
): Record<string, unknown> {
  const { number, usage } = answer;
  const output = status === 'in_progress' ? [] : outputItems(answer);
  return {
    id: `resp_scripted_${number}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    model: answer.model,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage:
      status === 'in_progress'
        ? null
        : {
            input_tokens: usage.promptTokens,
            input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
            output_tokens: usage.completionTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: usage.promptTokens + usage.completionTokens,
          },
  };
}

function outputItems(answer: ScriptedResponse): Record<string, unknown>[] {
  const { number, reply } = answer;
  return [
    ...(reply.content === ''
      ? []
      : [
          {
            id: `msg_scripted_${number}`,
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: reply.content, annotations: [], logprobs: [] }],
          },
        ]),
    ...(reply.toolCalls ?? []).map((call, index) => ({
      id: `fc_scripted_${number}_${index}`,
      type: 'function_call',
      status: 'completed',
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
    })),
  ];
}

/**
 * Streams a scripted reply as the Responses events OpenAI sends: `response.created`, `in_progress`,
 * the message item (added, content part, one text delta per piece, done events), each function call
 * (added, arguments in two deltas, done), and `response.completed` with usage. Honours
 * `breakAfterChunks` and `pause`; stops as soon as the client hangs up.
 */
export async function streamScriptedResponse(response: ServerResponse, answer: ScriptedResponse): Promise<void> {
  const { reply } = answer;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  let sequence = 0;
  const send = (type: string, fields: Record<string, unknown>) => {
    if (!response.destroyed)
      response.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
  };
  send('response.created', { response: buildScriptedResponse(answer, 'in_progress') });
  send('response.in_progress', { response: buildScriptedResponse(answer, 'in_progress') });
  const items = outputItems(answer);
  let outputIndex = 0;
  if (reply.content !== '') {
    const item = items[0]!;
    const itemId = String(item.id);
    send('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    send('response.content_part.added', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const [index, piece] of contentPieces(reply).entries()) {
      if (reply.breakAfterChunks === index) return void response.destroy();
      if (reply.pause?.afterChunks === index) await reply.pause.until;
      if (response.destroyed) return;
      send('response.output_text.delta', {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
      await new Promise((resolve) => setImmediate(resolve));
    }
    send('response.output_text.done', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      text: reply.content,
      logprobs: [],
    });
    send('response.content_part.done', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: reply.content, annotations: [] },
    });
    send('response.output_item.done', { output_index: 0, item });
    outputIndex = 1;
  }
  if (reply.breakAfterChunks !== undefined) return void response.destroy();
  for (const item of items.slice(outputIndex)) {
    const args = String(item.arguments);
    send('response.output_item.added', {
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', arguments: '' },
    });
    const half = Math.ceil(args.length / 2);
    for (const part of [args.slice(0, half), args.slice(half)])
      if (part !== '')
        send('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: part });
    send('response.function_call_arguments.done', {
      item_id: item.id,
      output_index: outputIndex,
      name: item.name,
      arguments: args,
    });
    send('response.output_item.done', { output_index: outputIndex, item });
    outputIndex += 1;
  }
  send('response.completed', { response: buildScriptedResponse(answer) });
  if (!response.destroyed) response.end();
}

/** A rough usage estimate of a Responses request (characters / 4 of its instructions and input text). */
export function estimateResponsesPromptTokens(request: Readonly<Record<string, unknown>>): number {
  const input = request.input;
  const texts: string[] = typeof request.instructions === 'string' ? [request.instructions] : [];
  if (typeof input === 'string') texts.push(input);
  for (const item of Array.isArray(input) ? input : []) texts.push(JSON.stringify(item));
  return Math.ceil(texts.join('').length / 4);
}
