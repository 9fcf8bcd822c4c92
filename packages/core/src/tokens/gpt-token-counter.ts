import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import type { CountableMessage, TokenCounter } from './token-counter.js';

/** Encodings {@link createGptTokenCounter} knows. */
export type GptEncodingName = 'o200k_base' | 'cl100k_base';

/** Options of {@link createGptTokenCounter}. */
export interface GptTokenCounterOptions {
  /** Model the context is built for; picks the encoding. Unknown models get `o200k_base`. */
  readonly model?: string;
  /** Forces an encoding, overriding `model`. */
  readonly encoding?: GptEncodingName;
}

// OpenAI's published accounting (openai-cookbook, "How to count tokens with tiktoken"): every message
// costs 3 framing tokens plus its encoded fields, a name one more, and every reply is primed with 3.
const tokensPerMessage = 3;
const tokensPerName = 1;
const replyPrimingTokens = 3;
// Tool calls are serialized by the provider in a format it does not publish; a few framing tokens per
// call plus the encoded name, id and arguments is within a handful of tokens of what is billed.
const tokensPerToolCall = 4;

// Models that predate o200k_base. Everything newer, and every non-OpenAI model we cannot know, gets
// o200k_base: its counts are close for modern BPE vocabularies and it is the library's default.
const cl100kModel = /^(gpt-4(?!o|\.\d)(-|$)|gpt-4-turbo|gpt-3\.5|text-embedding-(ada|3)|davinci-002|babbage-002)/;

/** Picks the encoding for a model name: `cl100k_base` for GPT-4/3.5-era models, else `o200k_base`. */
export function encodingForModel(model: string | undefined): GptEncodingName {
  if (model === undefined) return 'o200k_base';
  return cl100kModel.test(model.toLowerCase()) ? 'cl100k_base' : 'o200k_base';
}

// Text such as "<|endoftext|>" in a user's message is text, not a control token: count it as text
// instead of throwing, so no user input can make counting fail.
const asPlainText = { disallowedSpecial: new Set<string>() };

/** A {@link TokenCounter} on gpt-tokenizer, counting chat messages as OpenAI bills them. */
export function createGptTokenCounter(options: GptTokenCounterOptions = {}): TokenCounter {
  const encoding = options.encoding ?? encodingForModel(options.model);
  const codec = encoding === 'cl100k_base' ? cl100k : o200k;
  const encode = (text: string): number[] => codec.encode(text, asPlainText);
  const countText = (text: string): number => (text.length === 0 ? 0 : encode(text).length);

  const countMessage = (message: CountableMessage): number => {
    let tokens = tokensPerMessage + countText(message.role) + countText(message.content);
    if (message.name !== undefined) tokens += tokensPerName + countText(message.name);
    if (message.toolCallId !== undefined) tokens += countText(message.toolCallId);
    for (const call of message.toolCalls ?? []) {
      tokens +=
        tokensPerToolCall + countText(call.id) + countText(call.function.name) + countText(call.function.arguments);
    }
    return tokens;
  };

  const truncateText = (text: string, maxTokens: number): string => {
    if (maxTokens <= 0) return '';
    const tokens = encode(text);
    if (tokens.length <= maxTokens) return text;
    let prefix = codec.decode(tokens.slice(0, maxTokens));
    // A cut inside a multi-byte character decodes to U+FFFD; drop it rather than send a broken glyph.
    while (prefix.endsWith('\uFFFD') && !text.startsWith(prefix)) prefix = prefix.slice(0, -1);
    return prefix;
  };

  return Object.freeze({ encoding, requestOverheadTokens: replyPrimingTokens, countText, countMessage, truncateText });
}
