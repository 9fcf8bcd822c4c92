import { MemoryError, type Embedder, type Memory, type Scope, type Store } from '@mnemo/core';
import { refinerRanksConversation } from '@mnemo/core/internals';
import type { StoredTurn } from './locomo-score.js';
import type { LocomoSample } from './parse-locomo-dataset.js';

/** A sample as stored: its scope and each stored message's turn, by `seq`. */
export interface IngestedSample {
  readonly scope: Scope;
  readonly turnsBySeq: ReadonlyMap<number, StoredTurn>;
  /** Turn ids by seq, for mapping recall hits back to LoCoMo ids. */
  readonly diaIdBySeq: ReadonlyMap<number, string>;
}

/** Options of {@link ingestLocomoSample}. */
export interface IngestOptions {
  readonly memory: Memory;
  /** The memory's store, to check that every message got a vector. */
  readonly store: Store;
  /** The memory's embedder; without one the vector check is skipped. */
  readonly embedder?: Embedder;
  /** The memory's refiner; its vectors are checked as the embedder's are. */
  readonly refiner?: Embedder;
  readonly tenantId?: string;
  /** The user the conversation is stored for; default the `sample_id` (one user a sample). */
  readonly userId?: string;
  readonly signal?: AbortSignal;
}

/**
 * Stores one LoCoMo sample the way a bot would have lived it: one conversation (conversation id and, unless
 * `userId` says otherwise, user id = `sample_id`), each session appended as one batch and followed by the background jobs it queued
 * (compaction, embedding) run to completion, so the rolling summary folds session by session. Each
 * message carries the speaker as `name`, the session time in `createdAt` and `metadata.dia_id`.
 * Throws `storage_failed` when a message is left without a vector (a job failed for good); the refiner's
 * are checked only where it refines (not a chat whose assistant answers at length, decision 0047).
 */
export async function ingestLocomoSample(sample: LocomoSample, options: IngestOptions): Promise<IngestedSample> {
  const { memory, store, embedder } = options;
  const scope: Scope = {
    tenantId: options.tenantId ?? 'locomo',
    userId: options.userId ?? sample.sampleId,
    conversationId: sample.sampleId,
  };
  const callOptions = options.signal === undefined ? {} : { signal: options.signal };
  const turnsBySeq = new Map<number, StoredTurn>();
  const diaIdBySeq = new Map<number, string>();
  const sessions = [...new Set(sample.turns.map((turn) => turn.session))];
  for (const session of sessions) {
    options.signal?.throwIfAborted();
    const turns = sample.turns.filter((turn) => turn.session === session);
    const stored = await memory.append(
      scope,
      turns.map((turn) => ({
        role: turn.role,
        content: turn.content,
        name: turn.speaker,
        ...(turn.createdAt === undefined ? {} : { createdAt: turn.createdAt }),
        metadata: { dia_id: turn.diaId, session: turn.session },
      })),
      callOptions,
    );
    stored.forEach((message, index) => {
      turnsBySeq.set(message.seq, { diaId: turns[index]!.diaId, content: message.content });
      diaIdBySeq.set(message.seq, turns[index]!.diaId);
    });
    await memory.runPendingJobs();
  }
  // The refiner leaves a chat whose assistant answers at length to the embedder (decision 0047).
  const refined = options.refiner !== undefined && (await refinerRanksConversation(store, scope, callOptions));
  const models = [embedder, refined ? options.refiner : undefined];
  for (const model of models.flatMap((each) => (each === undefined ? [] : [each.model]))) {
    const missing = await store.listUnembeddedMessages(scope, model, 1, callOptions);
    if (missing.length > 0) {
      throw new MemoryError(
        'storage_failed',
        `${sample.sampleId}: message ${missing[0]!.seq} has no ${model} vector after the embedding jobs ran`,
      );
    }
  }
  return { scope, turnsBySeq, diaIdBySeq };
}
