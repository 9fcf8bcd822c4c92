import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { MemoryError } from '@mnemo/core';
import { listenOnLoopback } from './listen-on-loopback.js';
import { buildEmbeddingsResponse, type ScriptedVectorsReply } from './embeddings-response.js';
import { buildScriptedResponse, estimateResponsesPromptTokens, streamScriptedResponse } from './responses-answer.js';
import { streamCompletion } from './stream-completion.js';

/** Token counts a scripted reply reports in `usage`. */
export interface ScriptedUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Prompt tokens the reply says were read from the provider's cache (Responses `input_tokens_details.cached_tokens`); default 0. */
  readonly cachedTokens?: number;
}

/**
 * Answers with an assistant message. `usage` defaults to a rough estimate (characters / 4, rounded up)
 * of the request's message contents and of `content`; `delayMs` waits before answering.
 */
export interface ScriptedContentReply {
  readonly content: string;
  readonly usage?: ScriptedUsage;
  /** Default `stop`, or `tool_calls` when the reply has tool calls. */
  readonly finishReason?: string;
  readonly delayMs?: number;
  /** Function calls the assistant makes (with `content: ''` for a reply that only calls tools). */
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** Streaming only: the pieces the content is sent in, in order; they must join to `content`. Default: one piece per word. */
  readonly chunks?: readonly string[];
  /** Streaming only: after `afterChunks` content pieces, wait for `until` before sending the rest (e.g. while a client hangs up). */
  readonly pause?: ScriptedPause;
  /** Streaming only: destroy the connection after this many content pieces, as an upstream failing mid-stream does. */
  readonly breakAfterChunks?: number;
}

/** A function call of a scripted reply; streamed, its arguments arrive in two pieces. */
export interface ScriptedToolCall {
  readonly id: string;
  readonly name: string;
  /** JSON text of the arguments. */
  readonly arguments: string;
}

/** Where a streamed reply stops until a promise settles. */
export interface ScriptedPause {
  readonly afterChunks: number;
  readonly until: Promise<unknown>;
}

/**
 * Answers with any HTTP status and a JSON body, e.g. `{ status: 500 }` or `{ status: 200, body: { choices: [] } }`.
 * `body` defaults to an OpenAI-style error object naming the status.
 */
export interface ScriptedStatusReply {
  readonly status: number;
  readonly body?: unknown;
  /** Extra response headers; they override the server's `retry-after-ms`. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly delayMs?: number;
}

/** Waits `delayMs`, then answers with the assistant message `delayed`: long delays provoke client timeouts. */
export interface ScriptedDelayReply {
  readonly delayMs: number;
}

/** Answers with `raw` as the body verbatim (default status 200, content type `application/json`), e.g. `not json`. */
export interface ScriptedRawReply {
  readonly raw: string;
  readonly status?: number;
  readonly contentType?: string;
  readonly delayMs?: number;
  /** Declares the whole body's length but sends only its first `breakAfterBytes` bytes, then destroys the connection (an upstream cut mid-reply). */
  readonly breakAfterBytes?: number;
}

/** One step of the script: what the server answers to the next chat-completions request. */
export type ScriptedReply = ScriptedContentReply | ScriptedStatusReply | ScriptedDelayReply | ScriptedRawReply;

/**
 * One step of the embeddings script: vectors to send as they are, an error status, a raw body, or a
 * delay before the deterministic vectors.
 */
export type ScriptedEmbeddingReply = ScriptedVectorsReply | ScriptedStatusReply | ScriptedRawReply | ScriptedDelayReply;

/** A request the server received, recorded before it was answered. */
export interface ReceivedRequest {
  readonly method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body (`undefined` for an empty body; the raw text when it is not JSON). */
  readonly body: unknown;
}

/** Options of {@link startScriptedOpenAiServer}. */
export interface ScriptedOpenAiServerOptions {
  /** Answers to chat-completions and Responses requests, consumed in order; retries consume replies too. */
  readonly replies: readonly ScriptedReply[];
  /**
   * Chooses the reply from the request itself (its parsed JSON body), e.g. by `model` or `response_format`,
   * when several clients share one server in an order no script can foresee; returning `undefined` falls
   * back to the next reply of `replies`.
   */
  readonly replyTo?: (request: Readonly<Record<string, unknown>>) => ScriptedReply | undefined;
  /**
   * When true, the last reply is never consumed: once the script reaches it, it answers every further
   * chat-completions request (e.g. `{ replies: [{ content: 'ok' }], repeatLast: true }` for load tests). Default false.
   */
  readonly repeatLast?: boolean;
  /** When false, `requests` stays empty (long load runs would otherwise keep every body). Default true. */
  readonly recordRequests?: boolean;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` or get a 401 that consumes no reply. */
  readonly apiKey?: string;
  /** Model ids `GET /v1/models` lists; default `['scripted-model']`. */
  readonly models?: readonly string[];
  /**
   * Value of the `retry-after-ms` header sent with every reply of status 400 or more, so that SDK
   * retries in tests do not wait the default back-off; default 0, `null` to send none.
   */
  readonly retryAfterMs?: number | null;
  /**
   * Answers to `POST /v1/embeddings`, consumed in order (retries consume them too); once they are used up,
   * or when there are none, the server answers with deterministic vectors.
   */
  readonly embeddingReplies?: readonly ScriptedEmbeddingReply[];
  /** Length of deterministic vectors when a request names no `dimensions`; default 16. */
  readonly embeddingDimensions?: number;
}

/** A running scripted server; `close()` ends open connections and stops it. */
export interface ScriptedOpenAiServer {
  /** Base URL with the version path, e.g. `http://127.0.0.1:41234/v1`, as OpenAI clients expect. */
  readonly baseUrl: string;
  /** Every request received (chat completions, model listings, unknown paths), in arrival order. */
  readonly requests: readonly ReceivedRequest[];
  /** Replies not consumed yet (with `repeatLast`, the repeated last reply counts as one). */
  readonly remainingReplies: number;
  /** Embedding replies not consumed yet. */
  readonly remainingEmbeddingReplies: number;
  close(): Promise<void>;
}

const delayedContent = 'delayed';
const maxBodyBytes = 10 * 1024 * 1024;

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that speaks the OpenAI chat-completions protocol
 * with scripted replies, for testing LLM code paths without a model: `POST /v1/chat/completions`
 * answers with the next reply of the script — as one JSON `chat.completion`, or, for `"stream": true`,
 * as server-sent events (`data:` lines of `chat.completion.chunk`, a usage chunk when
 * `stream_options.include_usage` is set, then `data: [DONE]`); `POST /v1/responses` answers with the
 * same script in the Responses protocol (a `response` object, or its event stream up to
 * `response.completed`); status and raw replies are sent as they are either way — and a 500 naming the request once the script is used up; `GET /v1/models` lists
 * `models`; `POST /v1/embeddings` answers with the next embedding reply, or deterministic vectors when
 * none is scripted (see {@link buildEmbeddingsResponse}). The same routes answer without the `/v1` prefix.
 */
export async function startScriptedOpenAiServer(options: ScriptedOpenAiServerOptions): Promise<ScriptedOpenAiServer> {
  const replies = [...options.replies];
  const embeddingReplies = [...(options.embeddingReplies ?? [])];
  const requests: ReceivedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const context: HandlerContext = {
    options,
    requests,
    nextReply: () => (options.repeatLast === true && replies.length === 1 ? replies[0] : replies.shift()),
    nextEmbeddingReply: () => embeddingReplies.shift(),
    completionCount: 0,
    wait: (delayMs, response) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => finish(true), delayMs);
        const finish = (answered: boolean) => {
          clearTimeout(timer);
          timers.delete(timer);
          response.off('close', onClose);
          resolve(answered);
        };
        const onClose = () => finish(false);
        timers.add(timer);
        // A client that timed out closes the connection: stop waiting and never write to it.
        response.on('close', onClose);
      }),
  };
  const server = createServer((request, response) => {
    handleRequest(context, request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, errorBody(500, `scripted server failed: ${String(error)}`));
      else response.destroy();
    });
  });
  const port = await listenOnLoopback(server);
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get remainingReplies() {
      return replies.length;
    },
    get remainingEmbeddingReplies() {
      return embeddingReplies.length;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface HandlerContext {
  readonly options: ScriptedOpenAiServerOptions;
  readonly requests: ReceivedRequest[];
  readonly nextReply: () => ScriptedReply | undefined;
  readonly nextEmbeddingReply: () => ScriptedEmbeddingReply | undefined;
  completionCount: number;
  /** Resolves true after `delayMs`, or false as soon as the client hangs up. */
  readonly wait: (delayMs: number, response: ServerResponse) => Promise<boolean>;
}

async function handleRequest(
  context: HandlerContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const text = await readBody(request);
  const path = request.url ?? '/';
  const body = parseBody(text);
  if (context.options.recordRequests !== false)
    context.requests.push({ method: request.method ?? 'GET', path, headers: { ...request.headers }, body: body.value });
  const route = path.split('?')[0]!.replace(/^\/v1(?=\/)/, '');

  if (context.options.apiKey !== undefined && request.headers.authorization !== `Bearer ${context.options.apiKey}`) {
    sendError(context, response, 401, 'Incorrect API key provided.', 'invalid_api_key');
    return;
  }
  if (request.method === 'GET' && route === '/models') {
    const created = Math.floor(Date.now() / 1000);
    const data = (context.options.models ?? ['scripted-model']).map((id) => ({
      id,
      object: 'model',
      created,
      owned_by: 'mnemo-scripted',
    }));
    sendJson(response, 200, { object: 'list', data });
    return;
  }
  if (request.method === 'POST' && route === '/embeddings') {
    await answerEmbeddings(context, body, response);
    return;
  }
  if (request.method !== 'POST' || (route !== '/chat/completions' && route !== '/responses')) {
    sendError(context, response, 404, `no route for ${request.method} ${path}`, 'not_found');
    return;
  }
  if (!body.json || typeof body.value !== 'object' || body.value === null) {
    sendError(context, response, 400, 'request body must be a JSON object', 'invalid_request_error');
    return;
  }
  const completion = body.value as Record<string, unknown>;
  context.completionCount += 1;
  const reply = context.options.replyTo?.(completion) ?? context.nextReply();
  if (reply === undefined) {
    sendError(
      context,
      response,
      500,
      `the script has no reply left for chat-completions request ${context.completionCount}`,
      'script_exhausted',
      {
        'x-should-retry': 'false',
      },
    );
    return;
  }
  await answer(context, reply, completion, response, route === '/responses');
}

async function answer(
  context: HandlerContext,
  reply: ScriptedReply,
  completion: Record<string, unknown>,
  response: ServerResponse,
  responsesApi: boolean,
): Promise<void> {
  if (reply.delayMs !== undefined && reply.delayMs > 0) {
    const answered = await context.wait(reply.delayMs, response);
    if (!answered) return;
  }
  if ('raw' in reply) {
    const status = reply.status ?? 200;
    const whole = Buffer.from(reply.raw);
    const length = reply.breakAfterBytes === undefined ? {} : { 'content-length': String(whole.length) };
    response.writeHead(status, {
      'content-type': reply.contentType ?? 'application/json',
      ...length,
      ...retryHeaders(context, status),
    });
    if (reply.breakAfterBytes === undefined) return void response.end(whole);
    response.write(whole.subarray(0, reply.breakAfterBytes), () => response.destroy());
    return;
  }
  if ('status' in reply) {
    const body = reply.body === undefined ? errorBody(reply.status, `scripted status ${reply.status}`) : reply.body;
    sendJson(response, reply.status, body, { ...retryHeaders(context, reply.status), ...reply.headers });
    return;
  }
  const content: ScriptedContentReply = 'content' in reply ? reply : { content: delayedContent };
  if (responsesApi) {
    const usage = content.usage ?? {
      promptTokens: estimateResponsesPromptTokens(completion),
      completionTokens: Math.ceil(content.content.length / 4),
    };
    const scripted = {
      number: context.completionCount,
      model: typeof completion.model === 'string' ? completion.model : 'scripted-model',
      reply: content,
      usage,
    };
    if (completion.stream === true) await streamScriptedResponse(response, scripted);
    else sendJson(response, 200, buildScriptedResponse(scripted));
    return;
  }
  const usage = content.usage ?? estimateUsage(completion, content.content);
  const finishReason = content.finishReason ?? (content.toolCalls === undefined ? 'stop' : 'tool_calls');
  const frame = {
    id: `chatcmpl-scripted-${context.completionCount}`,
    created: Math.floor(Date.now() / 1000),
    model: typeof completion.model === 'string' ? completion.model : 'scripted-model',
  };
  const wireUsage = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cachedTokens } }),
  };
  if (completion.stream === true) {
    await streamCompletion(response, {
      frame,
      reply: content,
      finishReason,
      usage: includeUsage(completion) ? wireUsage : undefined,
    });
    return;
  }
  const toolCalls = content.toolCalls?.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  sendJson(response, 200, {
    ...frame,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: content.content === '' && toolCalls !== undefined ? null : content.content,
          refusal: null,
          ...(toolCalls === undefined ? {} : { tool_calls: toolCalls }),
        },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    usage: wireUsage,
  });
}

async function answerEmbeddings(
  context: HandlerContext,
  body: { json: boolean; value: unknown },
  response: ServerResponse,
): Promise<void> {
  if (!body.json || typeof body.value !== 'object' || body.value === null) {
    sendError(context, response, 400, 'request body must be a JSON object', 'invalid_request_error');
    return;
  }
  const reply = context.nextEmbeddingReply();
  if (reply?.delayMs !== undefined && reply.delayMs > 0) {
    const answered = await context.wait(reply.delayMs, response);
    if (!answered) return;
  }
  if (reply !== undefined && 'raw' in reply) {
    const status = reply.status ?? 200;
    response.writeHead(status, {
      'content-type': reply.contentType ?? 'application/json',
      ...retryHeaders(context, status),
    });
    response.end(reply.raw);
    return;
  }
  if (reply !== undefined && 'status' in reply) {
    sendJson(response, reply.status, reply.body ?? errorBody(reply.status, `scripted status ${reply.status}`), {
      ...retryHeaders(context, reply.status),
      ...reply.headers,
    });
    return;
  }
  const vectors = reply !== undefined && 'vectors' in reply ? reply : undefined;
  const answer = await buildEmbeddingsResponse(
    body.value as Record<string, unknown>,
    vectors,
    context.options.embeddingDimensions ?? 16,
  );
  sendJson(response, answer.status, answer.body, retryHeaders(context, answer.status));
}

function includeUsage(completion: Record<string, unknown>): boolean {
  const options = completion.stream_options;
  return (
    typeof options === 'object' && options !== null && (options as { include_usage?: unknown }).include_usage === true
  );
}

function estimateUsage(completion: Record<string, unknown>, content: string): ScriptedUsage {
  const messages = Array.isArray(completion.messages) ? (completion.messages as unknown[]) : [];
  const promptChars = messages.reduce<number>((sum, message) => {
    const text =
      typeof message === 'object' && message !== null ? (message as { content?: unknown }).content : undefined;
    return sum + (typeof text === 'string' ? text.length : 0);
  }, 0);
  return { promptTokens: Math.ceil(promptChars / 4), completionTokens: Math.ceil(content.length / 4) };
}

function retryHeaders(context: HandlerContext, status: number): Record<string, string> {
  const retryAfterMs = context.options.retryAfterMs === undefined ? 0 : context.options.retryAfterMs;
  return status >= 400 && retryAfterMs !== null ? { 'retry-after-ms': String(retryAfterMs) } : {};
}

function errorBody(status: number, message: string, code: string | null = null): unknown {
  return { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code } };
}

function sendError(
  context: HandlerContext,
  response: ServerResponse,
  status: number,
  message: string,
  code: string,
  headers: Record<string, string> = {},
): void {
  sendJson(response, status, errorBody(status, message, code), { ...retryHeaders(context, status), ...headers });
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  response.end(text);
}

/** Parses a request body: JSON when it is, else the raw text (`json: false`). */
export function parseBody(text: string): { json: boolean; value: unknown } {
  if (text.length === 0) return { json: false, value: undefined };
  try {
    return { json: true, value: JSON.parse(text) as unknown };
  } catch {
    return { json: false, value: text };
  }
}

/** Reads a request body whole (10 MiB at most: `invalid_input` past it). */
export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) throw new MemoryError('invalid_input', `request body is over ${maxBodyBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
