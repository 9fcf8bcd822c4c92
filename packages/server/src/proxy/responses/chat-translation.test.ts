import { describe, expect, it } from 'vitest';
import { responseFromCompletion, toChatCompletionRequest } from './chat-translation.js';
import { responsesBodySchema } from './responses-request.js';

describe('toChatCompletionRequest', () => {
  it('translates function tools, tool choice, output limit, JSON schema format and reasoning effort, and drops what chat has not', () => {
    const body = responsesBodySchema.parse({
      model: 'llama3.2',
      input: 'hi',
      stream: true,
      tools: [
        {
          type: 'function',
          name: 'lookup',
          description: 'Look a node up',
          parameters: { type: 'object' },
          strict: true,
        },
      ],
      tool_choice: { type: 'function', name: 'lookup' },
      max_output_tokens: 120,
      text: { format: { type: 'json_schema', name: 'node', schema: { type: 'object' }, strict: true } },
      reasoning: { effort: 'low' },
      temperature: 0.2,
      store: false,
      include: ['reasoning.encrypted_content'],
      metadata: { app: 'mesh' },
    });

    expect(toChatCompletionRequest(body, [{ role: 'user', content: 'hi' }], body.model)).toEqual({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.2,
      tools: [
        {
          type: 'function',
          function: { name: 'lookup', description: 'Look a node up', parameters: { type: 'object' }, strict: true },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      max_tokens: 120,
      response_format: { type: 'json_schema', json_schema: { name: 'node', schema: { type: 'object' }, strict: true } },
      reasoning_effort: 'low',
      stream: true,
      stream_options: { include_usage: true },
    });
  });
});

describe('responseFromCompletion', () => {
  it('answers a cut-off completion as an incomplete response with its usage, and no completion as undefined', () => {
    const body = responsesBodySchema.parse({ input: 'hi', user: 'ada' });
    const completion = {
      model: 'llama3.2',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Part of' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 8 } },
    };

    expect(responseFromCompletion(completion, body)).toMatchObject({
      object: 'response',
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      model: 'llama3.2',
      user: 'ada',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Part of' }] }],
      usage: { input_tokens: 12, output_tokens: 3, input_tokens_details: { cached_tokens: 8 }, total_tokens: 15 },
    });
    expect(responseFromCompletion({ choices: [] }, body)).toBeUndefined();
  });
});
