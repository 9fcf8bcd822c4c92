#!/usr/bin/env node
import { runCli } from './run-cli.js';

// A reader that goes away (`mnemo --help | head`, `mnemo stats | less` quit early) is the normal end
// of a command's output, not a crash: stop quietly, as other command-line tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

// The only place that touches the process: streams, environment, working directory, exit code.
process.exitCode = await runCli(process.argv, {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
