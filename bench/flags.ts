// Reading a benchmark's command-line flags.

/** `value` of `flag` as an integer ≥ `minimum`; a RangeError naming the flag otherwise. */
export function countFlag(flag: string, value: string | undefined, minimum: number): number {
  const number = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || number < minimum)
    throw new RangeError(`${flag} must be an integer ≥ ${minimum} (got ${String(value)})`);
  return number;
}
