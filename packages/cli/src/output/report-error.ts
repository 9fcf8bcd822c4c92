import { isMemoryError, type ErrorCode } from '@mnemo/core';
import { CommanderError } from 'commander';

/** Exit codes of the `mnemo` command. */
export const exitCodes = Object.freeze({
  ok: 0,
  /** Something failed at run time (storage, model, unexpected bug); retrying or fixing the system may help. */
  failure: 1,
  /** The invocation must change: bad flags, config, input file, credentials or a missing conversation. */
  usage: 2,
});

// A Record over every code: adding a code to core fails the build here until it has an exit code.
const exitCodeByErrorCode: Readonly<Record<ErrorCode, number>> = Object.freeze({
  invalid_input: exitCodes.usage,
  not_found: exitCodes.usage,
  budget_exceeded: exitCodes.usage,
  unauthorized: exitCodes.usage,
  forbidden: exitCodes.usage,
  conflict: exitCodes.failure,
  storage_failed: exitCodes.failure,
  model_failed: exitCodes.failure,
  unavailable: exitCodes.failure,
});

const fsProblems: Readonly<Record<string, string>> = Object.freeze({
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent is not a directory',
  ENAMETOOLONG: 'name too long',
});

const writeSyscalls = new Set(['write', 'mkdir', 'unlink', 'rename', 'rmdir', 'copyfile']);

/** The exit code of a MemoryError code. */
export function exitCodeFor(code: ErrorCode): number {
  return exitCodeByErrorCode[code];
}

/**
 * Prints an error the way the CLI reports every failure and returns the exit code: `mnemo: <message>` for
 * a MemoryError or a known file-system error, nothing more for a usage error commander already printed,
 * and the stack trace for anything else, because that is a bug.
 */
export function reportError(error: unknown, stderr: NodeJS.WritableStream): number {
  if (error instanceof CommanderError) {
    // Help and --version exit 0; commander has already printed its usage message otherwise.
    return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
  }
  if (isMemoryError(error)) {
    stderr.write(`mnemo: ${error.message}\n`);
    return exitCodeFor(error.code);
  }
  const fsError = describeFsError(error);
  if (fsError !== undefined) {
    stderr.write(`mnemo: ${fsError}\n`);
    return exitCodes.usage;
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  stderr.write(`mnemo: unexpected error (a bug in mnemo; please report it with this trace):\n${detail}\n`);
  return exitCodes.failure;
}

function describeFsError(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, path, syscall } = error as NodeJS.ErrnoException;
  const problem = code === undefined ? undefined : fsProblems[code];
  if (problem === undefined || path === undefined) return undefined;
  const verb = syscall !== undefined && writeSyscalls.has(syscall) ? 'write' : 'read';
  return `cannot ${verb} ${path}: ${problem}`;
}
