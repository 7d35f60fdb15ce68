import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import { nowIso } from '../time.js';
import { parseColumn } from './json.js';

/** The style document as stored (one row per version). */
export interface StoredStyle {
  tone: string;
  topics: string[];
  use_hashtags: boolean;
  thread_style: boolean;
}

/** The style as the API shows it: `use_hashtags` ↔ `hashtag_policy`, `thread_style` ↔ `thread_preference`. */
export interface StyleView {
  id: number;
  version: number;
  tone: string;
  topics: string[];
  hashtag_policy: 'always' | 'never';
  thread_preference: boolean;
  /** What made this version: `default`, `api`, or `proposal:<id>`. */
  origin: string;
  updated_at: string;
}

/** The API fields a style update may carry. */
export interface StylePatch {
  tone?: string;
  topics?: string[];
  hashtag_policy?: 'always' | 'never';
  thread_preference?: boolean;
}

export const DEFAULT_STYLE: StoredStyle = { tone: 'informative and concise', topics: [], use_hashtags: false, thread_style: false };

interface StyleRow {
  id: number;
  config: string;
  origin: string;
  created_at: string;
}

export function flattenStyle(stored: StoredStyle): Omit<StyleView, 'id' | 'version' | 'origin' | 'updated_at'> {
  return {
    tone: stored.tone,
    topics: stored.topics,
    hashtag_policy: stored.use_hashtags ? 'always' : 'never',
    thread_preference: stored.thread_style,
  };
}

export function applyStylePatch(stored: StoredStyle, patch: StylePatch): StoredStyle {
  return {
    tone: patch.tone ?? stored.tone,
    topics: patch.topics ?? stored.topics,
    use_hashtags: patch.hashtag_policy === undefined ? stored.use_hashtags : patch.hashtag_policy === 'always',
    thread_style: patch.thread_preference ?? stored.thread_style,
  };
}

function readStored(text: string): StoredStyle {
  const raw = parseColumn<Partial<StoredStyle>>(text, {});
  return {
    tone: typeof raw.tone === 'string' ? raw.tone : DEFAULT_STYLE.tone,
    topics: Array.isArray(raw.topics) ? raw.topics.filter((t): t is string => typeof t === 'string') : [],
    use_hashtags: raw.use_hashtags === true,
    thread_style: raw.thread_style === true,
  };
}

function toView(r: StyleRow): StyleView {
  return { id: r.id, version: r.id, ...flattenStyle(readStored(r.config)), origin: r.origin, updated_at: r.created_at };
}

export class StyleRepo {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** Write version 1 (the defaults) when the table is empty. */
  ensureDefault(): void {
    const any = this.store.prepare('SELECT 1 FROM style_versions LIMIT 1').get();
    if (!any) this.insert(DEFAULT_STYLE, 'default');
  }

  private latestRow(): StyleRow {
    const r = this.store.prepare('SELECT * FROM style_versions ORDER BY id DESC LIMIT 1').get() as StyleRow | undefined;
    if (r) return r;
    this.ensureDefault();
    return this.store.prepare('SELECT * FROM style_versions ORDER BY id DESC LIMIT 1').get() as StyleRow;
  }

  current(): StyleView {
    return toView(this.latestRow());
  }

  currentStored(): StoredStyle {
    return readStored(this.latestRow().config);
  }

  /** Apply a patch to the latest version and store the result as a new version. */
  update(patch: StylePatch, origin: string): StyleView {
    return this.store.transaction(() => {
      const next = applyStylePatch(this.currentStored(), patch);
      const id = this.insert(next, origin);
      return toView(this.store.prepare('SELECT * FROM style_versions WHERE id = ?').get(id) as StyleRow);
    });
  }

  history(limit: number): StyleView[] {
    return (this.store.prepare('SELECT * FROM style_versions ORDER BY id DESC LIMIT ?').all(limit) as StyleRow[]).map(toView);
  }

  private insert(style: StoredStyle, origin: string): number {
    return Number(
      this.store
        .prepare('INSERT INTO style_versions (config, origin, created_at) VALUES (?, ?, ?)')
        .run(JSON.stringify(style), origin, nowIso(this.clock)).lastInsertRowid,
    );
  }
}
