// The LoCoMo-format reader as a library entry (`mnemo/locomo`), so the benchmarks in bench/ read
// LoCoMo files with the same parser as `mnemo replay` and `mnemo bench locomo`.
export { locomoSecondsPerTurn, parseLocomoConversation, readLocomoSamples } from './parse-locomo-conversation.js';
export type { LocomoConversation, LocomoSource, LocomoTurn, ParseLocomoOptions } from './parse-locomo-conversation.js';
export { parseSessionDate, sessionDateExamples } from './parse-session-date.js';
export type { ParseSessionDateOptions, SlashOrder } from './parse-session-date.js';
