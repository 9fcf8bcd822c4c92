import {
  errorCodes,
  MemoryError,
  type ErrorCode,
  toOpenAiMessages,
  type CallOptions,
  type ContextPolicy,
  type ContextReport,
  type Memory,
  type MessageInput,
  type OpenAiChatMessage,
  type ScopeInput,
} from '@mnemo/core';

/** What the middleware asks of a context build (the fields of mnemo's `buildContext` it uses). */
export interface BackendContextOptions {
  readonly query?: string;
  readonly system?: string;
  readonly maxTokens?: number;
  readonly policy?: ContextPolicy;
}

/** A stored message as the middleware compares it with a prompt: role, text and tool ids. */
export interface StoredTurn {
  readonly role: MessageInput['role'];
  readonly content: string;
  readonly toolCallId?: string;
  readonly toolCallIds?: readonly string[];
}

/** Where the middleware's memory lives: a library `Memory` in the process, or a running `mnemo serve`. */
export interface MnemoBackend {
  /** Appends turns atomically, in order. */
  append(scope: ScopeInput, messages: readonly MessageInput[], options?: CallOptions): Promise<void>;
  /** The newest `count` stored messages, oldest first (fewer when the conversation is shorter; none when it does not exist). */
  tail(scope: ScopeInput, count: number, options?: CallOptions): Promise<StoredTurn[]>;
  /** The context to send, in the OpenAI chat wire shape, with mnemo's report. */
  buildContext(
    scope: ScopeInput,
    context: BackendContextOptions,
    options?: CallOptions,
  ): Promise<{ messages: OpenAiChatMessage[]; report: ContextReport }>;
}

/** A backend over a library `Memory` (`createMemory` of `@mnemo/core`); the caller keeps and closes it. */
export function memoryBackend(memory: Memory): MnemoBackend {
  return Object.freeze({
    async append(scope: ScopeInput, messages: readonly MessageInput[], options?: CallOptions) {
      await memory.append(scope, messages, options);
    },
    async tail(scope: ScopeInput, count: number, options?: CallOptions) {
      const newestFirst = await memory.listMessages(scope, { order: 'desc', limit: count }, options);
      return newestFirst.reverse().map(turnOf);
    },
    async buildContext(scope: ScopeInput, context: BackendContextOptions, options?: CallOptions) {
      const built = await memory.buildContext(scope, { ...context, ...options });
      return { messages: toOpenAiMessages(built.messages), report: built.report };
    },
  });
}

/** Options of {@link httpBackend}. */
export interface HttpBackendOptions {
  /** The server's origin, e.g. `http://127.0.0.1:8787`. */
  readonly baseUrl: string;
  /** A key of `MNEMO_API_KEYS` (sent as `Authorization: Bearer`); the key picks the tenant, so a scope's `tenantId` is ignored. */
  readonly apiKey?: string;
  /** Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
}

/**
 * A backend over a running `mnemo serve` (its resource API, `/v1/conversations/{id}/…`). A scope without
 * `userId` follows the server's rule: the conversation is its own end user. Failures are `MemoryError`s:
 * the server's code and message for an error answer, `storage_failed` when it cannot be reached.
 */
export function httpBackend(options: HttpBackendOptions): MnemoBackend {
  const base = options.baseUrl.replace(/\/+$/, '');
  const send = options.fetch ?? fetch;
  const request = async <T>(
    method: string,
    path: string,
    body: unknown,
    callOptions: CallOptions | undefined,
  ): Promise<T | undefined> => {
    let response: Response;
    try {
      response = await send(`${base}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(callOptions?.signal === undefined ? {} : { signal: callOptions.signal }),
      });
    } catch (error) {
      throw new MemoryError('storage_failed', `mnemo server at ${base} did not answer ${method} ${path}`, {
        cause: error,
      });
    }
    if (response.status === 404 && method === 'GET') return undefined;
    const text = await response.text();
    if (!response.ok) throw serverError(response.status, text, `${method} ${path}`);
    return JSON.parse(text) as T;
  };
  const at = (scope: ScopeInput, suffix = '', query: Record<string, string> = {}) => {
    const parameters = new URLSearchParams({
      ...query,
      ...(scope.userId === undefined ? {} : { user_id: scope.userId }),
    }).toString();
    return `/v1/conversations/${encodeURIComponent(scope.conversationId)}${suffix}${parameters === '' ? '' : `?${parameters}`}`;
  };
  return Object.freeze({
    async append(scope: ScopeInput, messages: readonly MessageInput[], callOptions?: CallOptions) {
      await request('POST', at(scope, '/messages'), { messages }, callOptions);
    },
    async tail(scope: ScopeInput, count: number, callOptions?: CallOptions) {
      const conversation = await request<{ messageCount: number }>('GET', at(scope), undefined, callOptions);
      if (conversation === undefined || conversation.messageCount === 0) return [];
      const afterSeq = Math.max(0, conversation.messageCount - count);
      const page = await request<{
        items: { role: MessageInput['role']; content: string; toolCallId?: string; toolCalls?: { id: string }[] }[];
      }>('GET', at(scope, '/messages', { after_seq: String(afterSeq), limit: String(count) }), undefined, callOptions);
      return (page?.items ?? []).map(turnOf);
    },
    async buildContext(scope: ScopeInput, context: BackendContextOptions, callOptions?: CallOptions) {
      const built = await request<{ messages: OpenAiChatMessage[]; report: ContextReport }>(
        'POST',
        at(scope, '/context'),
        context,
        callOptions,
      );
      return built!;
    },
  });
}

function turnOf(message: {
  role: MessageInput['role'];
  content: string;
  toolCallId?: string;
  toolCalls?: readonly { id: string }[];
}): StoredTurn {
  return {
    role: message.role,
    content: message.content,
    ...(message.toolCallId === undefined ? {} : { toolCallId: message.toolCallId }),
    ...(message.toolCalls === undefined ? {} : { toolCallIds: message.toolCalls.map((call) => call.id) }),
  };
}

const wireCodes: ReadonlySet<string> = new Set(errorCodes);

function serverError(status: number, body: string, what: string): MemoryError {
  let code: ErrorCode =
    status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : status < 500 ? 'invalid_input' : 'storage_failed';
  let message = `mnemo server answered ${status} to ${what}`;
  try {
    const parsed = JSON.parse(body) as { error?: { code?: string; message?: string } };
    if (typeof parsed.error?.code === 'string' && wireCodes.has(parsed.error.code))
      code = parsed.error.code as ErrorCode;
    if (typeof parsed.error?.message === 'string') message = `${message}: ${parsed.error.message}`;
  } catch {
    // Not JSON: the status says enough.
  }
  return new MemoryError(code, message, { details: { status } });
}
