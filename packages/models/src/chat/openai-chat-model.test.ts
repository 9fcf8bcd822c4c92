import { isMemoryError, MemoryError, type OpenAiChatMessage } from '@mnemo/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startScriptedOpenAiServer,
  type ScriptedOpenAiServer,
  type ScriptedOpenAiServerOptions,
} from '../testing/scripted-openai-server.js';
import { createOpenAiChatModel, type OpenAiChatModelOptions } from './openai-chat-model.js';

const messages: OpenAiChatMessage[] = [
  { role: 'system', content: 'Reply in 150 characters or fewer.' },
  { role: 'user', content: 'Is node !a3f9c2d1 online?' },
];

let server: ScriptedOpenAiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(serverOptions: ScriptedOpenAiServerOptions, modelOptions: Partial<OpenAiChatModelOptions> = {}) {
  server = await startScriptedOpenAiServer(serverOptions);
  const model = createOpenAiChatModel({
    baseUrl: server.baseUrl,
    model: 'test-model',
    timeoutMs: 2_000,
    ...modelOptions,
  });
  return { server, model };
}

async function failure(promise: Promise<unknown>): Promise<MemoryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isMemoryError(error)) throw new Error(`expected a MemoryError, got ${String(error)}`);
  return error;
}

describe('createOpenAiChatModel', () => {
  it('returns the reply and the provider usage when the endpoint answers', async () => {
    const { server, model } = await setUp({
      replies: [{ content: 'Yes, seen 2 min ago.', usage: { promptTokens: 31, completionTokens: 7 } }],
    });

    const completion = await model.complete(messages);

    expect(completion).toEqual({
      content: 'Yes, seen 2 min ago.',
      usage: { promptTokens: 31, completionTokens: 7 },
      finishReason: 'stop',
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.path).toBe('/v1/chat/completions');
    expect(server.requests[0]!.body).toMatchObject({ model: 'test-model', messages });
  });

  it('sends response_format for a JSON object or a strict JSON schema only when the call sets one', async () => {
    const { server, model } = await setUp({ replies: [{ content: '{}' }, { content: '{}' }, { content: '{}' }] });
    const schema = {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
      additionalProperties: false,
    };

    await model.complete(messages, { responseFormat: { type: 'json_schema', name: 'answer', schema } });
    await model.complete(messages, { responseFormat: { type: 'json_object' } });
    await model.complete(messages);

    expect(server.requests[0]!.body).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    expect(server.requests[1]!.body).toMatchObject({ response_format: { type: 'json_object' } });
    expect(server.requests[2]!.body).not.toHaveProperty('response_format');
  });

  it('sends max_tokens and temperature only when the call sets them', async () => {
    const { server, model } = await setUp({ replies: [{ content: 'a' }, { content: 'b' }] });

    await model.complete(messages, { maxTokens: 120, temperature: 0 });
    await model.complete(messages);

    expect(server.requests[0]!.body).toMatchObject({ max_tokens: 120, temperature: 0 });
    expect(server.requests[1]!.body).not.toHaveProperty('max_tokens');
    expect(server.requests[1]!.body).not.toHaveProperty('temperature');
  });

  it('sends the api key as a bearer token when one is configured', async () => {
    const { server, model } = await setUp({ apiKey: 'sk-test', replies: [{ content: 'ok' }] }, { apiKey: 'sk-test' });

    await model.complete(messages);

    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-test');
  });

  it('retries and succeeds when the first attempt gets a 500', async () => {
    const { server, model } = await setUp({ replies: [{ status: 500 }, { content: 'second time lucky' }] });

    const completion = await model.complete(messages);

    expect(completion.content).toBe('second time lucky');
    expect(server.requests).toHaveLength(2);
    expect(server.remainingReplies).toBe(0);
  });

  it('throws model_failed with the status when every attempt gets a 500', async () => {
    const { server, model } = await setUp({
      replies: [{ status: 500 }, { status: 502 }, { status: 503, body: { error: { message: 'overloaded' } } }],
    });

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('model_failed');
    expect(error.details).toMatchObject({ status: 503 });
    expect(error.message).toContain('overloaded');
    expect(error.message).toContain('3 attempts');
    expect(error.cause).toBeDefined();
    expect(server.requests).toHaveLength(3);
  });

  it('throws unauthorized without retrying when the key is rejected', async () => {
    const { server, model } = await setUp(
      { apiKey: 'sk-right', replies: [{ content: 'never sent' }] },
      { apiKey: 'sk-wrong' },
    );

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('unauthorized');
    expect(error.details).toMatchObject({ status: 401 });
    expect(server.requests).toHaveLength(1);
    expect(server.remainingReplies).toBe(1);
  });

  it('throws unauthorized when the endpoint answers 403', async () => {
    const { model } = await setUp({ replies: [{ status: 403 }] });

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('unauthorized');
    expect(error.details).toMatchObject({ status: 403 });
  });

  it('throws model_failed naming the limit when the endpoint is slower than timeoutMs', async () => {
    const { server, model } = await setUp(
      { replies: [{ delayMs: 5_000 }, { delayMs: 5_000 }] },
      { timeoutMs: 150, maxRetries: 1 },
    );
    const started = Date.now();

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('model_failed');
    expect(error.message).toContain('150 ms');
    expect(error.details).toMatchObject({ timeoutMs: 150, attempts: 2 });
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('returns a reply that arrives within the limit even when it is slow', async () => {
    const { model } = await setUp({ replies: [{ delayMs: 50 }] }, { timeoutMs: 2_000 });

    expect((await model.complete(messages)).content).toBe('delayed');
  });

  it('throws model_failed when the body is not JSON', async () => {
    const { model } = await setUp({ replies: [{ raw: 'not json' }] });

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('model_failed');
    expect(error.message).toContain('not JSON');
  });

  it('throws model_failed when the completion has no choice', async () => {
    const { model } = await setUp({
      replies: [{ status: 200, body: { id: 'x', object: 'chat.completion', choices: [] } }],
    });

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('model_failed');
    expect(error.message).toContain('no choice');
  });

  it('throws model_failed when the reply is empty', async () => {
    const { model } = await setUp({ replies: [{ content: '', finishReason: 'length' }] });

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('model_failed');
    expect(error.message).toContain('"length"');
    expect(error.details).toMatchObject({ reply: 'empty' });
  });

  it('throws model_failed marked not_text when the content is not a string', async () => {
    const body = {
      id: 'x',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: { text: 'hi' } }, finish_reason: 'stop' }],
    };
    const { model } = await setUp({ replies: [{ status: 200, body }] });

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('model_failed');
    expect(error.message).toContain('not text');
    expect(error.details).toMatchObject({ reply: 'not_text' });
  });

  it('throws model_failed when nothing listens at the base URL', async () => {
    const closed = await startScriptedOpenAiServer({ replies: [] });
    await closed.close();
    const model = createOpenAiChatModel({ baseUrl: closed.baseUrl, model: 'test-model', maxRetries: 0 });

    const error = await failure(model.complete(messages));

    expect(error.code).toBe('model_failed');
    expect(error.message).toContain('cannot reach');
  });

  it('throws model_failed marked aborted when the caller aborts', async () => {
    const { model } = await setUp({ replies: [{ delayMs: 5_000 }] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);

    const error = await failure(model.complete(messages, { signal: controller.signal }));

    expect(error.code).toBe('model_failed');
    expect(error.details).toMatchObject({ aborted: true });
  });

  it('throws invalid_input when the base URL or the model is unusable', () => {
    expect(() => createOpenAiChatModel({ baseUrl: 'localhost:11434', model: 'm' })).toThrow(
      /baseUrl must be an http\(s\) URL/,
    );
    expect(() => createOpenAiChatModel({ baseUrl: 'http://localhost:11434/v1', model: ' ' })).toThrow(
      /model must be a non-empty string/,
    );
    expect(() => createOpenAiChatModel({ baseUrl: 'http://localhost:11434/v1', model: 'm', timeoutMs: 0 })).toThrow(
      /timeoutMs/,
    );
  });
});
