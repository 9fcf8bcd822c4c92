import { createMemory, embedConversation, MemoryError, resolveUserScope, type Store } from '@mnemo/core';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig } from '../config/cli-config.js';
import { chooseEmbedder } from '../store/choose-embedder.js';
import { openCliStore } from '../store/open-cli-store.js';
import { addStoreOptions, databaseOf, type StoreFlags } from './add-store-options.js';

/** Adds `mnemo reembed`: rebuilds the vectors of a tenant (or one user) with the configured embedder. */
export function registerReembedCommand(program: Command, io: CliIo): void {
  const command = program
    .command('reembed')
    .description('rebuild message vectors with the configured embedder (after a model change): drops vectors of other models, embeds what is missing');
  addStoreOptions(command).action(async (_flags: StoreFlags, command: Command) => {
    await runReembed(command.optsWithGlobals<StoreFlags>(), io);
  });
}

async function runReembed(flags: StoreFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({ env: io.env, cwd: io.cwd, ...(flags.config === undefined ? {} : { configPath: flags.config }) });
  const embedder = chooseEmbedder(config);
  if (embedder === undefined) throw new MemoryError('invalid_input', 'reembed needs an embedder: MNEMO_EMBEDDER is none', { details: { field: 'embedder' } });
  const store = await openCliStore(databaseOf(flags, config, io), { mustExist: true });
  // The engine only closes the store here; no background work runs, the command embeds in the foreground.
  const memory = createMemory({ store, compaction: false, knowledge: false, worker: { autoStart: false } });
  try {
    const user = resolveUserScope({ ...(flags.tenant === undefined ? {} : { tenantId: flags.tenant }), ...(flags.user === undefined ? {} : { userId: flags.user }) });
    const dropped = await store.deleteEmbeddings({ tenantId: user.tenantId, ...(flags.user === undefined ? {} : { userId: user.userId }), exceptModel: embedder.model });
    let conversations = 0;
    let embedded = 0;
    for await (const scope of eachConversation(store, user.tenantId, flags.user === undefined ? undefined : user.userId)) {
      embedded += await embedConversation({ store, embedder }, scope);
      conversations += 1;
      if (flags.json !== true) io.stderr.write(`\rembedded ${embedded} messages in ${conversations} conversations`);
    }
    if (flags.json === true) io.stdout.write(`${JSON.stringify({ model: embedder.model, droppedVectors: dropped, conversations, embeddedMessages: embedded })}\n`);
    else io.stdout.write(`\n${embedder.model}: dropped ${dropped} vectors of other models, embedded ${embedded} messages in ${conversations} conversations\n`);
  } finally {
    await memory.close();
  }
}

async function* eachConversation(store: Store, tenantId: string, userId: string | undefined) {
  let cursor: string | undefined;
  do {
    const page = await store.listConversations({ tenantId, ...(userId === undefined ? {} : { userId }) }, { limit: 500, ...(cursor === undefined ? {} : { cursor }) });
    for (const conversation of page.items) yield { tenantId, userId: conversation.userId, conversationId: conversation.conversationId };
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}
