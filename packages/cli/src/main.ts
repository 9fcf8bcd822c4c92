#!/usr/bin/env node
import { runCli } from './run-cli.js';

// The only place that touches the process: streams, environment, working directory, exit code.
process.exitCode = await runCli(process.argv, {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
