import { describe, expect, it } from 'vitest';
import { formatCount, formatPercent, formatTable } from './format-table.js';

describe('formatTable', () => {
  it('pads columns to the widest cell and right-aligns numeric columns', () => {
    const text = formatTable(
      [{ header: 'policy' }, { header: 'sent', align: 'right' }],
      [
        ['full', '12,345'],
        ['token-window', '9'],
      ],
    );

    expect(text).toBe(['policy          sent', 'full          12,345', 'token-window       9', ''].join('\n'));
  });
});

describe('formatCount and formatPercent', () => {
  it('formats thousands and one decimal', () => {
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatPercent(26)).toBe('26.0%');
  });
});
