/**
 * Finding programs on this machine: a binary on PATH (executable files only), how it runs (a native
 * executable, or a script and its interpreter from the #! line), and its version from running it with
 * version arguments — always as an argument vector (never a shell), with a timeout and bounded output.
 */
import { execFile } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join } from 'node:path';

export interface Detection {
  installed: boolean;
  runnable: boolean;
  command: string;
  commandPath: string | null;
  version: string | null;
  /** `native`, `node`, `python`, `bun`, `deno`, `shell`, or the interpreter named by the #! line. */
  runtimeMode: string | null;
  reason: string | null;
}

/** The first executable file named `command` on PATH (or the path itself when absolute). */
export function which(command: string, path: string | undefined): string | null {
  const candidates = isAbsolute(command) ? [command] : (path ?? '').split(delimiter).filter(Boolean).map((d) => join(d, command));
  for (const c of candidates) {
    try {
      if (!statSync(c).isFile()) continue;
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return null;
}

/** How a file runs: a #! line names its interpreter; anything else is taken as a native executable. */
export function runtimeModeOf(file: string): string {
  const buf = Buffer.alloc(128);
  let n = 0;
  const fd = openSync(file, 'r');
  try {
    n = readSync(fd, buf, 0, buf.length, 0);
  } finally {
    closeSync(fd);
  }
  const head = buf.subarray(0, n).toString('latin1');
  if (!head.startsWith('#!')) return 'native';
  const line = head.slice(2).split('\n')[0]!.trim().split(/\s+/);
  // `#!/usr/bin/env node` names the interpreter as env's argument.
  const interp = basename(line[0] === '/usr/bin/env' || line[0]?.endsWith('/env') ? (line.find((x, i) => i > 0 && !x.startsWith('-')) ?? 'env') : (line[0] ?? 'unknown'));
  if (/^node(js)?$/.test(interp)) return 'node';
  if (/^python[0-9.]*$/.test(interp)) return 'python';
  if (/^(ba|z|da|k)?sh$/.test(interp)) return 'shell';
  return interp;
}

const VERSION = /\bv?(\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.-]+)?)\b/;

/** Run `file args` (no shell) and answer its exit and output; never throws. */
export function runQuiet(file: string, args: readonly string[], timeoutMs: number, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; error: string | null }> {
  return new Promise((resolve) => {
    execFile(file, [...args], { timeout: timeoutMs, maxBuffer: 64 * 1024, env, windowsHide: true, shell: false }, (err, stdout, stderr) => {
      const out = `${stdout}\n${stderr}`.trim();
      if (!err) return resolve({ code: 0, out, error: null });
      const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string; signal?: string };
      if (e.killed || e.signal === 'SIGTERM') return resolve({ code: null, out, error: `no answer within ${timeoutMs} ms` });
      resolve({ code: typeof e.code === 'number' ? e.code : null, out, error: typeof e.code === 'number' ? `exited ${e.code}${out ? `: ${out.split('\n')[0]!.slice(0, 200)}` : ''}` : e.message });
    });
  });
}

/** Detect one program: where it is, how it runs, whether `versionArgs` runs, and its version. */
export async function detect(command: string, versionArgs: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 5000): Promise<Detection> {
  const path = which(command, env.PATH);
  if (!path) return { installed: false, runnable: false, command, commandPath: null, version: null, runtimeMode: null, reason: `${command} not found on PATH` };
  let mode: string;
  try {
    mode = runtimeModeOf(path);
  } catch (e) {
    return { installed: true, runnable: false, command, commandPath: path, version: null, runtimeMode: null, reason: `cannot read ${path}: ${(e as Error).message}` };
  }
  const r = await runQuiet(path, versionArgs, timeoutMs, env);
  const version = VERSION.exec(r.out)?.[1] ?? null;
  return { installed: true, runnable: r.code === 0, command, commandPath: path, version, runtimeMode: mode, reason: r.code === 0 ? null : r.error };
}
