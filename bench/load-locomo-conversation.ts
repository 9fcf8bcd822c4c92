import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { MessageInput } from '@mnemo/core';
import { parseLocomoConversation, readLocomoSamples } from 'mnemo/locomo';

/** One LoCoMo conversation as chat messages: its id, the two speakers, and every turn in order. */
export interface LocomoConversation {
  readonly sampleId: string;
  /** `speaker_a`, replayed as the user. */
  readonly userName: string;
  /** `speaker_b`, replayed as the assistant. */
  readonly assistantName: string;
  readonly messages: readonly MessageInput[];
}

/**
 * Reads one conversation of LoCoMo's `locomo10.json` (first by default) with the CLI's LoCoMo reader
 * (`mnemo/locomo`, the one `mnemo replay` and `mnemo bench locomo` use) and maps its turns to messages:
 * `speaker_a` → user, `speaker_b` → assistant, captions inline, session dates kept. Returns `undefined`
 * when the file does not exist; the data stays where it is (CC BY-NC 4.0, evaluation only: never copied
 * into this repository).
 */
export async function loadLocomoConversation(path: string, index = 0): Promise<LocomoConversation | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const samples = readLocomoSamples(text, basename(path));
  if (samples[index] === undefined) throw new RangeError(`${path} has no conversation at index ${index}`);
  const conversation = parseLocomoConversation(samples[index], { source: basename(path), text, index });
  const messages = conversation.turns.map((turn): MessageInput => ({
    role: turn.role,
    content: turn.content,
    ...(turn.createdAt === undefined ? {} : { createdAt: turn.createdAt }),
    metadata: { diaId: turn.diaId },
  }));
  return {
    sampleId: conversation.sampleId,
    userName: conversation.speakerA,
    assistantName: conversation.speakerB,
    messages,
  };
}
