import { createServer, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './listen-on-loopback.js';
import {
  readBody,
  parseBody,
  type ReceivedRequest,
  type ScriptedContentReply,
  type ScriptedStatusReply,
} from './scripted-openai-server.js';
import { contentPieces } from './stream-completion.js';

/** One step of a Messages script: an assistant message (text and tool uses), or a status with a body. */
export type ScriptedMessagesReply = ScriptedContentReply | ScriptedStatusReply;

/** Options of {@link startScriptedAnthropicServer}. */
export interface ScriptedAnthropicServerOptions {
  /** Answers to `POST /v1/messages`, consumed in order. */
  readonly replies: readonly ScriptedMessagesReply[];
  /** Chooses the reply from the request (its parsed JSON body) when several clients share one server in no foreseeable order; `undefined` falls back to `replies`. */
  readonly replyTo?: (request: Readonly<Record<string, unknown>>) => ScriptedMessagesReply | undefined;
  /** When set, requests must carry `x-api-key: <apiKey>` or get a 401 that consumes no reply. */
  readonly apiKey?: string;
}

/** A running scripted Messages server; `close()` ends open connections and stops it. */
export interface ScriptedAnthropicServer {
  /** Base URL without the version path, e.g. `http://127.0.0.1:41234`, as Anthropic clients expect. */
  readonly baseUrl: string;
  readonly requests: readonly ReceivedRequest[];
  readonly remainingReplies: number;
  close(): Promise<void>;
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that speaks the Anthropic Messages protocol with
 * scripted replies: `POST /v1/messages` answers with the next reply as one `message`, or for
 * `"stream": true` as its events (`message_start`, per block `content_block_start` / `_delta` /
 * `_stop`, `message_delta`, `message_stop`). Usage is counted (characters / 4) with a prompt cache as
 * Anthropic's works: each `cache_control` breakpoint writes the prefix up to it (tools, system,
 * messages), and a later request whose prefix up to a block boundary at or before one of its
 * breakpoints was written reads it: `cache_read_input_tokens`, `cache_creation_input_tokens` and the
 * uncached rest in `input_tokens`. A 500 once the script is used up.
 */
export async function startScriptedAnthropicServer(
  options: ScriptedAnthropicServerOptions,
): Promise<ScriptedAnthropicServer> {
  const replies = [...options.replies];
  const requests: ReceivedRequest[] = [];
  const cache = new Set<string>();
  let count = 0;
  const server = createServer((request, response) => {
    void (async () => {
      const body = parseBody(await readBody(request));
      requests.push({
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        headers: { ...request.headers },
        body: body.value,
      });
      if (options.apiKey !== undefined && request.headers['x-api-key'] !== options.apiKey)
        return sendError(response, 401, 'authentication_error', 'invalid x-api-key');
      if (request.method !== 'POST' || (request.url ?? '').split('?')[0] !== '/v1/messages')
        return sendError(response, 404, 'not_found_error', `no route for ${request.method} ${request.url}`);
      if (!body.json || typeof body.value !== 'object' || body.value === null)
        return sendError(response, 400, 'invalid_request_error', 'request body must be a JSON object');
      const message = body.value as Record<string, unknown>;
      count += 1;
      const reply = options.replyTo?.(message) ?? replies.shift();
      if (reply === undefined)
        return sendError(response, 500, 'api_error', `the script has no reply left for messages request ${count}`);
      if (reply.delayMs !== undefined && reply.delayMs > 0)
        await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      if ('status' in reply)
        return sendJson(
          response,
          reply.status,
          reply.body ?? { type: 'error', error: { type: 'api_error', message: `scripted status ${reply.status}` } },
        );
      const usage = countUsage(message, cache, reply);
      const answer = {
        id: `msg_scripted_${count}`,
        model: typeof message.model === 'string' ? message.model : 'scripted-claude',
        reply,
        usage,
      };
      if (message.stream === true) await streamMessage(response, answer);
      else
        sendJson(response, 200, {
          ...messageFrame(answer),
          content: contentBlocks(reply),
          stop_reason: stopReason(reply),
          usage,
        });
    })().catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 500, 'api_error', `scripted server failed: ${String(error)}`);
      else response.destroy();
    });
  });
  const port = await listenOnLoopback(server);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    get remainingReplies() {
      return replies.length;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

interface Answer {
  readonly id: string;
  readonly model: string;
  readonly reply: ScriptedContentReply;
  readonly usage: Usage;
}

// Anthropic looks for a cached prefix at most this many blocks before each breakpoint.
const lookbackBlocks = 20;

function countUsage(message: Record<string, unknown>, cache: Set<string>, reply: ScriptedContentReply): Usage {
  const blocks = promptBlocks(message);
  const tokensThrough: number[] = [];
  let total = 0;
  const keys = blocks.map((block, index) => {
    total += Math.ceil(JSON.stringify(block.content).length / 4);
    tokensThrough[index] = total;
    return JSON.stringify(blocks.slice(0, index + 1).map((entry) => entry.content));
  });
  const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [index] : []));
  let read = 0;
  for (const breakpoint of breakpoints) {
    for (let index = breakpoint; index >= Math.max(0, breakpoint - lookbackBlocks); index -= 1) {
      if (cache.has(keys[index]!)) {
        read = Math.max(read, tokensThrough[index]!);
        break;
      }
    }
  }
  const lastBreakpoint = breakpoints.at(-1);
  const written = lastBreakpoint === undefined ? 0 : Math.max(0, tokensThrough[lastBreakpoint]! - read);
  for (const breakpoint of breakpoints) cache.add(keys[breakpoint]!);
  const outputTokens = reply.usage?.completionTokens ?? Math.ceil(reply.content.length / 4);
  return {
    input_tokens: total - read - written,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    output_tokens: outputTokens,
  };
}

// Tools, then system blocks, then every message's blocks (with its role), in the order the cache prefix runs.
function promptBlocks(message: Record<string, unknown>): { content: unknown; breakpoint: boolean }[] {
  const entry = (value: unknown, role?: string) => {
    const { cache_control: control, ...content } = (
      typeof value === 'object' && value !== null ? value : { type: 'text', text: value }
    ) as Record<string, unknown>;
    return {
      content: role === undefined ? content : { role, ...content },
      breakpoint: control !== undefined && control !== null,
    };
  };
  const system =
    typeof message.system === 'string' ? [message.system] : Array.isArray(message.system) ? message.system : [];
  const messages = Array.isArray(message.messages) ? (message.messages as { role?: string; content?: unknown }[]) : [];
  return [
    ...(Array.isArray(message.tools) ? message.tools : []).map((tool) => entry(tool, 'tool')),
    ...system.map((block) => entry(block, 'system')),
    ...messages.flatMap((turn) =>
      (typeof turn.content === 'string' ? [turn.content] : Array.isArray(turn.content) ? turn.content : []).map(
        (block) => entry(block, turn.role),
      ),
    ),
  ];
}

function contentBlocks(reply: ScriptedContentReply): Record<string, unknown>[] {
  return [
    ...(reply.content === '' ? [] : [{ type: 'text', text: reply.content }]),
    ...(reply.toolCalls ?? []).map((call) => ({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: JSON.parse(call.arguments) as unknown,
    })),
  ];
}

function stopReason(reply: ScriptedContentReply): string {
  return reply.finishReason ?? (reply.toolCalls === undefined ? 'end_turn' : 'tool_use');
}

function messageFrame(answer: Answer): Record<string, unknown> {
  return { id: answer.id, type: 'message', role: 'assistant', model: answer.model, stop_sequence: null };
}

async function streamMessage(response: ServerResponse, answer: Answer): Promise<void> {
  const { reply, usage } = answer;
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const send = (type: string, fields: Record<string, unknown>) => {
    if (!response.destroyed) response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`);
  };
  send('message_start', {
    message: { ...messageFrame(answer), content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
  });
  let index = 0;
  if (reply.content !== '') {
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const [piece, text] of contentPieces(reply).entries()) {
      if (reply.breakAfterChunks === piece) return void response.destroy();
      if (reply.pause?.afterChunks === piece) await reply.pause.until;
      send('content_block_delta', { index, delta: { type: 'text_delta', text } });
      await new Promise((resolve) => setImmediate(resolve));
    }
    send('content_block_stop', { index });
    index += 1;
  }
  if (reply.breakAfterChunks !== undefined) return void response.destroy();
  for (const call of reply.toolCalls ?? []) {
    send('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    });
    const half = Math.ceil(call.arguments.length / 2);
    for (const part of [call.arguments.slice(0, half), call.arguments.slice(half)])
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
    send('content_block_stop', { index });
    index += 1;
  }
  send('message_delta', {
    delta: { stop_reason: stopReason(reply), stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', {});
  if (!response.destroyed) response.end();
}

function sendError(response: ServerResponse, status: number, type: string, message: string): void {
  sendJson(response, status, { type: 'error', error: { type, message } });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  response.end(text);
}
