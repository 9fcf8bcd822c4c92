import type { Child } from 'hono/jsx';

/** A column header: its label, right-aligned for numbers, hidden below 640 px when `narrow` is false. */
export type Column = string | { readonly label: string; readonly numeric?: boolean; readonly hideNarrow?: boolean };

/** A table in a box that scrolls sideways on its own on a narrow screen; `bodyData` adds `data-*` attributes to its body. */
export function DataTable({
  columns,
  children,
  bodyData = {},
}: {
  columns: readonly Column[];
  children?: Child;
  bodyData?: Readonly<Record<string, string>>;
}) {
  const body = Object.fromEntries(Object.entries(bodyData).map(([name, value]) => [`data-${name}`, value]));
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map((column) => {
              const {
                label,
                numeric = false,
                hideNarrow = false,
              } = typeof column === 'string' ? { label: column } : column;
              const classes = [numeric ? 'num' : '', hideNarrow ? 'hide-narrow' : '']
                .filter((name) => name !== '')
                .join(' ');
              return <th class={classes === '' ? undefined : classes}>{label}</th>;
            })}
          </tr>
        </thead>
        <tbody {...body}>{children}</tbody>
      </table>
    </div>
  );
}
