/** A stream that may be a terminal. */
export interface CliStream {
  readonly isTTY?: boolean;
}

/**
 * What a command reads and writes: the process's streams, environment and working directory, passed
 * in so that only `main.ts` touches `process` and commands stay testable.
 */
export interface CliIo {
  readonly stdin: NodeJS.ReadableStream & CliStream;
  readonly stdout: NodeJS.WritableStream & CliStream;
  readonly stderr: NodeJS.WritableStream & CliStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Absolute directory relative paths are resolved against. */
  readonly cwd: string;
}
