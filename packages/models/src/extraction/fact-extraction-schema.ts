import type { ExtractedFact } from '@mnemo/core';
import { isRecord, readSourceSeqs, readText } from './read-reply-fields.js';
import type { ValidationResult } from './request-validated-json.js';
import { toSnakeCase } from './to-snake-case.js';

/** Name of {@link factExtractionSchema} in `response_format`. */
export const factExtractionSchemaName = 'extracted_facts';

/**
 * JSON schema of a fact-extraction reply, `{ "facts": [...] }`, in the subset OpenAI's strict structured
 * outputs accept (every property required, no additional properties, no numeric bounds: those are
 * checked by {@link readExtractedFacts}).
 */
export const factExtractionSchema: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'object',
  properties: {
    facts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          subject: {
            type: 'string',
            description: '"user" for the user, else the name of who or what the fact is about',
          },
          attribute: { type: 'string', description: 'snake_case English key, e.g. home_town, likes, trip_date' },
          value: { type: 'string', description: "the value as the user said it, in the user's language" },
          text: { type: 'string', description: "the fact in the user's own words and language" },
          confidence: { type: 'number', description: '0 to 1' },
          sourceSeqs: { type: 'array', items: { type: 'integer' }, description: 'seqs of the messages it comes from' },
          polarity: { type: 'string', enum: ['assert', 'negate'] },
        },
        required: ['subject', 'attribute', 'value', 'text', 'confidence', 'sourceSeqs', 'polarity'],
        additionalProperties: false,
      },
    },
  },
  required: ['facts'],
  additionalProperties: false,
});

// Ways models name the speaker instead of the prompt's "user".
const userAliases = new Set(['user', 'the user', 'i', 'me', 'myself', 'speaker']);

/**
 * Checks a parsed reply against {@link factExtractionSchema} and the prompt: `{ facts: [...] }` (a bare
 * list is accepted too) whose facts have a subject, an attribute (normalized to snake_case), a value
 * and a text (trimmed, non-empty), a confidence from 0 to 1, and sourceSeqs among `shownSeqs`; a missing
 * polarity means `assert`, and a subject such as "I" or "the user" becomes `user`. Returns every problem
 * found, each naming its path (`facts[2].sourceSeqs …`), so they can be fed back to the model.
 */
export function readExtractedFacts(value: unknown, shownSeqs: ReadonlySet<number>): ValidationResult<ExtractedFact[]> {
  const list = Array.isArray(value) ? value : isRecord(value) ? value.facts : undefined;
  if (!Array.isArray(list)) return { ok: false, problems: ['the reply must be a JSON object with a "facts" list'] };
  const problems: string[] = [];
  const facts: ExtractedFact[] = [];
  list.forEach((item: unknown, index) => {
    const path = `facts[${index}]`;
    if (!isRecord(item)) {
      problems.push(`${path} must be an object`);
      return;
    }
    const before = problems.length;
    const subject = readText(item.subject, `${path}.subject`, problems);
    const attribute = readText(item.attribute, `${path}.attribute`, problems);
    const key = attribute === undefined ? undefined : toSnakeCase(attribute);
    if (attribute !== undefined && key === '')
      problems.push(`${path}.attribute must contain letters or digits (got ${JSON.stringify(attribute)})`);
    const factValue = readText(item.value, `${path}.value`, problems);
    const text = readText(item.text, `${path}.text`, problems);
    const confidence = item.confidence;
    if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) {
      problems.push(`${path}.confidence must be a number from 0 to 1 (got ${JSON.stringify(confidence) ?? 'nothing'})`);
    }
    const sourceSeqs = readSourceSeqs(item.sourceSeqs, path, shownSeqs, problems);
    const polarity = item.polarity ?? 'assert';
    if (polarity !== 'assert' && polarity !== 'negate')
      problems.push(`${path}.polarity must be "assert" or "negate" (got ${JSON.stringify(polarity)})`);
    if (problems.length > before) return;
    facts.push({
      subject: userAliases.has(subject!.toLowerCase()) ? 'user' : subject!,
      attribute: key!,
      value: factValue!,
      text: text!,
      confidence: confidence as number,
      sourceSeqs: sourceSeqs!,
      polarity: polarity as 'assert' | 'negate',
    });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: facts };
}
