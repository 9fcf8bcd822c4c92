import { MemoryError, ownerOf, type ConversationStats, type Memory, type UserScope } from '@mnemo/core';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { resolveDatabase, type CliConfig } from '../config/cli-config.js';
import { describeDatabase } from '../store/open-cli-store.js';

/** Flags of the commands that look into one user's conversations in a store. */
export interface StoreFlags {
  readonly db?: string;
  readonly user?: string;
  readonly tenant?: string;
  readonly json?: boolean;
  readonly config?: string;
}

/** Help text of every `--db` option. */
export const dbOptionDescription =
  'SQLite file or postgres:// URL (default: MNEMO_DATABASE_URL, MNEMO_DB or ./mnemo.db)';

/** Adds `--db`, `--user`, `--tenant` and `--json` to a command that reads or compacts a stored conversation. */
export function addStoreOptions(command: Command): Command {
  return command
    .option('--db <path|url>', dbOptionDescription)
    .option(
      '--user <id>',
      'user the data belongs to (default: a conversation named without one is its own user, as mnemo serve names it)',
    )
    .option('--tenant <id>', 'tenant the user belongs to (default: default)')
    .option('--json', 'print JSON instead of a table');
}

/** The store a command opens: `--db` (a PostgreSQL URL, or a SQLite path against the working directory), else the configured one. */
export function databaseOf(flags: { readonly db?: string }, config: CliConfig, io: CliIo): string {
  return flags.db === undefined ? config.db : resolveDatabase(io.cwd, flags.db);
}

/** The tenant and user named by `--tenant` and `--user` (the engine fills in `default`). */
export function userOf(flags: StoreFlags): Partial<UserScope> {
  return {
    ...(flags.tenant === undefined ? {} : { tenantId: flags.tenant }),
    ...(flags.user === undefined ? {} : { userId: flags.user }),
  };
}

/**
 * The scope of a conversation the command names: `--tenant`, and `--user` or else the conversation's own
 * user — core's `ownerOf`, the rule of every edge (decisions 0010, 0037), so `mnemo stats --conversation node-7` finds what the
 * seed API or the proxy stored for node-7.
 */
export function conversationScopeOf(flags: StoreFlags, conversationId: string): UserScope & { conversationId: string } {
  return { ...ownerOf(flags.tenant, [{ where: '--user', userId: flags.user }], conversationId), conversationId };
}

/** The stats of a stored conversation; `not_found` naming the user and the database when it has no messages. */
export async function requireConversation(
  memory: Memory,
  scope: Partial<UserScope> & { conversationId: string },
  db: string,
): Promise<ConversationStats> {
  const stats = await memory.stats(scope);
  if (stats !== undefined) return stats;
  const owner =
    scope.userId === undefined && scope.tenantId === undefined
      ? ''
      : ` for user ${scope.userId ?? 'default'} (tenant ${scope.tenantId ?? 'default'})`;
  throw new MemoryError(
    'not_found',
    `conversation ${JSON.stringify(scope.conversationId)} has no messages${owner} in ${describeDatabase(db)}`,
    {
      details: { field: 'conversation' },
    },
  );
}
