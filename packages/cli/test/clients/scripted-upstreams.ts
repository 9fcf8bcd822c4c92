import {
  startScriptedAnthropicServer,
  startScriptedOpenAiServer,
  type ScriptedAnthropicServer,
  type ScriptedContentReply,
  type ScriptedOpenAiServer,
} from '@mnemo/models/testing';
import { makeWorkDirectory, startMnemo, type StartedMnemo } from '../run-mnemo.js';

/** The usage every scripted OpenAI-protocol reply reports, so a client's parsed usage can be checked against it. */
export const scriptedUsage = Object.freeze({ promptTokens: 50, completionTokens: 7, cachedTokens: 16 });

/** The answer the model gives once it has the tool's result. */
export const finalAnswer = 'Sunny and 7 degrees in Oslo.';

/**
 * The model's part of every conversation, decided by the request itself (clients run in any order): a
 * `get_weather` call (arguments with a space, as models write them) unless the newest input is the
 * tool's result, then {@link finalAnswer}.
 */
function nextReply(lastIsToolResult: boolean, counter: { calls: number }): ScriptedContentReply {
  if (lastIsToolResult) return { content: finalAnswer, usage: scriptedUsage };
  counter.calls += 1;
  return {
    content: '',
    toolCalls: [{ id: `call_${counter.calls}`, name: 'get_weather', arguments: '{"city": "Oslo"}' }],
    usage: scriptedUsage,
  };
}

/** The scripted upstreams and the real `mnemo serve` in front of them. */
export interface ClientRig {
  readonly openai: ScriptedOpenAiServer;
  readonly anthropic: ScriptedAnthropicServer;
  readonly serve: StartedMnemo;
  /** mnemo's base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Starts a scripted OpenAI-protocol upstream (chat completions and Responses), a scripted Messages
 * upstream, and `mnemo serve` (a separate process, on a fresh SQLite file, a 700-token budget so a
 * long history is sent compacted) in front of both; `env` adds settings (e.g. `MNEMO_LLM_RESPONSES_API`).
 */
export async function startClientRig(env: Readonly<Record<string, string>> = {}): Promise<ClientRig> {
  const counter = { calls: 0 };
  const openai = await startScriptedOpenAiServer({
    replies: [],
    replyTo: (body) => {
      const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : undefined;
      const input = Array.isArray(body.input) ? (body.input as { type?: string }[]) : undefined;
      return nextReply(messages?.at(-1)?.role === 'tool' || input?.at(-1)?.type === 'function_call_output', counter);
    },
  });
  const anthropic = await startScriptedAnthropicServer({
    replies: [],
    apiKey: 'sk-ant-upstream',
    replyTo: (body) => {
      const last = (body.messages as { content?: unknown }[] | undefined)?.at(-1)?.content;
      return nextReply(
        Array.isArray(last) && (last.at(-1) as { type?: string } | undefined)?.type === 'tool_result',
        counter,
      );
    },
  });
  const work = await makeWorkDirectory();
  const serve = await startMnemo(
    ['serve', '--port', '0', '--db', `${work.path}/clients.db`, '--workers', '0', '--http-processes', '1'],
    {
      cwd: work.path,
      env: {
        MNEMO_EMBEDDER: 'hashed',
        MNEMO_LLM_BASE_URL: openai.baseUrl,
        MNEMO_ANTHROPIC_BASE_URL: anthropic.baseUrl,
        MNEMO_ANTHROPIC_API_KEY: 'sk-ant-upstream',
        MNEMO_MAX_TOKENS: '700',
        ...env,
      },
      ready: /^mnemo listening on (http:\/\/\S+)/,
    },
  );
  return {
    openai,
    anthropic,
    serve,
    url: serve.ready[1]!,
    close: async () => {
      serve.child.kill('SIGTERM');
      await serve.exited;
      await openai.close();
      await anthropic.close();
      await work.remove();
    },
  };
}

/** A stored message as the resource API lists it. */
export interface StoredMessage {
  readonly role: string;
  readonly content: string;
  readonly toolCalls?: readonly { id: string; function: { name: string; arguments: string } }[];
  readonly toolCallId?: string;
  readonly metadata?: { proxy?: { usage?: Record<string, number>; ids?: string[] } };
}

/** Seeds a user's one conversation with `pairs` old question/answer pairs that carry `secret`, so the context must be compacted. */
export async function seedHistory(url: string, user: string, secret: string, pairs = 40): Promise<void> {
  const messages = Array.from({ length: pairs }, (_, index) => [
    {
      role: 'user',
      content: `Old question ${index} from ${user}: my locker code is ${secret}; how many hops does node ${index} need to reach the ridge gateway today?`,
    },
    {
      role: 'assistant',
      content: `Answer ${index} for ${user}: node ${index} needs ${(index % 5) + 2} hops; keep the ridge relay powered and check its battery tonight.`,
    },
  ]).flat();
  const response = await fetch(`${url}/v1/conversations/${encodeURIComponent(user)}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-mnemo-user': user },
    body: JSON.stringify({ messages }),
  });
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`seeding ${user} answered ${response.status}: ${await response.text()}`);
}

/** Every message stored in the user's one conversation, oldest first. */
export async function storedMessages(url: string, user: string): Promise<StoredMessage[]> {
  const items: StoredMessage[] = [];
  let after = 0;
  for (;;) {
    const response = await fetch(
      `${url}/v1/conversations/${encodeURIComponent(user)}/messages?user_id=${encodeURIComponent(user)}&after_seq=${after}&limit=500`,
    );
    const page = (await response.json()) as { items: (StoredMessage & { seq: number })[]; nextAfterSeq?: number };
    items.push(...page.items);
    if (page.nextAfterSeq === undefined) return items;
    after = page.nextAfterSeq;
  }
}

/** The bodies the upstreams received that carry `marker` (each user's turns name the user). */
export function upstreamBodiesWith(rig: ClientRig, marker: string): string[] {
  return [...rig.openai.requests, ...rig.anthropic.requests]
    .map((request) => JSON.stringify(request.body ?? ''))
    .filter((text) => text.includes(marker));
}
