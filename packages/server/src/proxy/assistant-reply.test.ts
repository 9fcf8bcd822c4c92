import { describe, expect, it } from 'vitest';
import { ChatStreamAssembler, replyFromCompletion, toAssistantMessage } from './assistant-reply.js';

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

describe('ChatStreamAssembler', () => {
  it('reassembles content and tool calls from events split at any byte', () => {
    const stream =
      chunk({ role: 'assistant', content: '' }) +
      chunk({ content: 'Rain ' }) +
      chunk({ content: 'after 14:00.' }) +
      chunk({
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"place":' } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"ridge"}' } }] }) +
      chunk({}, 'tool_calls') +
      ': keep-alive comment\r\n\r\n' +
      'data: [DONE]\n\n';
    const assembler = new ChatStreamAssembler();

    for (let offset = 0; offset < stream.length; offset += 7) assembler.push(stream.slice(offset, offset + 7));

    expect(assembler.finish()).toEqual({
      content: 'Rain after 14:00.',
      toolCalls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"place":"ridge"}' } },
      ],
      finishReason: 'tool_calls',
      model: 'm',
      complete: true,
    });
  });

  it('reports a stream that ended without finish reason or [DONE] as incomplete, skipping a half event', () => {
    const assembler = new ChatStreamAssembler();

    assembler.push(chunk({ content: 'one ' }) + 'data: {"choices":[{"index":0,"delta":{"content":"tw');

    expect(assembler.finish()).toMatchObject({ content: 'one ', complete: false });
  });
});

describe('replyFromCompletion and toAssistantMessage', () => {
  it('reads the first choice, with tool calls, and records model and finish reason in metadata', () => {
    const reply = replyFromCompletion({
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });

    expect(toAssistantMessage(reply!)).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      metadata: { proxy: { model: 'gpt-4o-mini', finishReason: 'tool_calls' } },
    });
  });

  it('stores a refusal as the text, and nothing for an empty reply or a body without choices', () => {
    const refusal = replyFromCompletion({
      choices: [
        { message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' },
      ],
    });

    expect(toAssistantMessage(refusal!)?.content).toBe('I cannot help with that.');
    expect(toAssistantMessage(replyFromCompletion({ choices: [{ message: { content: '  ' } }] })!)).toBeUndefined();
    expect(replyFromCompletion({ error: { message: 'x' } })).toBeUndefined();
    expect(replyFromCompletion('not json')).toBeUndefined();
  });
});
