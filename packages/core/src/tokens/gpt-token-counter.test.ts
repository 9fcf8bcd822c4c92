import { describe, expect, it } from 'vitest';
import { createGptTokenCounter, encodingForModel } from './gpt-token-counter.js';

describe('encodingForModel', () => {
  it('uses cl100k_base for GPT-4 and GPT-3.5 era models and o200k_base otherwise', () => {
    expect(encodingForModel('gpt-4')).toBe('cl100k_base');
    expect(encodingForModel('gpt-4-0613')).toBe('cl100k_base');
    expect(encodingForModel('gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingForModel('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(encodingForModel('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingForModel('gpt-4.1')).toBe('o200k_base');
    expect(encodingForModel('o3-mini')).toBe('o200k_base');
    expect(encodingForModel('llama3.1:8b')).toBe('o200k_base');
    expect(encodingForModel(undefined)).toBe('o200k_base');
  });
});

describe('createGptTokenCounter', () => {
  const counter = createGptTokenCounter();

  it('counts text with the real tokenizer', () => {
    expect(counter.countText('')).toBe(0);
    expect(counter.countText('hello world')).toBe(2);
    expect(createGptTokenCounter({ model: 'gpt-4' }).encoding).toBe('cl100k_base');
  });

  it('counts a chat message as OpenAI does: 3 framing tokens, role, content and 1 more for a name', () => {
    // "user" and "hello world" are 1 and 2 tokens in o200k_base.
    expect(counter.countMessage({ role: 'user', content: 'hello world' })).toBe(3 + 1 + 2);
    expect(counter.countMessage({ role: 'user', content: 'hello world', name: 'bob' })).toBe(
      3 + 1 + 2 + 1 + counter.countText('bob'),
    );
    expect(counter.requestOverheadTokens).toBe(3);
  });

  it('counts tool calls and tool call ids', () => {
    const plain = counter.countMessage({ role: 'assistant', content: '' });
    const withCall = counter.countMessage({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
    });
    expect(withCall).toBeGreaterThan(plain + counter.countText('{"city":"Oslo"}'));
  });

  it('treats special-token text in user input as plain text instead of throwing', () => {
    expect(counter.countText('<|endoftext|> and <|im_start|>')).toBeGreaterThan(4);
  });

  it('truncates to a prefix within the token limit without breaking characters', () => {
    const text = 'Zürich 🚀 résumé '.repeat(50);
    for (const limit of [1, 5, 17, 40]) {
      const prefix = counter.truncateText(text, limit);
      expect(counter.countText(prefix)).toBeLessThanOrEqual(limit);
      expect(text.startsWith(prefix)).toBe(true);
    }
    expect(counter.truncateText('short', 100)).toBe('short');
    expect(counter.truncateText('short', 0)).toBe('');
  });
});
