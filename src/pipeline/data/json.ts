/** Parse a JSON column written by this component; a damaged value reads as the fallback instead of throwing. */
export function parseColumn<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** Escape `%`, `_` and `\` for a LIKE pattern used with `ESCAPE '\'`. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => '\\' + c);
}
