import { MemoryError, type Fact, type Memory, type UserScope } from '@mnemo/core';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig } from '../config/cli-config.js';
import { formatTable } from '../output/format-table.js';
import { openMemory } from '../store/open-memory.js';
import { databaseOf, dbOptionDescription, userOf } from './add-store-options.js';

interface FactsFlags {
  readonly db?: string;
  readonly user?: string;
  readonly tenant?: string;
  readonly json?: boolean;
  readonly config?: string;
  readonly history?: boolean;
  readonly asOf?: string;
  readonly attribute?: string;
  readonly subject?: string;
  readonly text?: string;
  readonly expiresAt?: string;
}

/**
 * Adds `mnemo facts`: list a user's facts, and edit them by hand: put one, correct one (the corrected value
 * supersedes it, history kept), set or clear when one expires, retire one. Every write goes through the
 * engine, as the REST API's and MCP's do, and prints the fact it left current.
 */
export function registerFactsCommand(program: Command, io: CliIo): void {
  const facts = program
    .command('facts')
    .description("list and edit a user's facts: put, correct, expire, retire (history is kept)");
  const common = (command: Command) =>
    command
      .option('--db <path|url>', dbOptionDescription)
      .option('--user <id>', 'user the facts belong to (default: default)')
      .option('--tenant <id>', 'tenant of the user (default: default)')
      .option('--json', 'print JSON instead of a table');

  common(
    facts
      .command('list')
      .description(
        'current facts (an expired one is left out), those valid at --as-of, or every version with --history',
      ),
  )
    .option('--history', 'every version: superseded, retired and expired ones too')
    .option('--as-of <time>', 'the facts valid at this ISO 8601 time')
    .option('--attribute <name>', 'only this attribute')
    .option('--subject <name>', 'only facts about this subject (user, or a name)')
    .action(async (_flags: FactsFlags, command: Command) => {
      await withFacts(command.optsWithGlobals<FactsFlags>(), io, true, async (memory, user, flags) => {
        const query = {
          ...(flags.attribute === undefined ? {} : { attribute: flags.attribute }),
          ...(flags.subject === undefined ? {} : { subject: flags.subject }),
          ...(flags.asOf === undefined ? {} : { asOf: toIso('--as-of', flags.asOf) }),
        };
        return flags.history === true ? memory.facts.history(user, query) : memory.facts.list(user, query);
      });
    });

  common(
    facts
      .command('put')
      .description('state a fact by hand; a new value of a single-valued attribute supersedes the current one'),
  )
    .argument('<attribute>', 'e.g. main_relay, home_town, likes')
    .argument('<value>', 'the value, as the user would say it')
    .option('--subject <name>', 'who or what the fact is about (default: user)')
    .option('--text <statement>', 'the statement in the user\'s words (default: "<attribute>: <value>")')
    .option('--expires-at <time>', 'ISO 8601: from then on the fact leaves every context (it stays in the history)')
    .action(async (attribute: string, value: string, _flags: FactsFlags, command: Command) => {
      await withFacts(command.optsWithGlobals<FactsFlags>(), io, false, async (memory, user, flags) => [
        await memory.facts.put(user, {
          attribute,
          value,
          ...(flags.subject === undefined ? {} : { subject: flags.subject }),
          ...(flags.text === undefined ? {} : { text: flags.text }),
          ...(flags.expiresAt === undefined ? {} : { expiresAt: flags.expiresAt }),
        }),
      ]);
    });

  common(
    facts
      .command('correct')
      .description('correct a current fact: the corrected value supersedes it, the old one stays in the history'),
  )
    .argument('<id>', 'the fact id (mnemo facts list shows it)')
    .argument('<value>', 'the corrected value')
    .option('--text <statement>', 'the corrected statement (default: "<attribute>: <value>")')
    .action(async (id: string, value: string, _flags: FactsFlags, command: Command) => {
      await withFacts(command.optsWithGlobals<FactsFlags>(), io, false, async (memory, user, flags) => [
        await memory.facts.correct(user, id, { value, ...(flags.text === undefined ? {} : { text: flags.text }) }),
      ]);
    });

  common(
    facts
      .command('expire')
      .description(
        'set when a current fact expires (it then leaves every context, and stays in the history), or "never"',
      ),
  )
    .argument('<id>', 'the fact id')
    .argument('<time>', 'ISO 8601 time, "now", or "never"')
    .action(async (id: string, time: string, _flags: FactsFlags, command: Command) => {
      await withFacts(command.optsWithGlobals<FactsFlags>(), io, false, async (memory, user) => [
        await memory.facts.expire(user, id, time === 'never' ? null : time === 'now' ? new Date().toISOString() : time),
      ]);
    });

  common(
    facts
      .command('consolidate')
      .description('merge duplicate facts into the more specific one and settle contradictions by time (history kept)'),
  )
    .option('--dry-run', 'report what would change, write nothing')
    .action(async (_flags: FactsFlags & { dryRun?: boolean }, command: Command) => {
      const flags = command.optsWithGlobals<FactsFlags & { dryRun?: boolean }>();
      await withFacts(flags, io, flags.dryRun === true, async (memory, user) => {
        const result = await memory.facts.consolidate(user, { dryRun: flags.dryRun === true });
        if (flags.json !== true) {
          const verb = flags.dryRun === true ? 'would end' : 'ended';
          io.stdout.write(
            `${result.merged.length} duplicates merged and ${result.settled.length} contradictions settled (${verb} these, history kept):\n`,
          );
        }
        return [...result.merged.map((item) => item.duplicate), ...result.settled.map((item) => item.older)];
      });
    });

  common(
    facts.command('retire').description('end a current fact now: it leaves every context and stays in the history'),
  )
    .argument('<id>', 'the fact id')
    .action(async (id: string, _flags: FactsFlags, command: Command) => {
      await withFacts(command.optsWithGlobals<FactsFlags>(), io, false, async (memory, user) => [
        await memory.facts.retire(user, id),
      ]);
    });
}

/** Opens the store (read-only to list, so looking never creates or changes one), runs `body` and prints the facts it returns. */
async function withFacts(
  flags: FactsFlags,
  io: CliIo,
  readonly: boolean,
  body: (memory: Memory, user: Partial<UserScope>, flags: FactsFlags) => Promise<Fact[]>,
): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const db = databaseOf(flags, config, io);
  const memory = await openMemory(readonly ? { db, readonly: true } : { db, mustExist: true, compaction: 'manual' });
  try {
    const facts = await body(memory, userOf(flags), flags);
    io.stdout.write(flags.json === true ? `${JSON.stringify({ facts })}\n` : formatFacts(facts));
  } finally {
    await memory.close();
  }
}

function formatFacts(facts: readonly Fact[]): string {
  if (facts.length === 0) return 'no facts\n';
  const now = new Date().toISOString();
  const rows = facts.map((fact) => [
    fact.id,
    fact.subject,
    fact.attribute,
    fact.value,
    fact.validFrom,
    stateOf(fact, now),
  ]);
  return formatTable(
    [
      { header: 'id' },
      { header: 'subject' },
      { header: 'attribute' },
      { header: 'value' },
      { header: 'since' },
      { header: 'state' },
    ],
    rows,
  );
}

function toIso(flag: string, value: string): string {
  const time = Date.parse(value);
  if (!Number.isFinite(time))
    throw new MemoryError('invalid_input', `${flag} must be an ISO 8601 time (got ${JSON.stringify(value)})`, {
      details: { field: flag },
    });
  return new Date(time).toISOString();
}

/** `current`, `expires <time>`, `expired <time>`, `superseded <time>` or `retired <time>`. */
function stateOf(fact: Fact, now: string): string {
  if (fact.validTo !== undefined)
    return `${fact.supersededBy === undefined ? 'retired' : 'superseded'} ${fact.validTo}`;
  if (fact.expiresAt === undefined) return 'current';
  return `${fact.expiresAt <= now ? 'expired' : 'expires'} ${fact.expiresAt}`;
}
