// Whether a turn asks for something (decision 0043). A turn that asks ("when did I switch relays?",
// "remind me what the doctor said") is what recalled snippets answer; a turn that tells ("I switched to
// BEAR-CREEK", "thanks!") is answered from the recent turns, the summary and the facts. The hybrid
// context recalls for asking turns only by default, because snippets are the part of a prompt no
// provider cache ever holds. The test errs towards asking: a false "asks" costs one request's snippets,
// a false "tells" leaves out what the user asked about.

/** A question mark of any script: Latin, full-width (CJK), Spanish opening, Arabic. */
const questionMark = /[?？¿؟]/u;

const auxiliaries = 'am|is|are|was|were|do|does|did|have|has|had|can|could|will|would|shall|should|may|might|must';

/**
 * A sentence that opens with a question word: what (not "what a …!"), who or which at once; when, where
 * or why with an auxiliary right after it ("when did"); how with one within three words ("how well
 * did") or with many, much, long, often, old, far or come. A clause ("when I was younger, …") or an
 * exclamation ("how fun") does not ask.
 */
const questionWord = new RegExp(
  `^(?:what(?:'s|s|'re)?\\b(?!\\s+an?\\b)|(?:who|whom|whose|which)\\b|(?:when|where|why)(?:'s|'re|\\s+(?:${auxiliaries})\\b)|how\\s+(?:many|much|long|often|old|far|come)\\b|how(?:'s|'re|\\s+(?:[\\p{L}'-]+\\s+){0,2}?(?:${auxiliaries})\\b))`,
  'iu',
);

/**
 * A sentence that opens with a question word of Spanish (accented, so not "cuando …"), French or German
 * that only asks; chat users leave out question marks in every language.
 */
const otherLanguages =
  /^(?:qué|cuándo|dónde|adónde|quién|quiénes|cuál|cuáles|cómo|cuánt[oa]s?|por\s+qué|est-ce\s+que|pourquoi|où|wann|warum|wieso|weshalb|wo|wohin|woher|wer|welche[rsnm]?)(?=$|[^\p{L}])/iu;

/** A sentence that opens with an auxiliary before its subject ("did you", "is the relay", "can someone"). */
const invertedAuxiliary = new RegExp(
  `^(?:${auxiliaries})\\s+(?:i|you|he|she|it|we|they|there|this|that|these|those|my|your|his|her|its|our|their|the|anyone|anybody|someone|somebody|anything|something)\\b`,
  'iu',
);

/** An auxiliary before a name ("is BEAR-CREEK up"); tested with the sentence's first letter lower-cased. */
const auxiliaryBeforeName = new RegExp(`^(?:${auxiliaries})\\s+\\p{Lu}`, 'u');

/** A request to recall: "do you remember …" anywhere, or an imperative opening a sentence ("remind me", "remember when"). */
const recallQuestion = /\b(?:do|did|can|could)\s+you\s+(?:still\s+)?(?:remember|recall)\b/iu;
const recallImperative =
  /^(?:please\s+)?(?:remind\s+me|tell\s+me|remember\s+(?:when|what|where|who|which|how|the)|recall|look\s+up|list|summari[sz]e)\b/iu;

/**
 * True when `text` asks for something: a question mark, a sentence that opens with a question word or an
 * inverted auxiliary, or a request to recall.
 */
export function turnAsks(text: string): boolean {
  if (questionMark.test(text) || recallQuestion.test(text)) return true;
  return text
    .split(/[.!;:\n]+/u)
    .map((sentence) => sentence.replace(/^[^\p{L}]+/u, ''))
    .some(
      (sentence) =>
        questionWord.test(sentence) ||
        otherLanguages.test(sentence) ||
        invertedAuxiliary.test(sentence) ||
        recallImperative.test(sentence) ||
        auxiliaryBeforeName.test(sentence.charAt(0).toLowerCase() + sentence.slice(1)),
    );
}
