import { Command } from 'commander';
import type { CliIo } from './cli-io.js';
import { registerBenchCommand } from './commands/bench-command.js';
import { registerChatCommand } from './commands/chat-command.js';
import { registerCompactCommand } from './commands/compact-command.js';
import { registerCopyCommand } from './commands/copy-command.js';
import { registerExpandCommand } from './commands/expand-command.js';
import { registerFactsCommand } from './commands/facts-command.js';
import { registerMcpCommand } from './commands/mcp-command.js';
import { registerMigrateCommand } from './commands/migrate-command.js';
import { registerReembedCommand } from './commands/reembed-command.js';
import { registerReplayCommand } from './commands/replay-command.js';
import { registerRetentionCommand } from './commands/retention-command.js';
import { registerServeCommand } from './commands/serve-command.js';
import { registerStatsCommand } from './commands/stats-command.js';
import { registerSummariesCommand } from './commands/summaries-command.js';
import { registerUsersCommand } from './commands/users-command.js';
import { registerWorkerCommand } from './commands/worker-command.js';
import { cliEnvironmentVariables, defaultConfigFileName } from './config/cli-config.js';
import { reportError } from './output/report-error.js';
import { readCliVersion } from './read-cli-version.js';

/** Builds the `mnemo` program with every command; output goes through `io`, and commander never exits the process. */
export function createProgram(io: CliIo): Command {
  const program = new Command('mnemo')
    .description(
      'mnemo: conversation memory for LLM apps. Keeps every message, sends the model a small context under a token budget.',
    )
    .version(readCliVersion(), '-V, --version', 'print the version')
    .option('--config <path>', `config file (default: ./${defaultConfigFileName} when present)`)
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .exitOverride()
    .showSuggestionAfterError();
  registerReplayCommand(program, io);
  registerChatCommand(program, io);
  registerStatsCommand(program, io);
  registerCompactCommand(program, io);
  registerSummariesCommand(program, io);
  registerExpandCommand(program, io);
  registerFactsCommand(program, io);
  registerMcpCommand(program, io);
  registerServeCommand(program, io);
  registerWorkerCommand(program, io);
  registerBenchCommand(program, io);
  registerReembedCommand(program, io);
  registerMigrateCommand(program, io);
  registerCopyCommand(program, io);
  registerUsersCommand(program, io);
  registerRetentionCommand(program, io);
  const variables = Object.entries(cliEnvironmentVariables).map(([name, meaning]) => `  ${name.padEnd(20)} ${meaning}`);
  program.addHelpText(
    'after',
    `\nEnvironment (flags override it; it overrides ${defaultConfigFileName}):\n${variables.join('\n')}\n\n` +
      'Exit codes: 0 ok, 1 run-time failure (storage, model), 2 bad usage, config or input.\n',
  );
  return program;
}

/** Runs the CLI on `argv` (as in `process.argv`) and returns the exit code; every error is reported here. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await createProgram(io).parseAsync([...argv]);
    return 0;
  } catch (error) {
    return reportError(error, io.stderr);
  }
}
