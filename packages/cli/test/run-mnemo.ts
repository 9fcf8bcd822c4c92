import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemory } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';

/** The built CLI the end-to-end tests run, as `npx mnemo` does. */
export const cliPath = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** What a run of the CLI printed and how it exited. */
export interface MnemoRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** How to run the CLI: always in `cwd`, with only `PATH`, `HOME` and the given variables in the environment. */
export interface RunMnemoOptions {
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Written to stdin, which is then closed; stdin is closed at once without it. */
  readonly input?: string;
  readonly timeoutMs?: number;
}

/** Runs `node dist/main.js ...args` as a child process and collects its output. */
export async function runMnemo(args: readonly string[], options: RunMnemoOptions): Promise<MnemoRun> {
  if (!existsSync(cliPath)) throw new Error(`${cliPath} is missing: run \`npm run build\` before the end-to-end tests`);
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd: options.cwd,
    // A clean environment: the developer's MNEMO_* settings must not leak into the tests.
    env: { PATH: process.env.PATH ?? '', HOME: options.cwd, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode) => resolve(exitCode));
  }).finally(() => clearTimeout(timer));
  return { code, stdout, stderr };
}

/** A `mnemo` process that {@link startMnemo} saw become ready. */
export interface StartedMnemo {
  readonly child: ChildProcessWithoutNullStreams;
  /** The match of the first stdout line that matched the ready pattern. */
  readonly ready: RegExpExecArray;
  /** Exit code once the process closed (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  readonly stdout: () => string;
  readonly stderr: () => string;
}

/**
 * Starts `node dist/main.js ...args` in `cwd` with only `PATH`, `HOME` and `env` in its environment and
 * resolves once a line of its stdout matches `ready`; rejects when it exits before that.
 */
export function startMnemo(
  args: readonly string[],
  options: { cwd: string; env?: Readonly<Record<string, string>>; ready: RegExp },
): Promise<StartedMnemo> {
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: options.cwd, ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return new Promise<StartedMnemo>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      for (const line of stdout.split('\n')) {
        const ready = options.ready.exec(line);
        if (ready !== null) return resolve({ child, ready, exited, stdout: () => stdout, stderr: () => stderr });
      }
    });
    void exited.then((code) =>
      reject(new Error(`mnemo ${args.join(' ')} exited with ${code} before it was ready: ${stderr}`)),
    );
  });
}

/** True while a process with this id exists (signal 0 checks without signalling). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A fresh temporary directory and a function that removes it. */
export async function makeWorkDirectory(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'mnemo-e2e-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Every message stored in a SQLite file, per conversation id; an absent file holds none. */
export async function readStoredMessages(db: string): Promise<Map<string, { role: string; content: string }[]>> {
  const result = new Map<string, { role: string; content: string }[]>();
  if (!existsSync(db)) return result;
  const memory = createMemory({ store: createSqliteStore({ path: db }) });
  try {
    const page = await memory.listConversations({}, { limit: 1000 });
    for (const conversation of page.items) {
      const messages = await memory.listMessages(conversation);
      result.set(
        conversation.conversationId,
        messages.map(({ role, content }) => ({ role, content })),
      );
    }
  } finally {
    await memory.close();
  }
  return result;
}

/** A JSONL transcript of `turns` user/assistant pairs about a mesh-radio node. */
export function meshTranscript(turns: number): string {
  const lines: string[] = [];
  for (let turn = 0; turn < turns; turn += 1) {
    lines.push(
      JSON.stringify({
        role: 'user',
        content: `Turn ${turn}: node 7 reports ${turn + 3} hops to the gateway and SNR ${turn - 5} dB. Is the route healthy?`,
      }),
    );
    lines.push(
      JSON.stringify({
        role: 'assistant',
        content: `Turn ${turn}: ${turn + 3} hops at SNR ${turn - 5} dB is workable; keep the ridge relay powered.`,
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}
