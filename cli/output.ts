/** Output formats shared by every command: human tables by default, `-o json|yaml` for scripts. */
export type OutputFormat = 'table' | 'json' | 'yaml';

let format: OutputFormat = 'table';

export function setOutputFormat(f: OutputFormat): void {
  format = f;
}

export function outputFormat(): OutputFormat {
  return format;
}

export async function printData(data: unknown): Promise<void> {
  if (format === 'yaml') {
    const YAML = (await import('yaml')).default;
    process.stdout.write(YAML.stringify(data));
  } else {
    process.stdout.write(JSON.stringify(data, null, 2) + '\n');
  }
}

export interface Column<T> {
  header: string;
  get: (row: T) => unknown;
}

function cell(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v).replace(/\s*\n\s*/g, ' ');
}

/** A plain aligned table (no colours, so it pipes cleanly). */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((r) => columns.map((c) => cell(c.get(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) => vals.map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** Print rows as a table, or the raw data as JSON/YAML when asked. */
export async function printRows<T>(rows: readonly T[], columns: readonly Column<T>[], raw: unknown = rows): Promise<void> {
  if (format === 'table') process.stdout.write(renderTable(rows, columns));
  else await printData(raw);
}

/** Key/value block for one object in table mode. */
export async function printObject(pairs: [string, unknown][], raw: unknown): Promise<void> {
  if (format !== 'table') return printData(raw);
  const w = Math.max(...pairs.map(([k]) => k.length));
  process.stdout.write(pairs.map(([k, v]) => `${(k + ':').padEnd(w + 1)} ${cell(v)}`).join('\n') + '\n');
}
