import { MemoryError } from '@mnemo/core';
import { z } from 'zod';
import { locomoSecondsPerTurn, parseLocomoDate } from '../replay/parse-locomo-transcript.js';
import { resolveEvidence, type EvidenceRepair } from './resolve-evidence.js';

/** One turn of a LoCoMo conversation, ready to append: `speaker_a` is the user, `speaker_b` the assistant. */
export interface LocomoTurn {
  /** `D<session>:<index>`, unique within the conversation. */
  readonly diaId: string;
  readonly session: number;
  readonly role: 'user' | 'assistant';
  /** The speaker's first name (the message's `name`). */
  readonly speaker: string;
  /** The text, plus ` [shared image: <blip_caption>]` on an image turn. */
  readonly content: string;
  /** ISO 8601: the session's start plus {@link locomoSecondsPerTurn} seconds per turn; absent when the session has no date. */
  readonly createdAt?: string;
}

/** Question categories as numbered in the file (see the dataset README): 1 multi-hop … 5 adversarial. */
export const locomoCategories = [1, 2, 3, 4, 5] as const;

/** One of {@link locomoCategories}. */
export type LocomoCategory = (typeof locomoCategories)[number];

/** Names of the categories, by their number in the file. */
export const locomoCategoryNames: Readonly<Record<LocomoCategory, string>> = Object.freeze({
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
});

/** One question of a sample, with its evidence repaired and checked against the conversation's turns. */
export interface LocomoQuestion {
  /** `<sample_id>#<qa_index>`, qa_index being the 0-based position in the sample's `qa` list. */
  readonly key: string;
  readonly index: number;
  readonly question: string;
  /** The gold answer as text (6 are JSON numbers in the file); absent on most adversarial items. */
  readonly answer?: string;
  readonly category: LocomoCategory;
  /** Evidence turn ids that exist in the conversation, deduplicated, in the file's order. Empty: the question is skipped. */
  readonly evidence: readonly string[];
}

/** One LoCoMo sample: the two speakers, every turn in order and the questions. */
export interface LocomoSample {
  readonly sampleId: string;
  readonly speakerA: string;
  readonly speakerB: string;
  readonly turns: readonly LocomoTurn[];
  readonly questions: readonly LocomoQuestion[];
  /** Evidence entries that were split, rewritten or dropped, for the report. */
  readonly repairs: readonly EvidenceRepair[];
}

const turnSchema = z.looseObject({ speaker: z.string().min(1), dia_id: z.string().min(1), text: z.string(), blip_caption: z.string().optional() });
const questionSchema = z.looseObject({
  question: z.string().min(1),
  answer: z.union([z.string(), z.number()]).optional(),
  evidence: z.array(z.string()).default([]),
  category: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4), z.literal(5)]),
});
const sampleSchema = z.looseObject({
  sample_id: z.string().min(1),
  conversation: z.looseObject({ speaker_a: z.string().min(1), speaker_b: z.string().min(1) }),
  qa: z.array(z.unknown()),
});

const sessionKey = /^session_(\d+)$/;

/**
 * Parses a LoCoMo file (`locomo10.json`'s shape: a JSON array of samples; see
 * `shared/data/locomo/README.md`). Sessions are the `session_<n>` keys holding an array, in numeric
 * order (conv-26's stray `session_<n>_date_time` keys are ignored); evidence is repaired as the
 * baseline tool does ({@link resolveEvidence}). Throws `invalid_input` naming `source` and the field.
 */
export function parseLocomoDataset(text: string, source: string): LocomoSample[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(`${source} is not valid JSON: ${(error as Error).message}`, error);
  }
  if (!Array.isArray(json) || json.length === 0) throw invalid(`${source} must be a non-empty JSON array of LoCoMo samples`);
  const seen = new Set<string>();
  return json.map((raw, index) => {
    const sample = parseSample(raw, `${source} [${index}]`);
    if (seen.has(sample.sampleId)) throw invalid(`${source} [${index}]: sample_id ${JSON.stringify(sample.sampleId)} appears twice`);
    seen.add(sample.sampleId);
    return sample;
  });
}

function parseSample(raw: unknown, where: string): LocomoSample {
  const parsed = sampleSchema.safeParse(raw);
  if (!parsed.success) throw schemaError(where, parsed.error);
  const { sample_id: sampleId, conversation, qa } = parsed.data;
  const sessions = Object.entries(conversation)
    .flatMap(([key, value]) => {
      const match = sessionKey.exec(key);
      return match !== null && Array.isArray(value) ? [{ number: Number(match[1]), turns: value as unknown[] }] : [];
    })
    .sort((a, b) => a.number - b.number);
  if (sessions.length === 0) throw invalid(`${where} ${sampleId}: the conversation has no session_<n> arrays`);
  const turns = sessions.flatMap((session) => parseSession(conversation, session, `${where} ${sampleId}`));
  const known = new Set<string>();
  for (const turn of turns) {
    if (known.has(turn.diaId)) throw invalid(`${where} ${sampleId}: dia_id ${turn.diaId} appears twice`);
    known.add(turn.diaId);
  }
  const repairs: EvidenceRepair[] = [];
  const questions = qa.map((item, index): LocomoQuestion => {
    const question = questionSchema.safeParse(item);
    if (!question.success) throw schemaError(`${where} ${sampleId}: qa[${index}]`, question.error);
    const key = `${sampleId}#${index}`;
    const resolved = resolveEvidence(question.data.evidence, known);
    repairs.push(...resolved.repairs.map((repair) => ({ ...repair, key })));
    const { answer } = question.data;
    return {
      key,
      index,
      question: question.data.question,
      ...(answer === undefined ? {} : { answer: String(answer) }),
      category: question.data.category,
      evidence: resolved.ids,
    };
  });
  return { sampleId, speakerA: conversation.speaker_a, speakerB: conversation.speaker_b, turns, questions, repairs };
}

function parseSession(conversation: { speaker_a: string; speaker_b: string } & Record<string, unknown>, session: { number: number; turns: unknown[] }, where: string): LocomoTurn[] {
  const dateKey = `session_${session.number}_date_time`;
  const dateText = conversation[dateKey];
  const start = typeof dateText === 'string' ? parseLocomoDate(dateText) : undefined;
  if (dateText !== undefined && start === undefined) {
    throw invalid(`${where}: ${dateKey} ${JSON.stringify(dateText)} is not a date like "1:56 pm on 8 May, 2023"`);
  }
  return session.turns.map((raw, position) => {
    const location = `${where}: session_${session.number}[${position}]`;
    const parsed = turnSchema.safeParse(raw);
    if (!parsed.success) throw schemaError(location, parsed.error);
    const turn = parsed.data;
    const role = turn.speaker === conversation.speaker_a ? 'user' : turn.speaker === conversation.speaker_b ? 'assistant' : undefined;
    if (role === undefined) throw invalid(`${location} (${turn.dia_id}): speaker ${JSON.stringify(turn.speaker)} is neither speaker_a nor speaker_b`);
    const caption = turn.blip_caption?.trim() ?? '';
    const content = [turn.text.trim() === '' ? '' : turn.text, caption === '' ? '' : `[shared image: ${caption}]`].filter((part) => part !== '').join(' ');
    if (content === '') throw invalid(`${location} (${turn.dia_id}): the turn has no text and no caption`);
    return {
      diaId: turn.dia_id,
      session: session.number,
      role,
      speaker: turn.speaker,
      content,
      ...(start === undefined ? {} : { createdAt: new Date(start.getTime() + position * locomoSecondsPerTurn * 1000).toISOString() }),
    };
  });
}

function invalid(message: string, cause?: unknown): MemoryError {
  return new MemoryError('invalid_input', message, cause === undefined ? {} : { cause });
}

function schemaError(location: string, error: z.ZodError): MemoryError {
  const problems = error.issues.map((issue) => `${issue.path.map(String).join('.') || 'value'}: ${issue.message}`);
  return invalid(`${location}: ${problems.join('; ')}`);
}
