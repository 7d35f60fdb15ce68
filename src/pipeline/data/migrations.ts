import type { Migration } from '../../store/index.js';

/** Schema of `database/pipeline.db`. Times are ISO 8601 UTC text (sortable); JSON columns hold arrays/objects. */
export const PIPELINE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    up: `
CREATE TABLE categories (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  is_active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE sources (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  source_type TEXT NOT NULL CHECK (source_type IN ('hackernews', 'rss')),
  category TEXT NOT NULL DEFAULT '',
  is_active INTEGER NOT NULL DEFAULT 1,
  last_fetched_at TEXT,
  last_success_at TEXT,
  last_error TEXT,
  last_item_count INTEGER,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE runs (
  batch_id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  stage TEXT NOT NULL,
  model TEXT,
  post_count INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  error TEXT,
  started_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX runs_started ON runs(started_at);
CREATE TABLE posts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  batch_id TEXT NOT NULL,
  status TEXT NOT NULL,
  content TEXT NOT NULL,
  thread TEXT NOT NULL DEFAULT '[]',
  original_content TEXT,
  category TEXT NOT NULL DEFAULT '',
  source_id INTEGER,
  source_name TEXT,
  source_title TEXT,
  source_url TEXT,
  feedback TEXT,
  scheduled_for TEXT,
  published_at TEXT,
  external_id TEXT,
  external_ids TEXT NOT NULL DEFAULT '[]',
  publish_attempts INTEGER NOT NULL DEFAULT 0,
  publish_error TEXT,
  image_file TEXT,
  image_url TEXT,
  impressions INTEGER NOT NULL DEFAULT 0,
  likes INTEGER NOT NULL DEFAULT 0,
  retweets INTEGER NOT NULL DEFAULT 0,
  replies INTEGER NOT NULL DEFAULT 0,
  metrics_source TEXT,
  metrics_updated_at TEXT,
  model TEXT,
  reviewed_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX posts_status ON posts(status);
CREATE INDEX posts_batch ON posts(batch_id);
CREATE INDEX posts_created ON posts(created_at);
CREATE INDEX posts_published ON posts(published_at);
CREATE TABLE post_metrics (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
  impressions INTEGER NOT NULL,
  likes INTEGER NOT NULL,
  retweets INTEGER NOT NULL,
  replies INTEGER NOT NULL,
  source TEXT NOT NULL,
  recorded_at TEXT NOT NULL
);
CREATE INDEX post_metrics_post ON post_metrics(post_id, id);
CREATE TABLE used_items (
  key TEXT PRIMARY KEY,
  batch_id TEXT NOT NULL,
  used_at TEXT NOT NULL
);
CREATE TABLE style_versions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  config TEXT NOT NULL,
  origin TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE proposals (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  title TEXT NOT NULL,
  rationale TEXT NOT NULL,
  evidence TEXT NOT NULL DEFAULT '[]',
  current_value TEXT NOT NULL,
  proposed_value TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  model TEXT,
  style_version_id INTEGER,
  created_at TEXT NOT NULL,
  decided_at TEXT
);
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE activity (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  message TEXT NOT NULL,
  entity_type TEXT,
  entity_id TEXT,
  created_at TEXT NOT NULL
);
`,
  },
  {
    // List pages are ordered by (created_at, id), with optional status / batch filters.
    version: 2,
    up: `
DROP INDEX posts_status;
DROP INDEX posts_batch;
DROP INDEX posts_created;
CREATE INDEX posts_status_created ON posts(status, created_at, id);
CREATE INDEX posts_batch_created ON posts(batch_id, created_at, id);
CREATE INDEX posts_created_id ON posts(created_at, id);
`,
  },
];
