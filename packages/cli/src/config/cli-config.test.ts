import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMemoryError, MemoryError } from '@mnemo/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultUpstreamTimeouts } from '@mnemo/server/proxy';
import { cliDefaults, loadCliConfig } from './cli-config.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-config-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function writeConfig(values: unknown, name = 'mnemo.config.json'): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, typeof values === 'string' ? values : JSON.stringify(values));
  return path;
}

async function configError(promise: Promise<unknown>): Promise<MemoryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isMemoryError(error)) throw new Error(`expected a MemoryError, got ${String(error)}`);
  return error;
}

describe('loadCliConfig', () => {
  it('reads retention from the file, per tenant and user, with MNEMO_RETENTION_DAYS over its days, and refuses a bad one', async () => {
    await writeConfig({
      retention: { maxAgeDays: 90, tenants: { tenantA: { maxAgeDays: null, users: { 'node-7': 30 } } } },
    });
    expect((await loadCliConfig({ env: {}, cwd: directory })).retention).toEqual({
      maxAgeDays: 90,
      intervalMinutes: 60,
      tenants: { tenantA: { maxAgeDays: null, users: { 'node-7': 30 } } },
    });
    expect((await loadCliConfig({ env: { MNEMO_RETENTION_DAYS: '7' }, cwd: directory })).retention?.maxAgeDays).toBe(7);
    expect((await configError(loadCliConfig({ env: { MNEMO_RETENTION_DAYS: '-1' }, cwd: directory }))).message).toMatch(
      /MNEMO_RETENTION_DAYS/,
    );
    await writeConfig({ retention: { maxAgeDays: 0 } });
    expect((await configError(loadCliConfig({ env: {}, cwd: directory }))).message).toMatch(/retention\.maxAgeDays/);
  });

  it('applies the defaults when there is neither a file nor a variable', async () => {
    const config = await loadCliConfig({ env: {}, cwd: directory });

    expect(config).toEqual({
      db: join(directory, 'mnemo.db'),
      llm: { timeoutMs: cliDefaults.timeoutMs, passClientKey: false, ...defaultUpstreamTimeouts, responsesApi: 'auto' },
      anthropic: { passClientKey: false },
      // The library's own defaults: one budget for the library, serve, the proxy, MCP and replay.
      context: { maxTokens: 2000, windowTurns: 4, recall: 'when-asked' },
      embedder: { kind: 'static', refiner: 'use-lite', refinerIdleShare: 0.25, queryTimeoutMs: 30 },
    });
  });

  it('reads the Responses mode and the Anthropic upstream from the environment over the file', async () => {
    await writeFile(
      join(directory, 'mnemo.config.json'),
      JSON.stringify({
        llm: { responsesApi: 'forward' },
        anthropic: { baseUrl: 'http://127.0.0.1:9/file', passClientKey: true },
      }),
    );

    const config = await loadCliConfig({
      env: {
        MNEMO_LLM_RESPONSES_API: 'translate',
        MNEMO_ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
        MNEMO_ANTHROPIC_API_KEY: 'sk-ant-test',
      },
      cwd: directory,
    });

    expect(config.llm.responsesApi).toBe('translate');
    expect(config.anthropic).toEqual({
      baseUrl: 'https://api.anthropic.com',
      apiKey: 'sk-ant-test',
      passClientKey: true,
    });
    await expect(loadCliConfig({ env: { MNEMO_LLM_RESPONSES_API: 'sometimes' }, cwd: directory })).rejects.toThrow(
      /MNEMO_LLM_RESPONSES_API/,
    );
  });

  it('configures an OpenAI-compatible embedder from the environment, defaulting to the LLM endpoint', async () => {
    const config = await loadCliConfig({
      env: {
        MNEMO_EMBEDDER: 'openai',
        MNEMO_EMBEDDING_MODEL: 'nomic-embed-text',
        MNEMO_EMBEDDING_DIMENSIONS: '768',
        MNEMO_LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
        MNEMO_QUERY_EMBEDDING_TIMEOUT_MS: '50',
      },
      cwd: directory,
    });
    expect(config.embedder).toEqual({
      kind: 'openai',
      model: 'nomic-embed-text',
      dimensions: 768,
      baseUrl: 'http://127.0.0.1:11434/v1',
      queryTimeoutMs: 50,
      refiner: 'none',
      refinerIdleShare: 0.25,
    });
    await expect(loadCliConfig({ env: { MNEMO_EMBEDDER: 'bert' }, cwd: directory })).rejects.toThrow(/MNEMO_EMBEDDER/);
  });

  it('gives an embedding endpoint a query deadline it can make over the network, and the models on threads 30 ms', async () => {
    const endpoint = await loadCliConfig({ env: { MNEMO_EMBEDDER: 'openai' }, cwd: directory });
    expect(endpoint.embedder.queryTimeoutMs).toBe(1000);
    expect((await loadCliConfig({ env: { MNEMO_EMBEDDER: 'use-lite' }, cwd: directory })).embedder.queryTimeoutMs).toBe(
      30,
    );
    expect((await loadCliConfig({ env: {}, cwd: directory })).embedder.queryTimeoutMs).toBe(30);
  });

  it('refines beside the static embedder unless told not to, and only beside it', async () => {
    expect((await loadCliConfig({ env: { MNEMO_REFINER: 'none' }, cwd: directory })).embedder.refiner).toBe('none');
    expect((await loadCliConfig({ env: { MNEMO_EMBEDDER: 'hashed' }, cwd: directory })).embedder.refiner).toBe('none');
    await expect(
      loadCliConfig({ env: { MNEMO_EMBEDDER: 'use-lite', MNEMO_REFINER: 'use-lite' }, cwd: directory }),
    ).rejects.toMatchObject({ code: 'invalid_input', details: { field: 'embedder.refiner' } });
    await expect(loadCliConfig({ env: { MNEMO_REFINER: 'bert' }, cwd: directory })).rejects.toThrow(/MNEMO_REFINER/);
    expect(
      (await loadCliConfig({ env: { MNEMO_REFINER_IDLE_SHARE: '1' }, cwd: directory })).embedder.refinerIdleShare,
    ).toBe(1);
    await expect(loadCliConfig({ env: { MNEMO_REFINER_IDLE_SHARE: '2' }, cwd: directory })).rejects.toThrow(
      /MNEMO_REFINER_IDLE_SHARE/,
    );
  });

  it('reads mnemo.config.json from the working directory and resolves its db against the file', async () => {
    await mkdir(join(directory, 'sub'));
    const path = await writeConfig({
      db: 'data/bot.db',
      llm: { baseUrl: 'http://127.0.0.1:8080/v1', model: 'm1' },
      context: { policy: 'window', windowTurns: 2 },
    });

    const config = await loadCliConfig({ env: {}, cwd: join(directory, 'sub'), configPath: path });

    expect(config.db).toBe(join(directory, 'data/bot.db'));
    expect(config.llm).toMatchObject({ baseUrl: 'http://127.0.0.1:8080/v1', model: 'm1' });
    expect(config.context).toMatchObject({ policy: 'window', windowTurns: 2, maxTokens: 2000 });
    expect(config.configFile).toBe(path);
  });

  it('reads the proxy key pass-through and the allowed hosts from the file and the environment', async () => {
    await writeConfig({ llm: { passClientKey: true }, server: { allowedHosts: ['from-file.example'] } });
    const fromFile = await loadCliConfig({ env: {}, cwd: directory });
    expect(fromFile.llm.passClientKey).toBe(true);
    expect(fromFile.server?.allowedHosts).toEqual(['from-file.example']);
    const fromEnv = await loadCliConfig({
      env: { MNEMO_LLM_PASS_CLIENT_KEY: '0', MNEMO_ALLOWED_HOSTS: 'a.example, b.example' },
      cwd: directory,
    });
    expect(fromEnv.llm.passClientKey).toBe(false);
    expect(fromEnv.server?.allowedHosts).toEqual(['a.example', 'b.example']);
    await expect(loadCliConfig({ env: { MNEMO_LLM_PASS_CLIENT_KEY: 'yes' }, cwd: directory })).rejects.toThrow(
      /MNEMO_LLM_PASS_CLIENT_KEY/,
    );
  });

  it('reads the proxy upstream timeouts from the file and the environment, and refuses ones that are not whole milliseconds', async () => {
    await writeConfig({ llm: { connectTimeoutMs: 2_000, firstByteTimeoutMs: 30_000 } });
    const fromFile = await loadCliConfig({ env: {}, cwd: directory });
    expect(fromFile.llm).toMatchObject({
      connectTimeoutMs: 2_000,
      firstByteTimeoutMs: 30_000,
      idleTimeoutMs: defaultUpstreamTimeouts.idleTimeoutMs,
    });
    const fromEnv = await loadCliConfig({
      env: { MNEMO_LLM_FIRST_BYTE_TIMEOUT_MS: '5000', MNEMO_LLM_IDLE_TIMEOUT_MS: '1500' },
      cwd: directory,
    });
    expect(fromEnv.llm).toMatchObject({ connectTimeoutMs: 2_000, firstByteTimeoutMs: 5_000, idleTimeoutMs: 1_500 });
    await expect(loadCliConfig({ env: { MNEMO_LLM_IDLE_TIMEOUT_MS: '1.5s' }, cwd: directory })).rejects.toThrow(
      /MNEMO_LLM_IDLE_TIMEOUT_MS/,
    );
    await writeConfig({ llm: { connectTimeoutMs: 0 } });
    await expect(loadCliConfig({ env: {}, cwd: directory })).rejects.toThrow(/connectTimeoutMs/);
  });

  it('lets environment variables override the file', async () => {
    await writeConfig({
      db: 'file.db',
      llm: { model: 'from-file', apiKey: 'file-key' },
      context: { maxTokens: 500, policy: 'window' },
    });

    const config = await loadCliConfig({
      env: {
        MNEMO_DB: ':memory:',
        MNEMO_LLM_MODEL: 'from-env',
        MNEMO_MAX_TOKENS: '700',
        MNEMO_POLICY: 'full',
        MNEMO_LLM_API_KEY: '',
      },
      cwd: directory,
    });

    expect(config.db).toBe(':memory:');
    expect(config.llm.model).toBe('from-env');
    expect(config.llm.apiKey).toBe('file-key');
    expect(config.context.maxTokens).toBe(700);
    expect(config.context.policy).toBe('full');
  });

  it('takes a PostgreSQL store from MNEMO_DATABASE_URL over MNEMO_DB, and a postgres:// db from the file as it is', async () => {
    await writeConfig({ db: 'postgres://mnemo@db.internal/mnemo?schema=from_file' });
    expect((await loadCliConfig({ env: {}, cwd: directory })).db).toBe(
      'postgres://mnemo@db.internal/mnemo?schema=from_file',
    );
    const url = 'postgresql://mnemo:secret@127.0.0.1:5432/mnemo?schema=bot';
    expect((await loadCliConfig({ env: { MNEMO_DATABASE_URL: url, MNEMO_DB: 'other.db' }, cwd: directory })).db).toBe(
      url,
    );
    expect((await loadCliConfig({ env: { MNEMO_DB: 'other.db' }, cwd: directory })).db).toBe(
      join(directory, 'other.db'),
    );
    const error = await configError(loadCliConfig({ env: { MNEMO_DATABASE_URL: 'mysql://x' }, cwd: directory }));
    expect(error.message).toContain('MNEMO_DATABASE_URL');
  });

  it('accepts the hashed embedder with its dimensions', async () => {
    const config = await loadCliConfig({
      env: { MNEMO_EMBEDDER: 'hashed', MNEMO_EMBEDDING_DIMENSIONS: '64' },
      cwd: directory,
    });
    expect(config.embedder).toMatchObject({ kind: 'hashed', dimensions: 64 });
  });

  it('accepts meshai as a policy in the environment and in the file', async () => {
    await writeConfig({ context: { policy: 'meshai' } });

    expect((await loadCliConfig({ env: {}, cwd: directory })).context.policy).toBe('meshai');
    expect((await loadCliConfig({ env: { MNEMO_POLICY: 'meshai' }, cwd: directory })).context.policy).toBe('meshai');
  });

  it('reads when recall runs from the environment over the file, and names a wrong value', async () => {
    await writeConfig({ context: { recall: 'every-turn' } });

    expect((await loadCliConfig({ env: {}, cwd: directory })).context.recall).toBe('every-turn');
    expect((await loadCliConfig({ env: { MNEMO_RECALL: 'when-asked' }, cwd: directory })).context.recall).toBe(
      'when-asked',
    );
    const error = await configError(loadCliConfig({ env: { MNEMO_RECALL: 'sometimes' }, cwd: directory }));
    expect(error.message).toContain('MNEMO_RECALL');
  });

  it('names the file and the field when a value in the file is invalid', async () => {
    const path = await writeConfig({ context: { maxTokens: 'many' } });

    const error = await configError(loadCliConfig({ env: {}, cwd: directory }));

    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain(path);
    expect(error.message).toContain('context.maxTokens');
  });

  it('rejects an unknown key so a typo is not silently ignored', async () => {
    await writeConfig({ context: { maxToken: 10 } });

    const error = await configError(loadCliConfig({ env: {}, cwd: directory }));

    expect(error.message).toMatch(/context: .*"maxToken"/);
  });

  it('names the file when it is not JSON', async () => {
    const path = await writeConfig('{ "db": ');

    const error = await configError(loadCliConfig({ env: {}, cwd: directory }));

    expect(error.message).toContain(`config file ${path} is not valid JSON`);
  });

  it('names the variable when an environment value is invalid', async () => {
    const error = await configError(loadCliConfig({ env: { MNEMO_POLICY: 'everything' }, cwd: directory }));

    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain('MNEMO_POLICY');
  });

  it('rejects a base URL that is not http(s)', async () => {
    const error = await configError(loadCliConfig({ env: { MNEMO_LLM_BASE_URL: 'localhost:11434' }, cwd: directory }));

    expect(error.message).toContain('MNEMO_LLM_BASE_URL: must be an http(s) URL');
  });

  it('fails with the fs error when an explicit --config file is missing', async () => {
    await expect(loadCliConfig({ env: {}, cwd: directory, configPath: 'nope.json' })).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
