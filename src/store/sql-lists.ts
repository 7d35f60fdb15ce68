/**
 * Lists as one parameter, for batch statements that read the same on either database (sql.ts): a
 * JSON array of objects as a table (`jsonRows`), or a JSON array of values to test a column against
 * (`among`). SQLite reads the JSON with `json_each`, PostgreSQL with `json_to_recordset` /
 * `json_array_elements_text`; the caller passes `JSON.stringify(list)` where the text has its `?`.
 */
import type { Sql } from './sql.js';

export type ColumnType = 'TEXT' | 'BIGINT' | 'INTEGER' | 'DOUBLE PRECISION';

/**
 * A JSON array of objects as the table `alias` with these columns, plus `ord`: the position in the
 * array (insert in the caller's order with `ORDER BY alias.ord`). One `?`. In an
 * `INSERT … SELECT … ON CONFLICT` write a `WHERE true` before the conflict clause (SQLite's parser).
 */
export function jsonRows(dialect: Sql['dialect'], alias: string, columns: Readonly<Record<string, ColumnType>>): string {
  const names = Object.keys(columns);
  if (dialect === 'sqlite') {
    const cols = names.map((c) => `json_extract(value, '$.${c}') AS ${c}`).join(', ');
    return `(SELECT ${cols}, key AS ord FROM json_each(?)) AS ${alias}`;
  }
  const defs = names.map((c) => `${c} ${columns[c]}`).join(', ');
  return `ROWS FROM (json_to_recordset(?::json) AS (${defs})) WITH ORDINALITY AS ${alias}(${names.join(', ')}, ord)`;
}

/** `column` is one of a JSON array of values (one `?`); `type` is the column's. */
export function among(dialect: Sql['dialect'], column: string, type: ColumnType = 'TEXT'): string {
  return dialect === 'sqlite' ? `${column} IN (SELECT value FROM json_each(?))` : `${column} IN (SELECT v::${type} FROM json_array_elements_text(?::json) AS v)`;
}
