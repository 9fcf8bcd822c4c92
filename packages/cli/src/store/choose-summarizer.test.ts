import { createGptTokenCounter } from '@mnemo/core';
import { OpenAiSummarizer } from '@mnemo/models';
import { describe, expect, it } from 'vitest';
import type { CliConfig } from '../config/cli-config.js';
import { chooseSummarizer } from './choose-summarizer.js';

function config(llm: Partial<CliConfig['llm']>): CliConfig {
  return { db: ':memory:', llm: { timeoutMs: 60_000, ...llm }, context: { maxTokens: 1000, windowTurns: 4 } };
}

describe('chooseSummarizer', () => {
  it('summarizes with the configured model when the base URL and the model are both set', () => {
    const choice = chooseSummarizer(config({ baseUrl: 'http://127.0.0.1:9/v1', model: 'llama3.2', apiKey: 'k' }));

    const summarizer = choice.create?.(createGptTokenCounter());
    expect(summarizer).toBeInstanceOf(OpenAiSummarizer);
    expect(summarizer?.id).toBe('openai:llama3.2');
    expect(choice.description).toContain('openai:llama3.2 at http://127.0.0.1:9/v1');
  });

  it('stays offline when either setting is missing', () => {
    for (const llm of [{}, { baseUrl: 'http://127.0.0.1:9/v1' }, { model: 'llama3.2' }]) {
      const choice = chooseSummarizer(config(llm));
      expect(choice.create).toBeUndefined();
      expect(choice.description).toMatch(/^extractive@1 \(offline/);
    }
  });
});
