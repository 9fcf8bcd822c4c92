/** A column of {@link formatPlainTable}: a header, and right alignment for numbers. */
export interface PlainColumn {
  readonly header: string;
  readonly right?: boolean;
}

/** Lays out rows as an aligned plain-text table: a header line, two spaces between columns, no trailing spaces. */
export function formatPlainTable(columns: readonly PlainColumn[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, index) => Math.max(column.header.length, ...rows.map((row) => (row[index] ?? '').length)));
  const line = (cells: readonly string[]) =>
    columns
      .map((column, index) => (column.right === true ? (cells[index] ?? '').padStart(widths[index]!) : (cells[index] ?? '').padEnd(widths[index]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((column) => column.header)), ...rows.map(line)].join('\n');
}

/** A count with thousands separators, e.g. `12,345`. */
export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/** A percentage with one decimal, e.g. `73.0%` or `-16.6%`. */
export function formatPercent(value: number): string {
  return `${value.toFixed(1)}%`;
}
