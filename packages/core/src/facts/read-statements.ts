/** A sentence a user stated, ready for pattern matching. */
export interface Statement {
  /** The sentence verbatim (trimmed): what a fact's `text` keeps. */
  readonly text: string;
  /**
   * The same sentence, same length, with what is not the speaker's own claim blanked out: quoted
   * passages, and everything after a reporting verb ("Tomas said …"). Curly apostrophes become `'`.
   * Patterns match here; values are sliced from `text` at the same offsets.
   */
  readonly match: string;
}

// "Mt. Hood", "Dr. Lee", "e.g. this": a period after these does not end a sentence.
const abbreviations =
  /(?:^|\s)(?:mt|mr|mrs|ms|dr|st|sr|jr|prof|vs|etc|approx|ca|no|e\.g|i\.e|z\.b|bzw|usw|sra?|mme|mlle)\.$/i;
const questionWord =
  /^(?:what|what's|whats|where|where's|when|when's|who|who's|whom|whose|which|why|how|how's|wie|wo|wann|warum|welche[rsmn]?|qué|dónde|cuándo|cómo|quién|cuál|où|quand|comment|pourquoi|quel|quelle|quels|quelles|est-ce)\b/i;
const auxiliaryQuestion =
  /^(?:do|does|did|can|could|should|would|will|is|are|am|was|were|shall|may|have|has|isn't|aren't|don't|doesn't|didn't|can't|won't|hast|hat|ist|sind|kannst|kann|puedes|puede|es|est)\s+(?:i|you|we|they|he|she|it|my|your|our|this|that|there|the|du|ich|es|tu|vous|il|elle)\b/i;
// Conditionals, wishes and musings are not claims about how things are.
const hypothetical =
  /\b(?:if|would|wouldn't|could|might|maybe|perhaps|probably|suppose|supposing|imagine|hypothetically|wish|unless|whether|i'd|i think|i guess|i suppose|i feel like|thinking (?:of|about)|considering|wondering|what if|wenn|falls|würde|vielleicht|si|quizás|quizá|tal vez|peut-être)\b/i;
// From a reporting verb on, the words are someone else's claim.
const reportingVerb =
  /\b(?:said|says|told me|tells me|asked|asks|wrote|writes|claims|claimed|thinks|thought|believes|according to|sagt|sagte|meint|dice|dijo|dit|a dit)\b/i;
const quoted = /"[^"]*"|“[^”]*”|„[^“”]*[“”]|«[^»]*»|‘[^’]*’/g;

/**
 * Splits a message into sentences and keeps the statements: questions (a `?`, a leading `¿`, a
 * question word or an inverted auxiliary: "is my relay …"), hypotheticals ("if", "would", "maybe",
 * "thinking of …") and empty sentences are dropped. Sentences end at `.`, `!`, `?` or `…` followed by
 * white space, or at a line break, except after abbreviations such as "Mt." — so "!a3f9c2d1" and "3.7"
 * stay whole. Deterministic.
 */
export function readStatements(content: string): Statement[] {
  const statements: Statement[] = [];
  for (const sentence of splitSentences(content)) {
    const text = sentence.trim();
    if (text.length === 0 || isQuestion(text)) continue;
    const whole = blankOthersWords(text.replace(/’/g, "'"));
    const end = claimEnd(whole);
    const match = whole.slice(0, end);
    if (hypothetical.test(match)) continue;
    statements.push({ text: text.slice(0, end), match });
  }
  return statements;
}

// "… is due 2026-03-15, remind me if it comes up", "…, if you need it": a trailing clause that is a
// condition or a request leaves the claim before it standing.
const trailingCondition =
  /,\s+(?:(?:and |but |so )?(?:remind me|let me know|tell me|ping me)\b|(?:if|unless|in case)\b)[^,]*$/i;

/** Where the claim of a sentence ends: before a trailing conditional or request clause, when the claim itself is not hypothetical. */
function claimEnd(match: string): number {
  const trailing = trailingCondition.exec(match);
  return trailing === null || hypothetical.test(match.slice(0, trailing.index)) ? match.length : trailing.index;
}

function splitSentences(content: string): string[] {
  const sentences: string[] = [];
  for (const line of content.split(/\r?\n+/)) {
    let start = 0;
    for (const end of line.matchAll(/[.!?…]+(?=\s)/g)) {
      const stop = end.index + end[0].length;
      if (end[0] === '.' && abbreviations.test(line.slice(start, stop))) continue;
      sentences.push(line.slice(start, stop));
      start = stop;
    }
    sentences.push(line.slice(start));
  }
  return sentences;
}

function isQuestion(text: string): boolean {
  const bare = text.replace(/[\s\p{Extended_Pictographic})\]"'”’]+$/u, '');
  return bare.endsWith('?') || bare.startsWith('¿') || questionWord.test(bare) || auxiliaryQuestion.test(bare);
}

function blankOthersWords(text: string): string {
  const unquoted = text.replace(quoted, (passage) => ' '.repeat(passage.length));
  const reported = reportingVerb.exec(unquoted);
  return reported === null
    ? unquoted
    : unquoted.slice(0, reported.index) + ' '.repeat(unquoted.length - reported.index);
}
