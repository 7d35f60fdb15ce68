import { expect } from 'vitest';

/**
 * The contract of the daemon's whole-number environment settings (src/daemon/env-number.ts):
 * unset or blank gives the default, 0 and other whole numbers are read as given, anything else is
 * an error naming the unit.
 */
export function expectWholeNumberSetting(read: (env: NodeJS.ProcessEnv) => number, name: string, fallback: number, unit: string): void {
  expect(read({})).toBe(fallback);
  expect(read({ [name]: ' ' })).toBe(fallback);
  expect(read({ [name]: '0' })).toBe(0);
  expect(read({ [name]: '250' })).toBe(250);
  for (const bad of ['8MB', '-1', '1.5', 'x']) expect(() => read({ [name]: bad }), bad).toThrow(new RegExp(`${name} must be a whole number of ${unit}`));
}
