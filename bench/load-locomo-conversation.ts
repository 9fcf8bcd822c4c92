import { readFile } from 'node:fs/promises';
import type { MessageInput } from '@mnemo/core';

/** One LoCoMo conversation as chat messages: its id, the two speakers, and every turn in order. */
export interface LocomoConversation {
  readonly sampleId: string;
  /** `speaker_a`, replayed as the user. */
  readonly userName: string;
  /** `speaker_b`, replayed as the assistant. */
  readonly assistantName: string;
  readonly messages: readonly MessageInput[];
}

interface LocomoTurn {
  readonly speaker: string;
  readonly dia_id: string;
  readonly text: string;
  readonly blip_caption?: string;
}

/**
 * Reads one conversation of LoCoMo's `locomo10.json` (first by default) and maps its turns, sessions in
 * order, to messages: `speaker_a` → user, `speaker_b` → assistant. Image turns carry their caption the
 * way the LoCoMo paper renders them. Returns `undefined` when the file does not exist; the data stays
 * where it is (CC BY-NC 4.0, evaluation only: never copied into this repository).
 */
export async function loadLocomoConversation(path: string, index = 0): Promise<LocomoConversation | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const samples = JSON.parse(text) as { sample_id: string; conversation: Record<string, unknown> }[];
  const sample = samples[index];
  if (sample === undefined) throw new RangeError(`${path} has no conversation at index ${index}`);
  const { conversation } = sample;
  const userName = String(conversation.speaker_a);
  const assistantName = String(conversation.speaker_b);
  // Enumerate sessions from the session_<n> keys that hold turns: conv-26 also carries date keys for
  // sessions it does not have (see the dataset README).
  const sessions = Object.keys(conversation)
    .filter((key) => /^session_\d+$/.test(key) && Array.isArray(conversation[key]))
    .sort((left, right) => Number(left.slice(8)) - Number(right.slice(8)));
  const messages = sessions.flatMap((key) =>
    (conversation[key] as LocomoTurn[]).map(
      (turn): MessageInput => ({
        role: turn.speaker === userName ? 'user' : 'assistant',
        content: turn.blip_caption === undefined ? turn.text : `${turn.text} [shares an image: ${turn.blip_caption}]`,
        metadata: { diaId: turn.dia_id },
      }),
    ),
  );
  return { sampleId: sample.sample_id, userName, assistantName, messages };
}
