import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentsDriver,
  aiSdkDriver,
  anthropicDriver,
  langChainDriver,
  openAiChatDriver,
  openAiResponsesDriver,
  type ClientDriver,
  type DriverOptions,
  type TurnResult,
} from './client-drivers.js';
import {
  finalAnswer,
  scriptedUsage,
  seedHistory,
  startClientRig,
  storedMessages,
  upstreamBodiesWith,
  type ClientRig,
} from './scripted-upstreams.js';

type Route = 'chat' | 'responses' | 'messages';

interface Client {
  readonly name: string;
  readonly slug: string;
  readonly route: Route;
  readonly driver: (options: DriverOptions) => ClientDriver;
}

const responsesClients: readonly Client[] = [
  { name: "the AI SDK's openai('model')", slug: 'ai-sdk', route: 'responses', driver: aiSdkDriver },
  { name: 'the Agents SDK', slug: 'agents', route: 'responses', driver: agentsDriver },
  { name: "the openai SDK's responses", slug: 'openai-responses', route: 'responses', driver: openAiResponsesDriver },
];
const otherClients: readonly Client[] = [
  { name: "the openai SDK's chat completions", slug: 'openai-chat', route: 'chat', driver: openAiChatDriver },
  { name: "LangChain's ChatOpenAI", slug: 'langchain', route: 'chat', driver: langChainDriver },
  { name: '@anthropic-ai/sdk', slug: 'anthropic', route: 'messages', driver: anthropicDriver },
];

const seededPairs = 40;
const questions = (user: string) => [
  `Hi, I am ${user}. What is the weather in Oslo?`,
  `Thanks, ${user}. And in Oslo tomorrow?`,
];

/**
 * Runs the conversation of the done-when line for one client: two end users, each with a long seeded
 * history carrying their own secret, ask two questions that each call the tool once, user A not
 * streamed and user B streamed. Returns what the client parsed per turn.
 */
async function converse(rig: ClientRig, client: Client, tag: string): Promise<Map<string, TurnResult[]>> {
  const results = new Map<string, TurnResult[]>();
  for (const [user, stream] of [
    [`${client.slug}-${tag}-a`, false],
    [`${client.slug}-${tag}-b`, true],
  ] as const) {
    await seedHistory(rig.url, user, `${user}-SECRET-4417`, seededPairs);
    const driver = client.driver({ url: rig.url, user, stream });
    const turns: TurnResult[] = [];
    for (const question of questions(user)) turns.push(await driver.ask(question));
    results.set(user, turns);
  }
  return results;
}

async function expectConversation(
  rig: ClientRig,
  client: Client,
  tag: string,
  results: Map<string, TurnResult[]>,
): Promise<void> {
  const users = [...results.keys()];
  for (const [user, turns] of results) {
    for (const turn of turns) {
      expect(turn.text).toBe(finalAnswer);
      if (client.route === 'messages') {
        expect(turn.usage.inputTokens).toBeGreaterThan(0);
        // The system prompt's breakpoint was written by the turn's first call, so its second reads it.
        expect(turn.usage.cachedInputTokens).toBeGreaterThan(0);
      } else {
        expect(turn.usage).toMatchObject({
          inputTokens: scriptedUsage.promptTokens,
          outputTokens: scriptedUsage.completionTokens,
          cachedInputTokens: scriptedUsage.cachedTokens,
        });
      }
    }
    // Every turn stored once, though the client re-sent its whole history on every call.
    const stored = await storedMessages(rig.url, user);
    expect(stored).toHaveLength(seededPairs * 2 + 8);
    expect(
      stored.slice(-8).map((message) => (message.toolCalls === undefined ? message.role : `${message.role}+call`)),
    ).toEqual(['user', 'assistant+call', 'tool', 'assistant', 'user', 'assistant+call', 'tool', 'assistant']);
    expect(stored.at(-3)?.toolCallId).toBe(stored.at(-4)?.toolCalls?.[0]?.id);
    const usage = stored.at(-1)?.metadata?.proxy?.usage;
    if (client.route === 'messages')
      expect(usage).toMatchObject({
        cachedInputTokens: expect.any(Number) as unknown,
        cacheWriteInputTokens: expect.any(Number) as unknown,
      });
    else if (client.route === 'responses')
      expect(usage).toEqual({ inputTokens: 50, outputTokens: 7, cachedInputTokens: 16, cacheWriteInputTokens: 0 });

    // Keyless serve without MNEMO_LLM_PASS_CLIENT_KEY: the client's key never goes upstream.
    for (const request of rig.openai.requests) expect(request.headers.authorization).toBeUndefined();
    const bodies = upstreamBodiesWith(rig, user);
    expect(bodies.length).toBe(4);
    for (const body of bodies) {
      // A compact context: a few of the 40 seeded questions, not the whole history the client sent.
      expect(body.split('Old question').length - 1).toBeLessThan(seededPairs / 2);
      // The other end user's secret never reaches this user's model call.
      for (const other of users.filter((name) => name !== user)) expect(body).not.toContain(`${other}-SECRET`);
    }
  }
  void tag;
}

describe('client SDKs through the real mnemo serve (Responses translated to chat completions, the default for a local upstream)', () => {
  let rig: ClientRig;
  beforeAll(async () => {
    rig = await startClientRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  for (const client of [...responsesClients, ...otherClients]) {
    it(
      `runs a multi-turn tool conversation of ${client.name}, streamed and not, for two isolated end users`,
      { timeout: 90_000 },
      async () => {
        const results = await converse(rig, client, 't');
        await expectConversation(rig, client, 't', results);
        const paths = new Set(
          [...rig.openai.requests, ...rig.anthropic.requests]
            .filter((request) => JSON.stringify(request.body).includes(`${client.slug}-t-`))
            .map((request) => request.path),
        );
        expect([...paths]).toEqual([
          { chat: '/v1/chat/completions', responses: '/v1/chat/completions', messages: '/v1/messages' }[client.route],
        ]);
      },
    );
  }

  it('sends a Messages upstream cache_control breakpoints on the system prompt and at the end of the stable part, and its key as x-api-key', async () => {
    const requests = rig.anthropic.requests.filter((request) => JSON.stringify(request.body).includes('anthropic-t-a'));
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      const body = request.body as {
        system: { text: string; cache_control?: unknown }[];
        messages: { content: { cache_control?: unknown }[] }[];
      };
      expect(body.system[0]).toMatchObject({
        text: 'Answer questions about the weather.',
        cache_control: { type: 'ephemeral' },
      });
      // One at the stable part's end, none when compaction is behind and the raw turns slide (report.stable says so).
      const marked = body.messages
        .flatMap((message) => message.content)
        .filter((block) => block.cache_control !== undefined);
      expect(marked.length).toBeLessThanOrEqual(1);
      expect(request.headers['x-api-key']).toBe('sk-ant-upstream');
      expect(request.headers.authorization).toBeUndefined();
    }
  });
});

describe('Responses clients through mnemo serve forwarding to a Responses upstream (MNEMO_LLM_RESPONSES_API=forward)', () => {
  let rig: ClientRig;
  beforeAll(async () => {
    rig = await startClientRig({ MNEMO_LLM_RESPONSES_API: 'forward' });
  });
  afterAll(async () => {
    await rig?.close();
  });

  for (const client of responsesClients) {
    it(
      `runs the conversation of ${client.name} against POST /v1/responses upstream, with mnemo's context as the input`,
      { timeout: 90_000 },
      async () => {
        const results = await converse(rig, client, 'f');
        await expectConversation(rig, client, 'f', results);
        const requests = rig.openai.requests.filter((request) =>
          JSON.stringify(request.body).includes(`${client.slug}-f-`),
        );
        expect(new Set(requests.map((request) => request.path))).toEqual(new Set(['/v1/responses']));
        for (const request of requests) {
          const body = request.body as Record<string, unknown>;
          expect(body.previous_response_id).toBeUndefined();
          expect(body.instructions).toBeUndefined();
          expect(Array.isArray(body.input)).toBe(true);
        }
      },
    );
  }
});
