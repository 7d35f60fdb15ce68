import type { PgMigration } from '../../store/postgres.js';

/**
 * The pipeline's tables in the shared database (ctl.yaml `storage.postgres`): the SQLite schema of
 * migrations.ts with the prefix `pl_`, integer flags kept as 0/1, case-insensitive category names
 * unique through an index on lower(name), and `seq` on runs for the order rowid gives in SQLite.
 */
export const PIPELINE_SHARED_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    up: `
CREATE TABLE pl_categories (
  id BIGSERIAL PRIMARY KEY,
  name TEXT NOT NULL,
  is_active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX pl_categories_name ON pl_categories (lower(name));
CREATE TABLE pl_sources (
  id BIGSERIAL PRIMARY KEY,
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
CREATE TABLE pl_runs (
  batch_id TEXT PRIMARY KEY,
  seq BIGSERIAL,
  status TEXT NOT NULL,
  stage TEXT NOT NULL,
  model TEXT,
  post_count INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  error TEXT,
  started_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX pl_runs_started ON pl_runs(started_at);
CREATE TABLE pl_posts (
  id BIGSERIAL PRIMARY KEY,
  batch_id TEXT NOT NULL,
  status TEXT NOT NULL,
  content TEXT NOT NULL,
  thread TEXT NOT NULL DEFAULT '[]',
  original_content TEXT,
  category TEXT NOT NULL DEFAULT '',
  source_id BIGINT,
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
CREATE INDEX pl_posts_status_created ON pl_posts(status, created_at, id);
CREATE INDEX pl_posts_batch_created ON pl_posts(batch_id, created_at, id);
CREATE INDEX pl_posts_created_id ON pl_posts(created_at, id);
CREATE INDEX pl_posts_published ON pl_posts(published_at);
CREATE TABLE pl_post_metrics (
  id BIGSERIAL PRIMARY KEY,
  post_id BIGINT NOT NULL REFERENCES pl_posts(id) ON DELETE CASCADE,
  impressions INTEGER NOT NULL,
  likes INTEGER NOT NULL,
  retweets INTEGER NOT NULL,
  replies INTEGER NOT NULL,
  source TEXT NOT NULL,
  recorded_at TEXT NOT NULL
);
CREATE INDEX pl_post_metrics_post ON pl_post_metrics(post_id, id);
CREATE TABLE pl_used_items (
  key TEXT PRIMARY KEY,
  batch_id TEXT NOT NULL,
  used_at TEXT NOT NULL
);
CREATE TABLE pl_style_versions (
  id BIGSERIAL PRIMARY KEY,
  config TEXT NOT NULL,
  origin TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE pl_proposals (
  id BIGSERIAL PRIMARY KEY,
  type TEXT NOT NULL,
  title TEXT NOT NULL,
  rationale TEXT NOT NULL,
  evidence TEXT NOT NULL DEFAULT '[]',
  current_value TEXT NOT NULL,
  proposed_value TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  model TEXT,
  style_version_id BIGINT,
  created_at TEXT NOT NULL,
  decided_at TEXT
);
CREATE TABLE pl_settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE pl_images (
  name TEXT PRIMARY KEY,
  data BYTEA NOT NULL
);
CREATE TABLE pl_activity (
  id BIGSERIAL PRIMARY KEY,
  type TEXT NOT NULL,
  message TEXT NOT NULL,
  entity_type TEXT,
  entity_id TEXT,
  created_at TEXT NOT NULL
);
`,
  },
];
