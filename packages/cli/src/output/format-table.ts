/** A column of {@link formatTable}: numbers are usually right-aligned. */
export interface TableColumn {
  readonly header: string;
  readonly align?: 'left' | 'right';
}

/** Lays out rows of cells as a plain-text table with a header line, two spaces between columns, no trailing spaces. */
export function formatTable(columns: readonly TableColumn[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...rows.map((row) => (row[index] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    columns
      .map((column, index) => {
        const cell = cells[index] ?? '';
        return column.align === 'right' ? cell.padStart(widths[index]!) : cell.padEnd(widths[index]!);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((column) => column.header)), ...rows.map(line)].join('\n') + '\n';
}

/** A count with thousands separators, e.g. `12,345`. */
export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/** A percentage with one decimal, e.g. `73.0%`. */
export function formatPercent(value: number): string {
  return `${value.toFixed(1)}%`;
}
