import { defaultMessageLimits, isMemoryError, MemoryError, validateMessageInput, type MessageInput } from '@mnemo/core';
import { z } from 'zod';
import type { Transcript } from './transcript.js';

const turnSchema = z.looseObject({
  speaker: z.string(),
  dia_id: z.string(),
  text: z.string(),
  blip_caption: z.string().optional(),
});

const sampleSchema = z.looseObject({
  sample_id: z.string().min(1),
  conversation: z.looseObject({ speaker_a: z.string().min(1), speaker_b: z.string().min(1) }),
});

/** Seconds between consecutive turns of a session: LoCoMo dates only each session's start. */
export const locomoSecondsPerTurn = 10;

const sessionKey = /^session_(\d+)$/;

/**
 * Parses one conversation of a LoCoMo file (a JSON array of samples; see `shared/data/locomo/README.md`):
 * the sample whose `sample_id` is `sampleId`, or the first. Sessions are the `session_<n>` keys whose
 * value is an array, in numeric order (stray `session_<n>_date_time` keys without a session are ignored);
 * `speaker_a` becomes `user`, `speaker_b` `assistant`; an image turn's content gets
 * `[shared image: <blip_caption>]`; `createdAt` is the session's date plus {@link locomoSecondsPerTurn}
 * seconds per turn, in UTC. Metadata keeps `sampleId`, `diaId`, `session` and `speaker`.
 * Throws `invalid_input` naming `source` and the field, or `not_found` for an unknown `sampleId`.
 */
export function parseLocomoTranscript(text: string, source: string, sampleId?: string): Transcript {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(`${source} is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(json) || json.length === 0) throw invalid(`${source} must be a non-empty JSON array of LoCoMo samples`);
  const index = sampleId === undefined ? 0 : json.findIndex((item) => (item as { sample_id?: unknown } | null)?.sample_id === sampleId);
  if (index < 0) {
    const known = json.map((item) => (item as { sample_id?: unknown } | null)?.sample_id).filter((id) => typeof id === 'string');
    throw new MemoryError('not_found', `${source} has no conversation ${JSON.stringify(sampleId)} (it has ${known.join(', ')})`, {
      details: { field: 'conversation', known },
    });
  }
  const parsed = sampleSchema.safeParse(json[index]);
  if (!parsed.success) throw schemaError(`${source} [${index}]`, parsed.error);
  const { sample_id: name, conversation } = parsed.data;
  const sessions = listSessions(conversation);
  if (sessions.length === 0) throw invalid(`${source} ${name}: the conversation has no session_<n> arrays`);
  const messages = sessions.flatMap((session) => parseSession(conversation, session, { source, name }));
  return { name, messages };
}

/** Reads "1:56 pm on 8 May, 2023" (LoCoMo's `session_<n>_date_time`) as a UTC time; `undefined` if it is not one. */
export function parseLocomoDate(value: string): Date | undefined {
  const match = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*$/i.exec(value);
  if (match === null) return undefined;
  const [, hourText, minuteText, half, dayText, monthText, yearText] = match;
  const monthName = monthText!.toLowerCase();
  const month = months.findIndex((name) => name === monthName || name.slice(0, 3) === monthName);
  const hour = Number(hourText) % 12 + (half!.toLowerCase() === 'pm' ? 12 : 0);
  const minute = Number(minuteText);
  const day = Number(dayText);
  if (month < 0 || hour > 23 || minute > 59 || day < 1 || day > 31) return undefined;
  const date = new Date(Date.UTC(Number(yearText), month, day, hour, minute));
  return date.getUTCDate() === day ? date : undefined;
}

const months = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

function listSessions(conversation: Record<string, unknown>): { number: number; turns: unknown[] }[] {
  return Object.entries(conversation)
    .flatMap(([key, value]) => {
      const match = sessionKey.exec(key);
      return match !== null && Array.isArray(value) ? [{ number: Number(match[1]), turns: value as unknown[] }] : [];
    })
    .sort((a, b) => a.number - b.number);
}

function parseSession(
  conversation: { speaker_a: string; speaker_b: string } & Record<string, unknown>,
  session: { number: number; turns: unknown[] },
  where: { source: string; name: string },
): MessageInput[] {
  const dateKey = `session_${session.number}_date_time`;
  const dateText = conversation[dateKey];
  let start: Date | undefined;
  if (dateText !== undefined) {
    start = typeof dateText === 'string' ? parseLocomoDate(dateText) : undefined;
    if (start === undefined) {
      throw invalid(`${where.source} ${where.name}: ${dateKey} ${JSON.stringify(dateText)} is not a date like "1:56 pm on 8 May, 2023"`);
    }
  }
  return session.turns.map((raw, position) => {
    const location = `${where.source} ${where.name}: session_${session.number}[${position}]`;
    const parsed = turnSchema.safeParse(raw);
    if (!parsed.success) throw schemaError(location, parsed.error);
    const turn = parsed.data;
    const role = turn.speaker === conversation.speaker_a ? 'user' : turn.speaker === conversation.speaker_b ? 'assistant' : undefined;
    if (role === undefined) {
      throw invalid(`${location} (${turn.dia_id}): speaker ${JSON.stringify(turn.speaker)} is neither speaker_a nor speaker_b`);
    }
    const caption = turn.blip_caption === undefined || turn.blip_caption.trim() === '' ? '' : `[shared image: ${turn.blip_caption}]`;
    const content = [turn.text, caption].filter((part) => part.trim().length > 0).join(' ');
    const message = {
      role,
      content,
      ...(start === undefined ? {} : { createdAt: new Date(start.getTime() + position * locomoSecondsPerTurn * 1000).toISOString() }),
      metadata: { sampleId: where.name, diaId: turn.dia_id, session: session.number, speaker: turn.speaker },
    };
    try {
      return validateMessageInput(message, defaultMessageLimits);
    } catch (error) {
      if (!isMemoryError(error)) throw error;
      throw invalid(`${location} (${turn.dia_id}): ${error.message.replace(/^message: /, '')}`, error);
    }
  });
}

function invalid(message: string, cause?: unknown): MemoryError {
  return new MemoryError('invalid_input', message, cause === undefined ? {} : { cause });
}

function schemaError(location: string, error: z.ZodError): MemoryError {
  const problems = error.issues.map((issue) => `${issue.path.map(String).join('.') || 'value'}: ${issue.message}`);
  return invalid(`${location}: ${problems.join('; ')}`);
}
