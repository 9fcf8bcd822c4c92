/** Orders two strings by UTF-16 code units, as `<` does (not by locale): a stable order for ids, ISO times and keys. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
