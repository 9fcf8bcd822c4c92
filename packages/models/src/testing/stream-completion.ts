import type { ServerResponse } from 'node:http';
import { MemoryError } from '@mnemo/core';
import type { ScriptedContentReply } from './scripted-openai-server.js';

/** What every chunk of one streamed completion repeats. */
export interface StreamFrame {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

/** A scripted reply to stream, with its finish reason and (when the client asked for it) the usage chunk's counts. */
export interface StreamedCompletion {
  readonly frame: StreamFrame;
  readonly reply: ScriptedContentReply;
  readonly finishReason: string;
  readonly usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined;
}

/**
 * Sends a scripted reply as OpenAI-style server-sent events: a role chunk, one chunk per content piece,
 * the tool calls (name first, then the arguments in two pieces), a chunk with the finish reason, the
 * usage chunk (empty `choices`) when requested, and `data: [DONE]`. Honours the reply's `pause` and
 * `breakAfterChunks`; stops writing as soon as the client hangs up.
 */
export async function streamCompletion(response: ServerResponse, completion: StreamedCompletion): Promise<void> {
  const { frame, reply } = completion;
  const pieces = contentPieces(reply);
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) => {
    if (!response.destroyed)
      response.write(
        `data: ${JSON.stringify({ ...frame, object: 'chat.completion.chunk', system_fingerprint: null, choices, ...extra })}\n\n`,
      );
  };
  const delta = (value: Record<string, unknown>, finishReason: string | null = null) => [
    { index: 0, delta: value, logprobs: null, finish_reason: finishReason },
  ];

  send(delta({ role: 'assistant', content: '', refusal: null }));
  for (const [index, piece] of pieces.entries()) {
    if (reply.breakAfterChunks === index) {
      response.destroy();
      return;
    }
    if (reply.pause?.afterChunks === index) await reply.pause.until;
    if (response.destroyed) return;
    send(delta({ content: piece }));
    // One piece per TCP write, so a reader sees the reply arrive in parts.
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (reply.breakAfterChunks !== undefined && reply.breakAfterChunks >= pieces.length) {
    response.destroy();
    return;
  }
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    send(
      delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    const half = Math.ceil(call.arguments.length / 2);
    for (const part of [call.arguments.slice(0, half), call.arguments.slice(half)]) {
      if (part !== '') send(delta({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  }
  send(delta({}, completion.finishReason));
  if (completion.usage !== undefined) send([], { usage: completion.usage });
  if (!response.destroyed) response.end('data: [DONE]\n\n');
}

/** The pieces a scripted reply's content streams in: its `chunks`, else one per word. Throws `invalid_input` when the chunks do not join to the content. */
export function contentPieces(reply: ScriptedContentReply): readonly string[] {
  if (reply.chunks === undefined) return reply.content === '' ? [] : reply.content.split(/(?<=\s)(?=\S)/);
  if (reply.chunks.join('') !== reply.content) {
    throw new MemoryError(
      'invalid_input',
      `scripted reply chunks ${JSON.stringify(reply.chunks)} do not join to its content ${JSON.stringify(reply.content)}`,
    );
  }
  return reply.chunks;
}
