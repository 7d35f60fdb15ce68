/**
 * `ctl top`: a dashboard of the whole daemon over the control socket, refreshed every second (ink).
 * Keys: 1–4 or Tab switch panes (overview, alerts, gateway, listeners), q quits. `--once` prints
 * the overview once, as plain text, for scripts; with `-o json|yaml` the snapshot behind it as data.
 */
import type { Command } from 'commander';
import { outputFormat, printData } from '../output.js';
import { action, UsageError } from '../run.js';
import { frame, PANES, type Pane } from './frame.js';
import { collect, type Snapshot } from './snapshot.js';

export function register(program: Command): void {
  program
    .command('top')
    .description('dashboard of the daemon: listeners, alerts, gateway traffic and breakers, nodes, pipeline (q quits)')
    .option('--once', 'print one frame of the overview and exit')
    .option('--interval <seconds>', 'refresh interval', '1')
    .option('--pane <name>', `pane to start on: ${PANES.join(', ')}`, 'overview')
    .action(
      action(async (opts: { once?: boolean; interval: string; pane: string }) => {
        const interval = Number(opts.interval);
        if (!(interval >= 0.2)) throw new UsageError('--interval must be a number of seconds >= 0.2');
        if (!(PANES as readonly string[]).includes(opts.pane)) throw new UsageError(`--pane must be one of ${PANES.join(', ')}`);
        if (outputFormat() !== 'table' && !opts.once) throw new UsageError(`-o ${outputFormat()} prints one snapshot: add --once`);
        if (opts.once) {
          const snap = await collect();
          if (snap.errors.daemon && /cannot reach the ctl daemon/.test(snap.errors.daemon)) throw new UsageError(snap.errors.daemon);
          if (outputFormat() !== 'table') return printData(snapshotData(snap));
          process.stdout.write(frame(snap, undefined, opts.pane as Pane).map((l) => l.text).join('\n') + '\n');
          return;
        }
        await live(interval, opts.pane as Pane);
      }),
    );
}

/** The snapshot as plain data (times as ISO strings, the latency histogram as an object). */
export function snapshotData(s: Snapshot): Record<string, unknown> {
  const { gateway, ...rest } = s;
  return {
    ...rest,
    at: new Date(s.at).toISOString(),
    ...(gateway ? { gateway: { ...gateway, buckets: Object.fromEntries([...gateway.buckets].map(([le, n]) => [String(le), n])) } } : {}),
  };
}

async function live(interval: number, start: Pane): Promise<void> {
  // ink decides once, when it loads, that a CI variable in the environment means "draw only the
  // last frame on exit" (for build logs). A live dashboard on a terminal must draw every frame,
  // so the variable is hidden from ink when stdout is a terminal (a shell that exports CI=true
  // would otherwise show a blank screen until q).
  if (process.stdout.isTTY) {
    delete process.env.CI;
    delete process.env.CONTINUOUS_INTEGRATION;
  }
  const React = (await import('react')).default;
  const { render, Box, Text, useApp, useInput, useStdin } = await import('ink');
  const h = React.createElement;

  function Top(): React.ReactElement {
    const { exit } = useApp();
    const { isRawModeSupported } = useStdin();
    const [pane, setPane] = React.useState<Pane>(start);
    const [snaps, setSnaps] = React.useState<{ now?: Snapshot; prev?: Snapshot }>({});
    useInput(
      (input, key) => {
        if (input === 'q' || (key.ctrl && input === 'c')) exit();
        const n = Number(input);
        if (n >= 1 && n <= PANES.length) setPane(PANES[n - 1]!);
        if (key.tab) setPane((p) => PANES[(PANES.indexOf(p) + 1) % PANES.length]!);
      },
      { isActive: isRawModeSupported === true },
    );
    React.useEffect(() => {
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const tick = async () => {
        const s = await collect();
        if (stopped) return;
        setSnaps((old) => ({ now: s, prev: old.now }));
        timer = setTimeout(() => void tick(), interval * 1000);
      };
      void tick();
      return () => {
        stopped = true;
        clearTimeout(timer);
      };
    }, []);
    const tabs = PANES.map((p, i) => (p === pane ? `[${i + 1} ${p}]` : ` ${i + 1} ${p} `)).join(' ');
    const lines = snaps.now ? frame(snaps.now, snaps.prev, pane) : [{ text: 'connecting...', dim: true }];
    return h(
      Box,
      { flexDirection: 'column' },
      h(Text, { bold: true, color: 'cyan' }, tabs),
      ...lines.map((l, i) => h(Text, { key: i, color: l.color, bold: l.bold, dimColor: l.dim }, l.text)),
      h(Text, { dimColor: true }, `every ${interval}s  ${snaps.now ? new Date(snaps.now.at).toLocaleTimeString() : ''}${isRawModeSupported ? '  1-4/Tab panes  q quit' : ''}`),
    );
  }

  const app = render(h(Top));
  await app.waitUntilExit();
}
