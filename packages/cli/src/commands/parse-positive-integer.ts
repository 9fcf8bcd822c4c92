import { InvalidArgumentError } from 'commander';

/** Parses an option value as an integer ≥ 1 for commander, which reports a bad value as a usage error. */
export function parsePositiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(number) || number < 1) {
    throw new InvalidArgumentError('must be a positive integer.');
  }
  return number;
}
