import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGptTokenCounter } from '@mnemo/core';
import { OpenAiSummarizer } from '@mnemo/models';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCliConfig, type CliConfig } from '../config/cli-config.js';
import { chooseSummarizer } from './choose-summarizer.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-summarizer-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function configFrom(env: Record<string, string>): Promise<CliConfig> {
  return loadCliConfig({ env, cwd: directory });
}

describe('chooseSummarizer', () => {
  it('summarizes with the configured model when the base URL and the model are both set', async () => {
    const choice = chooseSummarizer(
      await configFrom({
        MNEMO_LLM_BASE_URL: 'http://127.0.0.1:9/v1',
        MNEMO_LLM_MODEL: 'llama3.2',
        MNEMO_LLM_API_KEY: 'k',
      }),
    );

    const summarizer = choice.create?.(createGptTokenCounter());
    expect(summarizer).toBeInstanceOf(OpenAiSummarizer);
    expect(summarizer?.id).toBe('openai:llama3.2');
    expect(choice.description).toContain('openai:llama3.2 at http://127.0.0.1:9/v1');
  });

  it('stays offline when either setting is missing', async () => {
    const partial: Record<string, string>[] = [
      {},
      { MNEMO_LLM_BASE_URL: 'http://127.0.0.1:9/v1' },
      { MNEMO_LLM_MODEL: 'llama3.2' },
    ];
    for (const env of partial) {
      const choice = chooseSummarizer(await configFrom(env));
      expect(choice.create).toBeUndefined();
      expect(choice.description).toMatch(/^extractive@1 \(offline/);
    }
  });
});
