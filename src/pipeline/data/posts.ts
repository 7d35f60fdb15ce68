import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
import { nowIso } from '../time.js';
import { likeEscape, parseColumn } from './json.js';

export const POST_STATUSES = ['pending', 'approved', 'rejected', 'published', 'failed'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

interface PostRow {
  id: number;
  batch_id: string;
  status: PostStatus;
  content: string;
  thread: string;
  original_content: string | null;
  category: string;
  source_id: number | null;
  source_name: string | null;
  source_title: string | null;
  source_url: string | null;
  feedback: string | null;
  scheduled_for: string | null;
  published_at: string | null;
  external_id: string | null;
  external_ids: string;
  publish_attempts: number;
  publish_error: string | null;
  image_file: string | null;
  image_url: string | null;
  impressions: number;
  likes: number;
  retweets: number;
  replies: number;
  metrics_source: string | null;
  metrics_updated_at: string | null;
  model: string | null;
  reviewed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A post as the API shows it. */
export interface Post {
  id: number;
  batch_id: string;
  status: PostStatus;
  content: string;
  /** Follow-up parts when the post is a thread (the first part is `content`). */
  thread: string[];
  /** The model's text before a reviewer edited it; null when never edited. */
  original_content: string | null;
  category: string;
  source_id: number | null;
  source_name: string | null;
  source_title: string | null;
  source_url: string | null;
  feedback: string | null;
  scheduled_for: string | null;
  published_at: string | null;
  external_id: string | null;
  external_ids: string[];
  publish_attempts: number;
  publish_error: string | null;
  image_url: string | null;
  impressions: number;
  likes: number;
  retweets: number;
  replies: number;
  engagement_rate: number;
  metrics_source: string | null;
  metrics_updated_at: string | null;
  model: string | null;
  reviewed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface NewPost {
  batch_id: string;
  content: string;
  thread: string[];
  category: string;
  source_id: number | null;
  source_name: string | null;
  source_title: string | null;
  source_url: string | null;
  model: string | null;
}

export interface PostFilter {
  status?: PostStatus;
  batch_id?: string;
  search?: string;
  page: number;
  pageSize: number;
}

export interface PostChanges {
  status?: 'approved' | 'rejected';
  content?: string;
  thread?: string[];
  feedback?: string | null;
  scheduled_for?: string | null;
}

export interface Metrics {
  impressions: number;
  likes: number;
  retweets: number;
  replies: number;
}

export interface MetricsSnapshot extends Metrics {
  source: string;
  recorded_at: string;
}

/** (likes + retweets + replies) / impressions × 100, two decimals; 0 without impressions. */
export function engagementRate(m: Metrics): number {
  if (m.impressions <= 0) return 0;
  return Math.round(((m.likes + m.retweets + m.replies) / m.impressions) * 10_000) / 100;
}

function toPost(r: PostRow): Post {
  const { image_file: _file, thread, external_ids, ...rest } = r;
  return {
    ...rest,
    thread: parseColumn<string[]>(thread, []),
    external_ids: parseColumn<string[]>(external_ids, []),
    engagement_rate: engagementRate(r),
  };
}

export class PostsRepo {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async get(id: number): Promise<Post | undefined> {
    const r = await this.sql.get<PostRow>('SELECT * FROM posts WHERE id = ?', id);
    return r && toPost(r);
  }

  async imageFile(id: number): Promise<string | null> {
    const r = await this.sql.get<{ image_file: string | null }>('SELECT image_file FROM posts WHERE id = ?', id);
    return r?.image_file ?? null;
  }

  async list(f: PostFilter): Promise<{ items: Post[]; total: number }> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.status) {
      where.push('status = ?');
      args.push(f.status);
    }
    if (f.batch_id) {
      where.push('batch_id = ?');
      args.push(f.batch_id);
    }
    if (f.search) {
      // Case-insensitive in both databases (SQLite's LIKE is; PostgreSQL's is not).
      where.push("(lower(content) LIKE lower(?) ESCAPE '\\' OR lower(thread) LIKE lower(?) ESCAPE '\\' OR lower(source_title) LIKE lower(?) ESCAPE '\\')");
      const pattern = `%${likeEscape(f.search)}%`;
      args.push(pattern, pattern, pattern);
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = (await this.sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM posts ${clause}`, ...args))!.n;
    const rows = await this.sql.all<PostRow>(`SELECT * FROM posts ${clause} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, ...args, f.pageSize, (f.page - 1) * f.pageSize);
    return { items: rows.map(toPost), total };
  }

  /** Insert a batch of drafted posts (in the caller's transaction); returns their ids. */
  async insertMany(posts: NewPost[]): Promise<number[]> {
    const now = nowIso(this.clock);
    const ids: number[] = [];
    for (const p of posts) {
      ids.push(
        await this.sql.insert(
          `INSERT INTO posts (batch_id, status, content, thread, category, source_id, source_name, source_title, source_url, model, created_at, updated_at)
           VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          p.batch_id,
          p.content,
          JSON.stringify(p.thread),
          p.category,
          p.source_id,
          p.source_name,
          p.source_title,
          p.source_url,
          p.model,
          now,
          now,
        ),
      );
    }
    return ids;
  }

  async update(id: number, c: PostChanges): Promise<void> {
    const now = nowIso(this.clock);
    const sets: string[] = ['updated_at = ?'];
    const args: unknown[] = [now];
    if (c.status !== undefined) {
      sets.push('status = ?', 'reviewed_at = ?', 'publish_error = NULL', 'publish_attempts = 0');
      args.push(c.status, now);
    }
    if (c.content !== undefined) {
      // Keep the model's first text so reviewer edits can feed back into drafting.
      sets.push('original_content = COALESCE(original_content, content)', 'content = ?');
      args.push(c.content);
    }
    if (c.thread !== undefined) {
      sets.push('thread = ?');
      args.push(JSON.stringify(c.thread));
    }
    if (c.feedback !== undefined) {
      sets.push('feedback = ?');
      args.push(c.feedback);
    }
    if (c.scheduled_for !== undefined) {
      sets.push('scheduled_for = ?');
      args.push(c.scheduled_for);
    }
    await this.sql.run(`UPDATE posts SET ${sets.join(', ')} WHERE id = ?`, ...args, id);
  }

  async setImage(id: number, file: string | null, url: string | null): Promise<void> {
    await this.sql.run('UPDATE posts SET image_file = ?, image_url = ?, updated_at = ? WHERE id = ?', file, url, nowIso(this.clock), id);
  }

  /** Record a metrics snapshot and make it the post's current metrics. */
  async recordMetrics(id: number, m: Metrics, source: string): Promise<void> {
    const now = nowIso(this.clock);
    await this.sql.run(
      'INSERT INTO post_metrics (post_id, impressions, likes, retweets, replies, source, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      id,
      m.impressions,
      m.likes,
      m.retweets,
      m.replies,
      source,
      now,
    );
    await this.sql.run(
      'UPDATE posts SET impressions = ?, likes = ?, retweets = ?, replies = ?, metrics_source = ?, metrics_updated_at = ?, updated_at = ? WHERE id = ?',
      m.impressions,
      m.likes,
      m.retweets,
      m.replies,
      source,
      now,
      now,
      id,
    );
  }

  metricsHistory(id: number, limit = 100): Promise<MetricsSnapshot[]> {
    return this.sql.all<MetricsSnapshot>('SELECT impressions, likes, retweets, replies, source, recorded_at FROM post_metrics WHERE post_id = ? ORDER BY id DESC LIMIT ?', id, limit);
  }

  /** Approved posts whose scheduled time has come. */
  async dueForPublishing(nowIsoText: string, limit: number): Promise<Post[]> {
    return (
      await this.sql.all<PostRow>("SELECT * FROM posts WHERE status = 'approved' AND scheduled_for IS NOT NULL AND scheduled_for <= ? ORDER BY scheduled_for, id LIMIT ?", nowIsoText, limit)
    ).map(toPost);
  }

  /** Progress of a (thread) publication: ids of the parts already posted. */
  async recordPublishedParts(id: number, externalIds: string[]): Promise<void> {
    await this.sql.run('UPDATE posts SET external_ids = ?, external_id = ?, updated_at = ? WHERE id = ?', JSON.stringify(externalIds), externalIds[0] ?? null, nowIso(this.clock), id);
  }

  async markPublished(id: number, externalIds: string[]): Promise<void> {
    const now = nowIso(this.clock);
    await this.sql.run(
      "UPDATE posts SET status = 'published', published_at = ?, external_id = ?, external_ids = ?, publish_error = NULL, updated_at = ? WHERE id = ?",
      now,
      externalIds[0] ?? null,
      JSON.stringify(externalIds),
      now,
      id,
    );
  }

  async markPublishFailure(id: number, error: string, final: boolean): Promise<void> {
    await this.sql.run(
      `UPDATE posts SET publish_attempts = publish_attempts + 1, publish_error = ?, status = CASE WHEN ? = 1 THEN 'failed' ELSE status END, updated_at = ? WHERE id = ?`,
      error,
      final ? 1 : 0,
      nowIso(this.clock),
      id,
    );
  }

  /** Published posts with an external id, published at or after `sinceIso`. */
  async publishedSince(sinceIso: string): Promise<Post[]> {
    return (await this.sql.all<PostRow>("SELECT * FROM posts WHERE status = 'published' AND external_id IS NOT NULL AND published_at >= ? ORDER BY published_at DESC", sinceIso)).map(toPost);
  }

  /** Published posts (optionally since a time), best or worst engagement first, for proposals. */
  async rankedByEngagement(order: 'best' | 'worst', limit: number): Promise<Post[]> {
    const dir = order === 'best' ? 'DESC' : 'ASC';
    return (
      await this.sql.all<PostRow>(
        `SELECT * FROM posts WHERE status = 'published' AND impressions > 0
         ORDER BY CAST(likes + retweets + replies AS DOUBLE PRECISION) / impressions ${dir}, id DESC LIMIT ?`,
        limit,
      )
    ).map(toPost);
  }

  /** Recent reviewer feedback (rejections, edits, comments), newest first. */
  recentFeedback(limit: number): Promise<{ status: PostStatus; content: string; original_content: string | null; feedback: string | null }[]> {
    return this.sql.all(
      `SELECT status, content, original_content, feedback FROM posts
       WHERE (feedback IS NOT NULL AND feedback <> '') OR original_content IS NOT NULL OR status = 'rejected'
       ORDER BY COALESCE(reviewed_at, updated_at) DESC, id DESC LIMIT ?`,
      limit,
    );
  }

  async countCreatedSince(sinceIso: string): Promise<number> {
    return (await this.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM posts WHERE created_at >= ?', sinceIso))!.n;
  }

  async countByStatus(status: PostStatus): Promise<number> {
    return (await this.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM posts WHERE status = ?', status))!.n;
  }

  /** Rename a category on every post (in the caller's transaction). */
  async renameCategory(from: string, to: string): Promise<void> {
    await this.sql.run('UPDATE posts SET category = ? WHERE lower(category) = lower(?)', to, from);
  }
}
