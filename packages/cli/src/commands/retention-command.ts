import { MemoryError, type RetentionOutcome } from '@mnemo/core';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig } from '../config/cli-config.js';
import { formatCount, formatTable } from '../output/format-table.js';
import { retentionRulesOf, retentionTenants } from '../retention/retention-rules.js';
import { describeDatabase } from '../store/open-cli-store.js';
import { openMemory } from '../store/open-memory.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';

interface RetentionFlags {
  readonly db?: string;
  readonly tenant?: string;
  readonly user?: string[];
  readonly maxAgeDays?: number;
  readonly dryRun?: boolean;
  readonly json?: boolean;
  readonly config?: string;
}

/**
 * Adds `mnemo retention`: one sweep of the retention the settings give (`retention` in the config file,
 * `MNEMO_RETENTION_DAYS`), or of `--max-age-days`, now: for a cron job, or to see (`--dry-run`) what the
 * workers' next sweep will erase.
 */
export function registerRetentionCommand(program: Command, io: CliIo): void {
  program
    .command('retention')
    .description(
      'erase messages older than the retention policy allows, with everything made of them (summaries, vectors, facts, files); --dry-run reports who',
    )
    .option('--db <path|url>', dbOptionDescription)
    .option(
      '--max-age-days <days>',
      'the policy of this run, for every user (default: the configured retention)',
      parseDays,
    )
    .option('--tenant <id>', 'only this tenant (default: every tenant the settings know)')
    .option('--user <id>', 'only this user (repeatable)', (value: string, previous: string[] = []) => [
      ...previous,
      value,
    ])
    .option('--dry-run', 'report the users with messages past the policy and the cutoff; erase nothing')
    .option('--json', 'print JSON instead of a table')
    .action(async (_flags: RetentionFlags, command: Command) => {
      await runRetention(command.optsWithGlobals<RetentionFlags>(), io);
    });
}

async function runRetention(flags: RetentionFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const retention =
    flags.maxAgeDays === undefined
      ? config.retention
      : { maxAgeDays: flags.maxAgeDays, intervalMinutes: 60, tenants: {} };
  if (retention?.maxAgeDays === undefined && Object.keys(retention?.tenants ?? {}).length === 0) {
    throw new MemoryError(
      'invalid_input',
      'no retention policy: pass --max-age-days, or set MNEMO_RETENTION_DAYS or retention in the config file',
      {
        details: { field: 'maxAgeDays' },
      },
    );
  }
  const db = databaseOf(flags, config, io);
  const memory = await openMemory(
    flags.dryRun === true ? { db, readonly: true } : { db, mustExist: true, compaction: 'manual' },
  );
  try {
    const rows: { tenantId: string; outcome: RetentionOutcome }[] = [];
    for (const tenantId of flags.tenant === undefined ? retentionTenants({ ...config, retention }) : [flags.tenant]) {
      const outcomes = await memory.applyRetention(retentionRulesOf(retention!, tenantId), {
        dryRun: flags.dryRun === true,
        ...(flags.user === undefined ? {} : { userIds: flags.user }),
      });
      rows.push(...outcomes.map((outcome) => ({ tenantId, outcome })));
    }
    if (flags.json === true) {
      io.stdout.write(
        `${JSON.stringify({ dryRun: flags.dryRun === true, users: rows.map(({ tenantId, outcome }) => ({ tenantId, ...outcome })) })}\n`,
      );
      return;
    }
    if (rows.length === 0) {
      io.stdout.write(`no user of ${describeDatabase(db)} has messages past the policy: nothing to erase\n`);
      return;
    }
    const table = rows.map(({ tenantId, outcome }) => [
      tenantId,
      outcome.userId,
      outcome.before,
      outcome.receipt === undefined ? 'would be erased' : formatCount(outcome.receipt.messages),
      outcome.receipt === undefined ? '' : formatCount(outcome.receipt.summaries),
      outcome.receipt === undefined ? '' : formatCount(outcome.receipt.facts),
    ]);
    io.stdout.write(
      formatTable(
        [
          { header: 'tenant' },
          { header: 'user' },
          { header: 'before' },
          { header: 'messages', align: 'right' },
          { header: 'summaries', align: 'right' },
          { header: 'facts', align: 'right' },
        ],
        table,
      ),
    );
  } finally {
    await memory.close();
  }
}

function parseDays(value: string): number {
  const days = Number(value);
  if (!Number.isFinite(days) || days <= 0)
    throw new MemoryError(
      'invalid_input',
      `--max-age-days must be a positive number of days (got ${JSON.stringify(value)})`,
      {
        details: { field: 'maxAgeDays' },
      },
    );
  return days;
}
