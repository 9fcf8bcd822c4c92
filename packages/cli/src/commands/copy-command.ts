import cliProgress from 'cli-progress';
import { MemoryError } from '@mnemo/core';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig, resolveDatabase } from '../config/cli-config.js';
import { copyStore, type CopyProgress, type CopyReport } from '../copy/copy-store.js';
import { formatCount, formatTable } from '../output/format-table.js';
import { chooseEmbedder } from '../store/choose-embedder.js';

interface CopyFlags {
  readonly from?: string;
  readonly to?: string;
  readonly force?: boolean;
  readonly embed: boolean;
  readonly json?: boolean;
  readonly config?: string;
}

/** Adds `mnemo copy --from <db> --to <db>`: moves a whole store between SQLite and PostgreSQL (or between two of a kind). */
export function registerCopyCommand(program: Command, io: CliIo): void {
  program
    .command('copy')
    .description(
      'copy a whole store, every tenant, from one database to another (SQLite file ↔ postgres:// URL); vectors are re-embedded on the target',
    )
    .requiredOption('--from <path|url>', 'the store to copy (only read)')
    .requiredOption(
      '--to <path|url>',
      'the store to fill: created and migrated when missing; refused when it holds data, unless --force',
    )
    .option('--force', "replace the target's contents: its rows are deleted in the copy's transaction")
    .option('--no-embed', 'do not embed the copied messages on the target (run mnemo reembed later)')
    .option('--json', 'print one JSON object: from, to, replaced, tables (source and target counts), embedded')
    .action(async (_flags: CopyFlags, command: Command) => {
      await runCopy(command.optsWithGlobals<CopyFlags>(), io);
    });
}

async function runCopy(flags: CopyFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  if (flags.from === undefined || flags.to === undefined)
    throw new MemoryError('invalid_input', 'copy needs --from and --to', { details: { field: 'from' } });
  const embedder = flags.embed ? chooseEmbedder(config) : undefined;
  const progress = createCopyProgress(io, flags.json !== true);
  let report: CopyReport;
  try {
    report = await copyStore({
      from: resolveDatabase(io.cwd, flags.from),
      to: resolveDatabase(io.cwd, flags.to),
      ...(flags.force === true ? { force: true } : {}),
      ...(embedder === undefined ? {} : { embedder }),
      onProgress: progress.update,
    });
  } finally {
    progress.stop();
  }
  if (flags.json === true) {
    io.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  const rows = report.tables.map((row) => [row.table, formatCount(row.source), formatCount(row.target)]);
  io.stdout.write(
    `copied ${report.from} → ${report.to}${report.replaced ? ' (its previous contents replaced)' : ''}; counts verified:\n\n`,
  );
  io.stdout.write(
    formatTable(
      [{ header: 'table' }, { header: 'source', align: 'right' }, { header: 'target', align: 'right' }],
      rows,
    ),
  );
  io.stdout.write(
    report.embedded === undefined
      ? '\nvectors not copied: run mnemo reembed --db <target> (per tenant) to embed the messages for vector recall\n'
      : `\nembedded ${formatCount(report.embedded.messages)} messages with ${report.embedded.model} (vectors are re-embedded, not copied)\n`,
  );
}

// One line on stderr, only on a terminal (pipes and logs never get control characters): a running count
// of the rows copied (the source is streamed, so its size is known only at the end), then a bar for the
// embedding phase, whose size is known.
function createCopyProgress(
  io: CliIo,
  enabled: boolean,
): { update: (progress: CopyProgress) => void; stop: () => void } {
  if (!enabled || io.stderr.isTTY !== true) return { update: () => undefined, stop: () => undefined };
  const formats = { copy: 'copy  {value} rows {table}', embed: 'embed [{bar}] {value}/{total} {table}' };
  let bar: cliProgress.SingleBar | undefined;
  let phase: CopyProgress['phase'] | undefined;
  return {
    update: (progress) => {
      if (progress.phase !== phase) {
        bar?.stop();
        phase = progress.phase;
        bar = new cliProgress.SingleBar(
          { stream: io.stderr, format: formats[progress.phase], hideCursor: true, clearOnComplete: true },
          cliProgress.Presets.shades_classic,
        );
        bar.start(progress.total ?? 0, progress.done, { table: progress.table });
        return;
      }
      bar?.update(progress.done, { table: progress.table });
    },
    stop: () => bar?.stop(),
  };
}
