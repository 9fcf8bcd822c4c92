import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedAnthropicServer, type ScriptedAnthropicServer } from './scripted-anthropic-server.js';

let server: ScriptedAnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function post(target: ScriptedAnthropicServer, body: unknown, key = 'sk-ant'): Promise<Response> {
  return fetch(`${target.baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
}

const system = [
  {
    type: 'text',
    text: 'You are a mesh-radio bot; reply in 150 characters or less.',
    cache_control: { type: 'ephemeral' },
  },
];

describe('startScriptedAnthropicServer', () => {
  it('writes the prefix at a breakpoint and reads it back on a later request with the same prefix', async () => {
    server = await startScriptedAnthropicServer({
      replies: [{ content: 'One.' }, { content: 'Two.' }],
      apiKey: 'sk-ant',
    });

    const first = (await (
      await post(server, { model: 'c', max_tokens: 9, system, messages: [{ role: 'user', content: 'First?' }] })
    ).json()) as { usage: Record<string, number> };
    const second = (await (
      await post(server, { model: 'c', max_tokens: 9, system, messages: [{ role: 'user', content: 'Other?' }] })
    ).json()) as { usage: Record<string, number> };

    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens).toBeGreaterThan(0);
  });

  it('streams text and a tool use as Anthropic events, and refuses a wrong key without using a reply', async () => {
    server = await startScriptedAnthropicServer({
      replies: [{ content: 'Checking.', toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: '{"node":7}' }] }],
      apiKey: 'sk-ant',
    });

    expect((await post(server, { messages: [] }, 'wrong')).status).toBe(401);
    const text = await (
      await post(server, { model: 'c', max_tokens: 9, stream: true, messages: [{ role: 'user', content: 'Node 7?' }] })
    ).text();

    const types = text
      .split('\n')
      .filter((line) => line.startsWith('event: '))
      .map((line) => line.slice(7));
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(text).toContain('"stop_reason":"tool_use"');
    expect(server.remainingReplies).toBe(0);
  });
});
