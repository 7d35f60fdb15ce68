import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
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
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /** Write version 1 (the defaults) when the table is empty. */
  async ensureDefault(): Promise<void> {
    const any = await this.sql.get('SELECT 1 FROM style_versions LIMIT 1');
    if (!any) await this.insert(DEFAULT_STYLE, 'default');
  }

  private async latestRow(): Promise<StyleRow> {
    const r = await this.sql.get<StyleRow>('SELECT * FROM style_versions ORDER BY id DESC LIMIT 1');
    if (r) return r;
    await this.ensureDefault();
    return (await this.sql.get<StyleRow>('SELECT * FROM style_versions ORDER BY id DESC LIMIT 1'))!;
  }

  async current(): Promise<StyleView> {
    return toView(await this.latestRow());
  }

  async currentStored(): Promise<StoredStyle> {
    return readStored((await this.latestRow()).config);
  }

  /** Apply a patch to the latest version and store the result as a new version. */
  update(patch: StylePatch, origin: string): Promise<StyleView> {
    return this.sql.transaction(async (tx) => {
      const repo = new StyleRepo(tx, this.clock);
      const next = applyStylePatch(await repo.currentStored(), patch);
      const id = await repo.insert(next, origin);
      return toView((await tx.get<StyleRow>('SELECT * FROM style_versions WHERE id = ?', id))!);
    });
  }

  async history(limit: number): Promise<StyleView[]> {
    return (await this.sql.all<StyleRow>('SELECT * FROM style_versions ORDER BY id DESC LIMIT ?', limit)).map(toView);
  }

  private insert(style: StoredStyle, origin: string): Promise<number> {
    return this.sql.insert('INSERT INTO style_versions (config, origin, created_at) VALUES (?, ?, ?)', JSON.stringify(style), origin, nowIso(this.clock));
  }
}
