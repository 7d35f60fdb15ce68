/**
 * notify.TmplText: expand the configured texts of one notification with 0.25's template data. The
 * first error is kept and every later text expands to "" (the notifier then fails the send, as a
 * template error is not one a retry can fix).
 */
import { templateData } from '../template/data.js';
import type { LabelSet } from '../labels.js';
import { groupStatus, type Notification, type NotifyAlert } from './types.js';

/** The labels (or annotations) every alert has with the same value. */
export function commonOf(alerts: readonly NotifyAlert[], pick: (a: NotifyAlert) => LabelSet): LabelSet {
  if (alerts.length === 0) return {};
  const out: LabelSet = { ...pick(alerts[0]!) };
  for (const a of alerts.slice(1)) {
    const ls = pick(a);
    for (const k of Object.keys(out)) if (ls[k] !== out[k]) delete out[k];
  }
  return out;
}

export interface Expander {
  /** The expanded text ("" once any expansion failed). */
  (text: string): string;
  /** The first error, if any. */
  readonly error: string | undefined;
  /** The template data (for texts called with something other than `.`). */
  readonly data: Record<string, unknown>;
}

let counter = 0;
const parsedNames = new WeakMap<object, Map<string, string>>();

export function expander(n: Notification, opts: { html?: boolean } = {}): Expander {
  const data = templateData({
    receiver: n.receiver,
    status: groupStatus(n.alerts),
    alerts: n.alerts.map((a) => ({ ...a, status: a.resolved ? 'resolved' : 'firing' })),
    groupLabels: n.groupLabels,
    commonLabels: commonOf(n.alerts, (a) => a.labels),
    commonAnnotations: commonOf(n.alerts, (a) => a.annotations),
    externalURL: n.externalURL,
  });
  let names = parsedNames.get(n.templates);
  if (!names) parsedNames.set(n.templates, (names = new Map()));
  let error: string | undefined;
  const fn = ((text: string): string => {
    if (error !== undefined) return '';
    if (text === '') return '';
    try {
      // Each distinct text is parsed once per template set, under a name no file can use.
      let name = names!.get(text);
      if (!name) {
        name = `\u0000text${++counter}`;
        n.templates.parse(name, text);
        names!.set(text, name);
      }
      return n.templates.execute(name, data, opts);
    } catch (e) {
      error = (e as Error).message;
      return '';
    }
  }) as Expander;
  Object.defineProperty(fn, 'error', { get: () => error });
  Object.defineProperty(fn, 'data', { value: data });
  return fn;
}
