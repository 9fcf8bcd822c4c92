import { createMemory, MemoryError, resolveUserScope, type Scope, type Store } from '@mnemo/core';
import { backgroundJobAttempts, embedConversation, refinerRanksConversation } from '@mnemo/core/internals';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig } from '../config/cli-config.js';
import { chooseEmbedder, refinerModelOf } from '../store/choose-embedder.js';
import { openCliStore } from '../store/open-cli-store.js';
import { addStoreOptions, databaseOf, type StoreFlags } from './add-store-options.js';
import { embedderOption, withEmbedderFlag } from './embedder-option.js';

interface ReembedFlags extends StoreFlags {
  readonly embedder?: string;
  readonly keepOld?: boolean;
}

// Progress lines at most this often, so a store of many small conversations does not flood the terminal.
const progressIntervalMs = 500;

/**
 * Adds `mnemo reembed`: moves the vectors of a tenant (or one user) to the configured embedder. It embeds
 * every message that has no vector of that model, conversation by conversation, and only then drops the
 * vectors of other models: a run that stops half-way (Ctrl-C, a crash) loses nothing, the old model's
 * vectors still serve `--embedder <old>`, and the next run resumes where it stopped. It runs beside a
 * live `mnemo serve` (its own process, batches of 64 with the event loop free between them). With a
 * refiner (decision 0045) it also queues a refine job for each conversation that lacks the refiner's
 * vectors, so that dormant conversations are refined too, not only those that get a new message.
 */
export function registerReembedCommand(program: Command, io: CliIo): void {
  const command = program
    .command('reembed')
    .description(
      'move message vectors to the configured embedder (after a model change): embeds what lacks a vector of it, with progress, resumable; then drops vectors of other models',
    )
    .addOption(embedderOption())
    .option('--keep-old', 'keep the vectors of other models (to switch back without embedding again)');
  addStoreOptions(command).action(async (_flags: ReembedFlags, command: Command) => {
    const flags = command.optsWithGlobals<ReembedFlags>();
    await runReembed(flags, withEmbedderFlag(io, flags));
  });
}

async function runReembed(flags: ReembedFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const embedder = chooseEmbedder(config);
  if (embedder === undefined)
    throw new MemoryError('invalid_input', 'reembed needs an embedder: MNEMO_EMBEDDER is none', {
      details: { field: 'embedder' },
    });
  const refinerModel = refinerModelOf(config);
  const store = await openCliStore(databaseOf(flags, config, io), { mustExist: true });
  // The engine only closes the store here; no background work runs, the command embeds in the foreground.
  const memory = createMemory({ store, compaction: false, knowledge: false, worker: { autoStart: false } });
  try {
    const user = resolveUserScope({
      ...(flags.tenant === undefined ? {} : { tenantId: flags.tenant }),
      ...(flags.user === undefined ? {} : { userId: flags.user }),
    });
    const scopes = await listConversations(store, user.tenantId, flags.user === undefined ? undefined : user.userId);
    const started = performance.now();
    let lastProgress = 0;
    let embedded = 0;
    let refineQueued = 0;
    const progress = (done: number, final = false) => {
      const now = performance.now();
      if (!final && now - lastProgress < progressIntervalMs) return;
      lastProgress = now;
      const seconds = (now - started) / 1000;
      const rate = seconds > 0 ? embedded / seconds : 0;
      const line = {
        model: embedder.model,
        conversationsDone: done,
        conversations: scopes.length,
        embeddedMessages: embedded,
        messagesPerSecond: Math.round(rate),
        seconds: Math.round(seconds * 10) / 10,
      };
      if (flags.json === true) io.stderr.write(`${JSON.stringify({ progress: line })}\n`);
      else
        io.stderr.write(
          `\r${embedder.model}: ${done} / ${scopes.length} conversations, ${embedded} messages embedded (${Math.round(rate)}/s)`,
        );
    };
    for (const [index, scope] of scopes.entries()) {
      embedded += await embedConversation({ store, embedder }, scope);
      // A chat whose assistant answers at length is not refined (decision 0047): no job for it.
      if (
        refinerModel !== undefined &&
        (await store.listUnembeddedMessages(scope, refinerModel, 1)).length > 0 &&
        (await refinerRanksConversation(store, scope))
      ) {
        // A pending refine job of the conversation is not queued twice (enqueueJob keeps one).
        await store.enqueueJob(scope, {
          kind: 'refine',
          runAt: new Date().toISOString(),
          maxAttempts: backgroundJobAttempts,
        });
        refineQueued += 1;
      }
      progress(index + 1);
    }
    progress(scopes.length, true);
    // Only once every conversation has the new vectors, so that an interrupted run leaves the old ones usable.
    const dropped =
      flags.keepOld === true
        ? 0
        : await store.deleteEmbeddings({
            tenantId: user.tenantId,
            ...(flags.user === undefined ? {} : { userId: user.userId }),
            // The refiner's vectors (decision 0045) stay: they are not another embedder's.
            exceptModels: [embedder.model, ...(refinerModel === undefined ? [] : [refinerModel])],
          });
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    if (flags.json === true)
      io.stdout.write(
        `${JSON.stringify({ model: embedder.model, droppedVectors: dropped, conversations: scopes.length, embeddedMessages: embedded, refineQueued, seconds })}\n`,
      );
    else
      io.stdout.write(
        `\n${embedder.model}: embedded ${embedded} messages in ${scopes.length} conversations in ${seconds} s, dropped ${dropped} vectors of other models\n` +
          (refineQueued === 0
            ? ''
            : `${refineQueued} conversations queued for the refiner (${refinerModel}): the workers of mnemo serve or mnemo worker refine them while the machine is idle\n`),
      );
  } finally {
    await memory.close();
  }
}

async function listConversations(store: Store, tenantId: string, userId: string | undefined): Promise<Scope[]> {
  const scopes: Scope[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listConversations(
      { tenantId, ...(userId === undefined ? {} : { userId }) },
      { limit: 500, ...(cursor === undefined ? {} : { cursor }) },
    );
    for (const conversation of page.items)
      scopes.push({ tenantId, userId: conversation.userId, conversationId: conversation.conversationId });
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return scopes;
}
