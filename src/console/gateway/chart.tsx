// A uPlot time-series chart that follows its container's width and the colour theme.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Series {
  label: string;
  values: (number | null)[];
  /** Index into the palette. */
  color?: number;
  /** Value formatter for the legend and the axis. */
  fmt?: (v: number) => string;
}

const PALETTE = ['--c1', '--c2', '--c3', '--c4', '--c5', '--c6'];

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

/** Re-render when the theme changes (the page's toggle, or the system's preference). */
function useThemeTick(): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const bump = () => setTick((t) => t + 1);
    const mq = matchMedia('(prefers-color-scheme: dark)');
    mq.addEventListener('change', bump);
    addEventListener('ctl-theme', bump);
    return () => {
      mq.removeEventListener('change', bump);
      removeEventListener('ctl-theme', bump);
    };
  }, []);
  return tick;
}

/** Tick steps for counts (requests, tokens, milliseconds): whole numbers only. */
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9];

export function Chart({ title, times, series, height = 220, whole = false }: { title: string; times: number[]; series: Series[]; height?: number; whole?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const theme = useThemeTick();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const fg = cssVar('--muted', '#666');
    const grid = cssVar('--border', '#ddd');
    const fmt = series[0]?.fmt ?? ((v: number) => String(v));
    const opts: uPlot.Options = {
      title,
      width: Math.max(260, el.clientWidth),
      height,
      series: [
        {},
        ...series.map((s, i) => {
          const color = cssVar(PALETTE[(s.color ?? i) % PALETTE.length]!, '#3b82f6');
          return { label: s.label, stroke: color, fill: series.length === 1 ? color + '22' : undefined, width: 2, value: (_u: uPlot, v: number | null) => (v === null ? '—' : (s.fmt ?? fmt)(v)) };
        }),
      ],
      axes: [
        { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
        { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, values: (_u, vals) => vals.map((v) => fmt(v)), size: 64, ...(whole ? { incrs: WHOLE } : {}) },
      ],
      scales: { y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
      cursor: { drag: { x: false, y: false } },
    };
    const plot = new uPlot(opts, [times, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(260, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [times, series, theme, height, title, whole]);
  return <div class="chart" ref={box} role="img" aria-label={`${title} chart`} />;
}
