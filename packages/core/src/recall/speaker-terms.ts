import type { Message } from '../messages/message.js';
import { keywordTerms } from './keyword-terms.js';
import type { SearchHit } from './search.js';

/** The words of a speaker's name as keyword terms (`"Mary-Ann O'Neil"` → `mary`, `ann`, `o'neil`); empty without a name. */
export function nameTerms(message: Message): string[] {
  return message.name === undefined ? [] : keywordTerms(message.name);
}

/**
 * The query terms that name a speaker of the candidate messages (a word of some hit's `name`). A question
 * such as "What did Caroline paint?" asks about Caroline's own messages, while the word "Caroline" in a
 * message's text mostly addresses her ("Thanks, Caroline!"): recall matches such terms against who spoke,
 * not against the text.
 */
export function speakerTerms(terms: readonly string[], hits: readonly SearchHit[]): Set<string> {
  const names = new Set(hits.flatMap((hit) => nameTerms(hit.message)));
  return new Set(terms.filter((term) => names.has(term)));
}

/** True when a word of the message's speaker name is one of `speakers`. */
export function spokenBy(message: Message, speakers: ReadonlySet<string>): boolean {
  return speakers.size > 0 && nameTerms(message).some((term) => speakers.has(term));
}
