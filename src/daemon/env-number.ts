/** A whole, non-negative number from an environment variable; unset or blank gives `fallback`. */
export function wholeNumberFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, what: string): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of ${what}, not ${JSON.stringify(raw)}`);
  return n;
}
