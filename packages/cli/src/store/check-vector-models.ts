import type { Store } from '@mnemo/core';
import type { EmbeddingCount } from '@mnemo/core/store-kit';
import type { Logger } from 'pino';

/** What {@link checkVectorModels} found: the store's vectors per model, and those of models other than the embedder's. */
export interface VectorModelCheck {
  readonly model: string;
  readonly vectors: number;
  readonly otherModels: readonly EmbeddingCount[];
}

/**
 * Counts the store's vectors per model and, when some were made by another model than `model` (the
 * embedder `serve` runs) and `refinerModel` (its refiner's, decision 0045), logs one warning that says what recall does with them and how to move them:
 * a store never searches one model's vectors with another's, so messages with only the old model's
 * vectors are recalled by keyword alone until `mnemo reembed` (or a serve with the old embedder).
 * Otherwise one info line with the count. Never throws: a failed count is a warning of its own, and
 * serving goes on.
 */
export async function checkVectorModels(
  store: Pick<Store, 'countEmbeddings'>,
  model: string,
  logger: Pick<Logger, 'info' | 'warn'>,
  refinerModel?: string,
): Promise<VectorModelCheck | undefined> {
  let counts: EmbeddingCount[];
  try {
    counts = await store.countEmbeddings({});
  } catch (error) {
    logger.warn({ err: error }, 'cannot count the stored vectors per model');
    return undefined;
  }
  const vectors = counts.find((count) => count.model === model)?.vectors ?? 0;
  const otherModels = counts.filter((count) => count.model !== model && count.model !== refinerModel);
  const check = { model, vectors, otherModels };
  if (otherModels.length === 0)
    logger.info(check, vectors === 0 ? 'no stored vectors yet' : `stored vectors: ${vectors}, all of the embedder's`);
  else
    logger.warn(
      check,
      `the store holds ${otherModels.reduce((sum, count) => sum + count.vectors, 0)} vectors of other embedders than ${model} (${vectors} of it): ` +
        'messages without a vector of it are recalled by keyword only; `mnemo reembed` gives them one (a tenant a run, `--tenant`; beside a running serve), ' +
        'or serve with the embedder that made them (--embedder)',
    );
  return check;
}
