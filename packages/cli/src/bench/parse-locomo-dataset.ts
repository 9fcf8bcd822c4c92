import { z } from 'zod';
import {
  invalidLocomo,
  parseLocomoConversation,
  readLocomoSamples,
  schemaError,
  type LocomoConversation,
  type ParseLocomoOptions,
} from '../locomo/parse-locomo-conversation.js';
import { resolveEvidence, type EvidenceRepair } from './resolve-evidence.js';

export type { LocomoTurn } from '../locomo/parse-locomo-conversation.js';

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

/** One LoCoMo sample as the reader gives it (speakers, turns in order, date warnings), with its questions parsed. */
export interface LocomoSample extends Omit<LocomoConversation, 'qa'> {
  readonly questions: readonly LocomoQuestion[];
  /** Evidence entries that were split, rewritten or dropped, for the report. */
  readonly repairs: readonly EvidenceRepair[];
}

const questionSchema = z.looseObject({
  question: z.string().min(1),
  answer: z.union([z.string(), z.number()]).optional(),
  evidence: z.array(z.string()).default([]),
  category: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4), z.literal(5)]),
});

/**
 * Parses a LoCoMo file (`locomo10.json`'s shape: a JSON array of samples; see
 * `shared/data/locomo/README.md`) with the reader `mnemo replay` uses ({@link parseLocomoConversation}:
 * sessions, dates, turns), then each sample's questions, evidence repaired as the baseline tool does
 * ({@link resolveEvidence}). Throws `invalid_input` naming `source` and the field.
 */
export function parseLocomoDataset(text: string, source: string, options: ParseLocomoOptions = {}): LocomoSample[] {
  const seen = new Set<string>();
  return readLocomoSamples(text, source).map((raw, index) => {
    const sample = parseSample(parseLocomoConversation(raw, { source, text, index }, options), `${source} [${index}]`);
    if (seen.has(sample.sampleId))
      throw invalidLocomo(`${source} [${index}]: sample_id ${JSON.stringify(sample.sampleId)} appears twice`);
    seen.add(sample.sampleId);
    return sample;
  });
}

function parseSample(conversation: LocomoConversation, where: string): LocomoSample {
  const { sampleId, turns } = conversation;
  const known = new Set(turns.map((turn) => turn.diaId));
  const repairs: EvidenceRepair[] = [];
  const questions = conversation.qa.map((item, index): LocomoQuestion => {
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
  return {
    sampleId,
    speakerA: conversation.speakerA,
    speakerB: conversation.speakerB,
    turns,
    questions,
    repairs,
    warnings: conversation.warnings,
  };
}
