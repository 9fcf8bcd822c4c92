import { defaultMessageLimits, isMemoryError, MemoryError } from '@mnemo/core';
import { validateMessageInput } from '@mnemo/core/internals';
import {
  invalidLocomo,
  parseLocomoConversation,
  readLocomoSamples,
  type ParseLocomoOptions,
} from '../locomo/parse-locomo-conversation.js';
import type { Transcript } from './transcript.js';

/**
 * Parses one conversation of a LoCoMo-format file with the reader `mnemo bench locomo` uses
 * (`parseLocomoConversation`: sessions in numeric order, dates in LoCoMo's, ISO 8601 and other common
 * forms, `speaker_a` → `user`, `speaker_b` → `assistant`, image captions inline, `createdAt` = the
 * session's date plus a few seconds per turn, UTC): the sample whose `sample_id` is `sampleId`, or the
 * first. Metadata keeps `sampleId`, `diaId`, `session` and `speaker`. Only that sample is read, so a bad
 * date elsewhere in the file does not matter. Throws `invalid_input` naming `source` and the field (a
 * bad date: its line), or `not_found` for an unknown `sampleId`.
 */
export function parseLocomoTranscript(
  text: string,
  source: string,
  sampleId?: string,
  options: ParseLocomoOptions = {},
): Transcript {
  const samples = readLocomoSamples(text, source);
  const index =
    sampleId === undefined
      ? 0
      : samples.findIndex((item) => (item as { sample_id?: unknown } | null)?.sample_id === sampleId);
  if (index < 0) {
    const known = samples
      .map((item) => (item as { sample_id?: unknown } | null)?.sample_id)
      .filter((id) => typeof id === 'string');
    throw new MemoryError(
      'not_found',
      `${source} has no conversation ${JSON.stringify(sampleId)} (it has ${known.join(', ')})`,
      {
        details: { field: 'conversation', known },
      },
    );
  }
  const conversation = parseLocomoConversation(samples[index], { source, text, index }, options);
  const name = conversation.sampleId;
  const messages = conversation.turns.map((turn, position) => {
    const message = {
      role: turn.role,
      content: turn.content,
      ...(turn.createdAt === undefined ? {} : { createdAt: turn.createdAt }),
      metadata: { sampleId: name, diaId: turn.diaId, session: turn.session, speaker: turn.speaker },
    };
    try {
      return validateMessageInput(message, defaultMessageLimits);
    } catch (error) {
      if (!isMemoryError(error)) throw error;
      throw invalidLocomo(
        `${source} ${name}: turn ${position} (${turn.diaId}): ${error.message.replace(/^message: /, '')}`,
        error,
      );
    }
  });
  return { name, messages, warnings: conversation.warnings };
}
