import type { Message, Metadata } from './message.js';

/**
 * The one metadata key mnemo reads: `metadata.mnemo.supersedes` lists the ids of earlier messages of
 * the same conversation that this message replaces (a regenerated reply replaces the reply it was
 * regenerated from). Both stay stored verbatim, so history shows what happened; contexts and the
 * proxy's turn alignment skip the superseded ones. Every other metadata key is the caller's.
 */
export const reservedMetadataKey = 'mnemo';

/** The `metadata.mnemo` object of a message that supersedes `messageIds`. */
export function supersedingMetadata(messageIds: readonly string[]): Metadata {
  return { [reservedMetadataKey]: { supersedes: [...messageIds] } };
}

/** The ids a message supersedes (empty for almost every message). */
export function supersededIds(message: Pick<Message, 'metadata'>): readonly string[] {
  const reserved = message.metadata?.[reservedMetadataKey];
  if (typeof reserved !== 'object' || reserved === null) return [];
  const supersedes = (reserved as { supersedes?: unknown }).supersedes;
  return Array.isArray(supersedes) ? supersedes.filter((id): id is string => typeof id === 'string') : [];
}

/** `messages` (oldest first) without those that a later message among them supersedes. */
export function withoutSuperseded<T extends Pick<Message, 'id' | 'metadata'>>(messages: readonly T[]): T[] {
  const superseded = new Set<string>();
  for (const message of messages) for (const id of supersededIds(message)) superseded.add(id);
  return superseded.size === 0 ? [...messages] : messages.filter((message) => !superseded.has(message.id));
}

/** What is wrong with `metadata.mnemo`, or `undefined` when it is absent or has the shape mnemo reads. */
export function reservedMetadataProblem(metadata: Metadata): string | undefined {
  const reserved = metadata[reservedMetadataKey];
  if (reserved === undefined) return undefined;
  const supersedes =
    typeof reserved === 'object' && reserved !== null ? (reserved as Record<string, unknown>).supersedes : undefined;
  const valid =
    typeof reserved === 'object' &&
    reserved !== null &&
    !Array.isArray(reserved) &&
    Object.keys(reserved).every((key) => key === 'supersedes') &&
    (supersedes === undefined || (Array.isArray(supersedes) && supersedes.every((id) => typeof id === 'string')));
  return valid ? undefined : 'is reserved for mnemo: it may only be { "supersedes": [message ids] }';
}
