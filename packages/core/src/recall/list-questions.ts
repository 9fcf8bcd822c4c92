// A question asks for a list when the thing it asks about is plural ("What activities does Melanie
// partake in?", "What books has she read?"), when it asks where or what someone has done over time
// ("Where has Melanie camped?"), or when it counts ("How many times …"). Its answer is spread over
// several sessions, so recall spreads its hits (`listDiversity`).
const pluralAsked =
  /^\W*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:[\p{L}\p{N}+'-]+\s+){0,2}?[\p{L}]{3,}s\s+(?:do|does|did|has|have|had|is|are|was|were)\b/iu;
const overTime =
  /^\W*(?:what|where)\s+(?:has|have)\b|\bhow\s+many\b|\b(?:things|ways|activities|hobbies|places|events|items)\b/iu;

/** True when `query` asks for several things spread over time (a list, a count); see `listDiversity`. */
export function asksForList(query: string): boolean {
  return overTime.test(query) || pluralAsked.test(query);
}
