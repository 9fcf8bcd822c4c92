import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig } from '../config/cli-config.js';
import { formatExpandedSummary } from '../output/format-summaries.js';
import { openMemory } from '../store/open-memory.js';
import { addStoreOptions, conversationScopeOf, databaseOf, userOf, type StoreFlags } from './add-store-options.js';

/** Adds `mnemo expand <summary-id>`: a summary with the summaries it folded and the messages it stands for. */
export function registerExpandCommand(program: Command, io: CliIo): void {
  const command = program
    .command('expand')
    .description(
      'show a summary, the summaries it folded and its source messages (only summaries of the user: --user, or the --conversation that is its own user)',
    )
    .argument('<summary-id>', 'summary id, as `mnemo summaries` lists them');
  addStoreOptions(command)
    .option(
      '--conversation <id>',
      'the conversation the summary is of, when it is its own user (as mnemo serve names it)',
    )
    .action(async (summaryId: string, _flags: ExpandFlags, command: Command) => {
      await runExpand(summaryId, command.optsWithGlobals<ExpandFlags>(), io);
    });
}

interface ExpandFlags extends StoreFlags {
  readonly conversation?: string;
}

async function runExpand(summaryId: string, flags: ExpandFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const db = databaseOf(flags, config, io);
  const memory = await openMemory({ db, readonly: true });
  try {
    // `not_found` (exit 2) for an unknown id and for a summary of another user or tenant alike.
    const user = flags.conversation === undefined ? userOf(flags) : conversationScopeOf(flags, flags.conversation);
    const expanded = await memory.expand(user, summaryId);
    io.stdout.write(flags.json === true ? `${JSON.stringify(expanded)}\n` : formatExpandedSummary(expanded));
  } finally {
    await memory.close();
  }
}
