import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The built CLI, as `npx mnemo mcp` runs it.
const cliPath = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

let directory: string;
const clients: Client[] = [];

beforeEach(async () => {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run \`npm run build\` first`);
  directory = await mkdtemp(join(tmpdir(), 'mnemo-mcp-stdio-'));
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await rm(directory, { recursive: true, force: true });
});

/** Spawns `mnemo mcp --db <tmp> ...flags` and connects the SDK's stdio client to it. */
async function spawnMcp(flags: string[] = []): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, 'mcp', '--db', join(directory, 'mnemo.db'), ...flags],
    cwd: directory,
    // A clean environment: the developer's MNEMO_* settings must not leak into the test.
    env: { PATH: process.env.PATH ?? '', HOME: directory },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'mnemo-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, stderr: () => stderr };
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const first = result.content[0];
  return { ...result, text: first?.type === 'text' ? first.text : '' };
}

describe('mnemo mcp (stdio)', () => {
  it('lists the tools, remembers a message that get_context returns, and runs the memory tool', async () => {
    const { client, stderr } = await spawnMcp(['--user', 'maren']);

    const { tools } = await client.listTools();
    await call(client, 'remember', {
      conversation_id: 'node-7',
      role: 'user',
      content: 'Relay LARCH-RIDGE battery at 45%.',
    });
    const context = await call(client, 'get_context', { conversation_id: 'node-7', max_tokens: 300 });
    const created = await call(client, 'memory', {
      command: 'create',
      path: '/memories/maren.md',
      file_text: 'Battery: 45%\n',
    });
    const edited = await call(client, 'memory', {
      command: 'str_replace',
      path: '/memories/maren.md',
      old_str: '45%',
      new_str: '80%',
    });
    const renamed = await call(client, 'memory', {
      command: 'rename',
      old_path: '/memories/maren.md',
      new_path: '/memories/relay.md',
    });
    const viewed = await call(client, 'memory', { command: 'view', path: '/memories/relay.md' });
    const traversal = await call(client, 'memory', { command: 'view', path: '/memories/../secrets' });
    const deleted = await call(client, 'memory', { command: 'delete', path: '/memories/relay.md' });

    expect(tools.map((tool) => tool.name)).toEqual([
      'remember',
      'get_context',
      'recall',
      'list_facts',
      'forget',
      'correct',
      'memory',
    ]);
    expect(
      (context.structuredContent as { messages: { content: string }[] }).messages.map((message) => message.content),
    ).toEqual(['Relay LARCH-RIDGE battery at 45%.']);
    expect(created.text).toBe('Created /memories/maren.md (13 bytes).');
    expect(edited.isError).toBeFalsy();
    expect(renamed.text).toBe('Renamed /memories/maren.md to /memories/relay.md.');
    expect(viewed.text).toContain('     1\tBattery: 80%');
    expect(traversal).toMatchObject({ isError: true });
    expect(traversal.text).toMatch(/^invalid_input: memory path/);
    expect(deleted.text).toBe('Deleted /memories/relay.md.');
    expect(stderr()).toBe('');
  });

  it('keeps tenants apart on one database: --tenant b cannot see what tenant a wrote', async () => {
    const a = await spawnMcp(['--tenant', 'a']);
    await call(a.client, 'memory', { command: 'create', path: '/memories/secret.md', file_text: 'tenant a only' });
    await call(a.client, 'remember', { conversation_id: 'node-7', role: 'user', content: 'secret of tenant a' });
    const b = await spawnMcp(['--tenant', 'b']);

    expect((await call(b.client, 'memory', { command: 'view', path: '/memories' })).text).toBe('/memories is empty.');
    expect((await call(b.client, 'memory', { command: 'view', path: '/memories/secret.md' })).text).toMatch(
      /^not_found:/,
    );
    const context = await call(b.client, 'get_context', { conversation_id: 'node-7' });
    expect((context.structuredContent as { messages: unknown[] }).messages).toEqual([]);
    expect((await call(a.client, 'memory', { command: 'view', path: '/memories/secret.md' })).text).toContain(
      'tenant a only',
    );
  });

  it('exits with code 0, closing the store, when the client closes stdin', async () => {
    const child = spawn(process.execPath, [cliPath, 'mcp', '--db', join(directory, 'mnemo.db')], {
      cwd: directory,
      env: { PATH: process.env.PATH ?? '', HOME: directory },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

    child.stdin.end(`${JSON.stringify(ping)}\n`);

    // Without an exit on end of input, this waits until the test times out.
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout.trim())).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });
});
