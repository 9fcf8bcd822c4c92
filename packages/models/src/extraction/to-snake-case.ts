/**
 * Normalizes a key a model wrote (`Home Town`, `homeTown`, `home-town`) to snake_case (`home_town`):
 * lower case, words joined by one underscore, other characters dropped; letters of any script are kept.
 * Returns `''` when nothing is left.
 */
export function toSnakeCase(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}
