import type { MessageRole } from '../messages/message.js';

// Whole sentences that carry nothing a later turn needs, in the languages users of a bot commonly chat in.
const smallTalk =
  /^((hi|hello|hey|yo|hiya|howdy)( there| all| everyone| folks| friend| mate| bot)?|thanks?|thank you|thx|ty|ok|okay|k|cool|great|nice|awesome|perfect|lol|haha+|hehe|bye|goodbye|see ya|cya|cheers|sure|yes|yeah|yep|no|nope|got it|sounds good|good (morning|night|evening|afternoon)|you too|np|no problem|you're welcome|you are welcome|hallo|danke|tschüss|hola|gracias|adiós|bonjour|merci|salut|ciao|grazie|obrigad[oa]|olá|nice to meet you|how are you|how can i help( you)?( today)?|glad to help|happy to help|any time|anytime)\b(,?\s+\p{Lu}[\p{L}'-]*)?[\s!.,:;)(~-]*\p{Extended_Pictographic}*[\s!.]*$/iu;
const leadingFiller = /^((well|oh|so|um+|uh+|hmm+|haha+|lol|hey|ah|okay|ok|alright|yeah|btw|by the way|fyi),?\s+)+/i;

const numberPattern = /\d+(?:[.,:]\d+)*/g;
const datePattern =
  /\b(\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}(?:[./]\d{2,4})?|(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}|\d{1,2}\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|yesterday|tonight|next (week|month|year))\b/i;
const timePattern = /\b\d{1,2}(:\d{2})\s*(am|pm)?\b|\b\d{1,2}\s*(am|pm)\b/i;
// Ids: node ids like !a3f9c2d1, callsigns like KD2XYZ, order numbers: letters and digits mixed, or a sigil.
const idPattern =
  /(^|\s)([!#@][\w-]{2,}|(?=[A-Za-z-]*\d)(?=\d*[A-Za-z])[A-Za-z\d-]{4,}|\p{Lu}{2,}(?:-[\p{Lu}\d]{2,})+)/gu;
const amountPattern =
  /[$€£¥]\s?\d|\d\s?(mah|ah|wh|kwh|km|mi|miles|m|ft|kg|lb|v|w|db|dbm|%|°[cf]|mhz|ghz|khz|usd|eur|gbp|h|hours|min|minutes|days|weeks)\b/i;
const disclosure =
  /\b(my name|i am|i'm|im|call me|i live|i work|i prefer|i like|i love|i hate|i don't like|i dont like|i want|i need|i will|i'll|i have|i've got|we will|we'll|let's|decided|agreed|plan|planning|going to|remember|always|never|favou?rite|allergic|my|our|deadline|budget|appointment|booked|ordered|please|prefer|avoid|don't|do not|no more|from now on|called|named|cost|paid|bought|spent|due|renewal|mentor|friend|taught)\b/i;
const correction =
  /\b(actually|instead|changed?|moved|moving|postponed?|rescheduled|no longer|not anymore|update[ds]?|correction)\b/i;
const properName = /(?<=\s)\p{Lu}[\p{L}'-]+/gu;
// Readings and whereabouts that the next update replaces: worth less than a fact that stays true.
const transient =
  /\b(now|right now|currently|at the moment|so far|eta|today|tonight|this morning|this afternoon|this evening|this weekend|logged|reads?|reading|-?\d+(?:[.,]\d+)?\s?(?:%|db|dbm))(?=\W|$)/i;

const roleWeight: Record<MessageRole, number> = { user: 1.3, assistant: 1, tool: 0.6, system: 0.8 };

/** True for a sentence that is only a greeting, thanks or acknowledgement. */
export function isSmallTalk(sentence: string): boolean {
  return smallTalk.test(sentence.trim());
}

/** Removes leading interjections ("well, oh, so …") and folds white space. */
export function compressSentence(sentence: string): string {
  return sentence.replace(/\s+/g, ' ').trim().replace(leadingFiller, '');
}

/**
 * How much a later turn is likely to need a sentence: points for numbers, dates, times, ids, amounts,
 * names, self-disclosures (preferences, plans, commitments) and corrections; questions count half;
 * weighted by who said it. Small talk scores 0.
 */
export function scoreSentence(sentence: string, role: MessageRole): number {
  if (isSmallTalk(sentence)) return 0;
  const numbers = new Set(sentence.match(numberPattern) ?? []).size;
  const ids = [...sentence.matchAll(idPattern)].length;
  const names = new Set(sentence.match(properName) ?? []).size;
  let score = 0.5;
  score += 1.5 * Math.min(numbers, 3);
  score += datePattern.test(sentence) ? 3 : 0;
  score += timePattern.test(sentence) ? 1.5 : 0;
  score += 2.5 * Math.min(ids, 2);
  score += amountPattern.test(sentence) ? 2 : 0;
  score += 1.5 * Math.min(names, 3);
  score += disclosure.test(sentence) ? 4 : 0;
  score += correction.test(sentence) ? 2 : 0;
  if (sentence.trim().endsWith('?')) score *= 0.5;
  if (transient.test(sentence)) score *= 0.6;
  return score * roleWeight[role];
}
