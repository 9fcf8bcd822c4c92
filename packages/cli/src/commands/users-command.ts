import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig } from '../config/cli-config.js';
import { formatCount, formatTable } from '../output/format-table.js';
import { describeDatabase } from '../store/open-cli-store.js';
import { openMemory } from '../store/open-memory.js';
import { legacyDefaultUserId, splitDefaultUser } from '../users/split-default-user.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';

interface SplitFlags {
  readonly db?: string;
  readonly tenant?: string;
  readonly dryRun?: boolean;
  readonly json?: boolean;
  readonly config?: string;
}

/** Adds `mnemo users split-default`: moves conversations stored under user `default` by earlier versions to their own users. */
export function registerUsersCommand(program: Command, io: CliIo): void {
  const users = program.command('users').description('manage the end users of a store');
  users
    .command('split-default')
    .description(
      `move every conversation of user "${legacyDefaultUserId}" (where versions before 0.2 put conversations named without a user) ` +
        'to its own user, as the seed API and the proxy now name them; derived memory is rebuilt in the background',
    )
    .option('--db <path|url>', dbOptionDescription)
    .option('--tenant <id>', 'tenant whose conversations to move (default: default)')
    .option('--dry-run', 'report what would be moved, write nothing')
    .option('--json', 'print JSON instead of a table')
    .action(async (_flags: SplitFlags, command: Command) => {
      await runSplitDefault(command.optsWithGlobals<SplitFlags>(), io);
    });
}

async function runSplitDefault(flags: SplitFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const db = databaseOf(flags, config, io);
  // The appends enqueue extraction, compaction and embedding jobs; a running `mnemo serve` (or the next one) does them.
  const memory = await openMemory({ db, mustExist: true, compaction: 'manual' });
  try {
    const outcomes = await splitDefaultUser(memory, {
      tenantId: flags.tenant ?? 'default',
      ...(flags.dryRun === true ? { dryRun: true } : {}),
    });
    if (flags.json === true) {
      io.stdout.write(`${JSON.stringify({ dryRun: flags.dryRun === true, conversations: outcomes })}\n`);
      return;
    }
    if (outcomes.length === 0) {
      io.stdout.write(`no conversation of user "${legacyDefaultUserId}" in ${describeDatabase(db)}: nothing to move\n`);
      return;
    }
    const rows = outcomes.map((outcome) => [
      outcome.conversationId,
      flags.dryRun === true ? `would be ${outcome.outcome}` : outcome.outcome,
      formatCount(outcome.messages),
    ]);
    io.stdout.write(
      formatTable([{ header: 'conversation' }, { header: 'outcome' }, { header: 'messages', align: 'right' }], rows),
    );
    const skipped = outcomes.filter((outcome) => outcome.outcome === 'skipped').length;
    if (skipped > 0)
      io.stdout.write(
        `${skipped} skipped: their own user already holds a different conversation of that id; they stay under "${legacyDefaultUserId}"\n`,
      );
  } finally {
    await memory.close();
  }
}
