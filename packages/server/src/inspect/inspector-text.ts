/** How the inspector writes numbers, times and ages: the same way on every view, in English. */

const integerFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** 12,345 */
export function formatCount(value: number): string {
  return integerFormat.format(value);
}

/** An ISO time as `2024-05-08 13:56 UTC` (the store keeps UTC; the page does not guess a zone). */
export function formatTime(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** A duration in ms as `45 s`, `12 min`, `3 h 5 min` or `2 d 4 h`. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** Dollars for `tokens` at `pricePerMillion` dollars per million tokens: `$0.0123` below a dollar, else `$12.35`. */
export function formatDollars(tokens: number, pricePerMillion: number): string {
  const dollars = (tokens * pricePerMillion) / 1_000_000;
  const digits = Math.abs(dollars) < 1 && dollars !== 0 ? 4 : 2;
  return `${dollars < 0 ? '−' : ''}$${Math.abs(dollars).toFixed(digits)}`;
}

/** A score with 4 significant decimals, or an em dash when absent. */
export function formatScore(value: number | undefined): string {
  return value === undefined ? '—' : value.toFixed(4);
}
