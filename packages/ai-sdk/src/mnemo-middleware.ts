import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3Middleware,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { MemoryError, type ContextPolicy, type ContextReport, type Memory, type ScopeInput } from '@mnemo/core';
import { httpBackend, memoryBackend, type HttpBackendOptions, type MnemoBackend } from './mnemo-backend.js';
import { endsWith, readPrompt, replyOf, toPrompt, type PromptTurns } from './prompt-turns.js';

/** Options of {@link mnemoMiddleware}: where memory lives, whose conversation a call is, and the budget. */
export interface MnemoMiddlewareOptions {
  /** A library `Memory` (the caller keeps and closes it), or a running `mnemo serve`, or any {@link MnemoBackend}. */
  readonly memory: Memory | { readonly server: HttpBackendOptions } | { readonly backend: MnemoBackend };
  /**
   * The conversation of calls that name none. A call names its own with
   * `providerOptions: { mnemo: { conversationId, userId?, tenantId? } }`; a call with neither is `invalid_input`.
   */
  readonly scope?: ScopeInput;
  /** Token budget of the context mnemo builds; default the engine's (the server's) default. */
  readonly maxTokens?: number;
  /** Context policy; default the engine's (`hybrid`). */
  readonly policy?: ContextPolicy;
  /** Called with each build's report (tokens sent against the full history, what was left out). */
  readonly onContext?: (report: ContextReport, scope: ScopeInput) => void;
}

// What transformParams hands the wrappers of the same call: its scope and what it read of the prompt.
interface CallState {
  readonly scope: ScopeInput;
  readonly turns: PromptTurns;
}

/**
 * An AI SDK language-model middleware (`wrapLanguageModel({ model, middleware: mnemoMiddleware(...) })`):
 * before each call it stores the prompt's new turns (those after its last assistant message) and
 * replaces the prompt with the context mnemo builds for the conversation (system, memory, recent turns,
 * recalled snippets, the new turn); after it, it stores the reply (text and tool calls), streamed or
 * not. A retried call stores its turns once. Failures of mnemo are thrown as `MemoryError`s (the model is not called).
 */
export function mnemoMiddleware(options: MnemoMiddlewareOptions): LanguageModelV3Middleware {
  const backend = backendOf(options.memory);
  const states = new WeakMap<LanguageModelV3CallOptions, CallState>();

  const store = async (
    state: CallState,
    content: readonly LanguageModelV3Content[],
    signal: AbortSignal | undefined,
  ) => {
    const reply = replyOf(content);
    if (reply !== undefined) await backend.append(state.scope, [reply], signal === undefined ? {} : { signal });
  };

  return {
    specificationVersion: 'v3',
    async transformParams({ params }) {
      const scope = scopeOf(params, options.scope);
      const turns = readPrompt(params.prompt);
      const callOptions = params.abortSignal === undefined ? {} : { signal: params.abortSignal };
      if (
        turns.toStore.length > 0 &&
        !endsWith(await backend.tail(scope, turns.toStore.length, callOptions), turns.toStore)
      ) {
        await backend.append(scope, turns.toStore, callOptions);
      }
      const built = await backend.buildContext(
        scope,
        {
          ...(turns.query === undefined ? {} : { query: turns.query }),
          ...(turns.system === undefined ? {} : { system: turns.system }),
          ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
          ...(options.policy === undefined ? {} : { policy: options.policy }),
        },
        callOptions,
      );
      options.onContext?.(built.report, scope);
      const transformed: LanguageModelV3CallOptions = { ...params, prompt: toPrompt(built.messages, turns) };
      states.set(transformed, { scope, turns });
      return transformed;
    },
    async wrapGenerate({ doGenerate, params }) {
      const state = stateOf(states, params);
      const result = await doGenerate();
      await store(state, result.content, params.abortSignal);
      return result;
    },
    async wrapStream({ doStream, params }) {
      const state = stateOf(states, params);
      const { stream, ...rest } = await doStream();
      const texts: string[] = [];
      const content: LanguageModelV3Content[] = [];
      let failed = false;
      const recording = new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
        transform(part, controller) {
          if (part.type === 'text-delta') texts.push(part.delta);
          else if (part.type === 'tool-call') content.push(part);
          else if (part.type === 'error') failed = true;
          controller.enqueue(part);
        },
        // The reply is stored when the stream ends, before the app sees its end, so the next call finds it.
        async flush() {
          if (failed) return;
          await store(state, [{ type: 'text', text: texts.join('') }, ...content], params.abortSignal);
        },
      });
      return { ...rest, stream: stream.pipeThrough(recording) };
    },
  };
}

function backendOf(memory: MnemoMiddlewareOptions['memory']): MnemoBackend {
  if ('backend' in memory) return memory.backend;
  if ('server' in memory) return httpBackend(memory.server);
  return memoryBackend(memory);
}

function scopeOf(params: LanguageModelV3CallOptions, fallback: ScopeInput | undefined): ScopeInput {
  const named = params.providerOptions?.mnemo as Partial<Record<keyof ScopeInput, unknown>> | undefined;
  const pick = (field: keyof ScopeInput) => {
    const value = named?.[field] ?? fallback?.[field];
    if (value !== undefined && typeof value !== 'string')
      throw new MemoryError('invalid_input', `providerOptions.mnemo.${field} must be a string`, { details: { field } });
    return value;
  };
  const conversationId = pick('conversationId');
  if (conversationId === undefined) {
    throw new MemoryError(
      'invalid_input',
      'no conversation: pass mnemoMiddleware({ scope: { conversationId } }) or providerOptions: { mnemo: { conversationId } } on the call',
      {
        details: { field: 'conversationId' },
      },
    );
  }
  const userId = pick('userId');
  const tenantId = pick('tenantId');
  return {
    conversationId,
    ...(userId === undefined ? {} : { userId }),
    ...(tenantId === undefined ? {} : { tenantId }),
  };
}

function stateOf(
  states: WeakMap<LanguageModelV3CallOptions, CallState>,
  params: LanguageModelV3CallOptions,
): CallState {
  const state = states.get(params);
  if (state === undefined)
    throw new MemoryError(
      'invalid_input',
      'mnemoMiddleware: the call did not pass through its transformParams (use it as one middleware of wrapLanguageModel)',
    );
  return state;
}
