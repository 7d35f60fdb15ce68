/** Request and response schemas of the pipeline API (TypeBox = JSON Schema; also the OpenAPI components). */
import { Type, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
/** A string enum as `{type: string, enum: [...]}` (clear validation messages, plain OpenAPI). */
const StringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
const Iso = (description: string) => Type.String({ format: 'date-time', description });
const Count = Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 });

export const ErrorBody = Type.Object({ detail: Type.String() }, { title: 'Error' });

export const LoginBody = Type.Object({ password: Type.String({ maxLength: 1024 }) }, { additionalProperties: false });
export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer({ description: 'seconds; 86400' }),
});
export const ScheduleState = Type.Object({
  job: StringEnum(['run', 'metrics', 'proposals'] as const),
  schedule: Type.String({ description: 'cron expression from ctl.yaml pipeline.schedules' }),
  next_run_at: Iso('when it runs next'),
  last_run_at: Type.Union([Iso('when it last ran'), Type.Null()]),
  last_status: Type.Union([StringEnum(['ok', 'failed', 'skipped'] as const), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  running: Type.Boolean(),
});
export const Health = Type.Object({
  status: Type.Literal('healthy'),
  version: Type.String(),
  timestamp: Iso('server time'),
  schedules: Type.Array(ScheduleState, { description: 'scheduled jobs (empty when none is configured)' }),
});

export const PostStatus = StringEnum(['pending', 'approved', 'rejected', 'published', 'failed'] as const);
export const Post = Type.Object({
  id: Type.Integer(),
  batch_id: Type.String(),
  status: PostStatus,
  content: Type.String({ description: 'the post, or the first part of a thread' }),
  thread: Type.Array(Type.String(), { description: 'follow-up parts of a thread (empty for a single post)' }),
  original_content: Nullable(Type.String({ description: 'the drafted text before a reviewer edit' })),
  category: Type.String(),
  source_id: Nullable(Type.Integer()),
  source_name: Nullable(Type.String()),
  source_title: Nullable(Type.String()),
  source_url: Nullable(Type.String()),
  feedback: Nullable(Type.String()),
  scheduled_for: Nullable(Iso('publication time (UTC)')),
  published_at: Nullable(Iso('when it was published')),
  external_id: Nullable(Type.String({ description: 'tweet id of the first part' })),
  external_ids: Type.Array(Type.String()),
  publish_attempts: Type.Integer(),
  publish_error: Nullable(Type.String()),
  image_url: Nullable(Type.String()),
  impressions: Type.Integer(),
  likes: Type.Integer(),
  retweets: Type.Integer(),
  replies: Type.Integer(),
  engagement_rate: Type.Number({ description: '(likes + retweets + replies) / impressions × 100' }),
  metrics_source: Nullable(Type.String()),
  metrics_updated_at: Nullable(Type.String()),
  model: Nullable(Type.String()),
  reviewed_at: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const PostList = Type.Object({
  items: Type.Array(Post),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});
export const PostUpdate = Type.Object(
  {
    status: Type.Optional(StringEnum(['approved', 'rejected'] as const)),
    content: Type.Optional(Type.String({ minLength: 1, maxLength: 25_000 })),
    thread: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 25_000 }), { maxItems: 24 })),
    feedback: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
    scheduled_for: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'ISO 8601 date-time; no zone means UTC' }))),
  },
  { additionalProperties: false },
);
export const ImageUploaded = Type.Object({ message: Type.String(), image_url: Type.String() });
export const MetricsBody = Type.Object(
  {
    impressions: Type.Optional(Count),
    likes: Type.Optional(Count),
    retweets: Type.Optional(Count),
    replies: Type.Optional(Count),
  },
  { additionalProperties: false, minProperties: 1 },
);
const MetricsValues = {
  impressions: Type.Integer(),
  likes: Type.Integer(),
  retweets: Type.Integer(),
  replies: Type.Integer(),
};
export const PostMetrics = Type.Object({
  post_id: Type.Integer(),
  ...MetricsValues,
  engagement_rate: Type.Number(),
  source: Nullable(Type.String({ description: 'manual or x' })),
  updated_at: Nullable(Type.String()),
  history: Type.Array(Type.Object({ ...MetricsValues, source: Type.String(), recorded_at: Type.String() })),
});
export const MetricsFetchResult = Type.Object({
  requested: Type.Integer(),
  updated: Type.Integer(),
  post_ids: Type.Array(Type.Integer()),
  errors: Type.Array(Type.Object({ post_id: Nullable(Type.Integer()), external_id: Type.String(), detail: Type.String() })),
});

export const SourceType = StringEnum(['hackernews', 'rss'] as const);
export const Source = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  url: Type.String(),
  source_type: SourceType,
  category: Type.String(),
  is_active: Type.Boolean(),
  healthy: Nullable(Type.Boolean({ description: 'last fetch succeeded; null before the first fetch' })),
  last_fetched_at: Nullable(Type.String()),
  last_success_at: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
  last_item_count: Nullable(Type.Integer()),
  consecutive_failures: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const sourceFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  url: Type.String({ maxLength: 2000, description: 'feed URL (rss); for hackernews an API list URL or a news.ycombinator.com page, or empty for top stories' }),
  source_type: SourceType,
  category: Type.String({ maxLength: 100 }),
  is_active: Type.Boolean(),
};
export const SourceCreate = Type.Object(
  {
    name: sourceFields.name,
    url: sourceFields.url,
    source_type: sourceFields.source_type,
    category: Type.Optional(sourceFields.category),
    is_active: Type.Optional(sourceFields.is_active),
  },
  { additionalProperties: false },
);
export const SourceUpdate = Type.Partial(Type.Object(sourceFields), { additionalProperties: false, minProperties: 1 });

export const Category = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  is_active: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const CategoryCreate = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), is_active: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const CategoryUpdate = Type.Partial(CategoryCreate, { additionalProperties: false, minProperties: 1 });

export const HashtagPolicy = StringEnum(['always', 'never'] as const);
export const Style = Type.Object({
  id: Type.Integer({ description: 'version id' }),
  version: Type.Integer(),
  tone: Type.String(),
  topics: Type.Array(Type.String()),
  hashtag_policy: HashtagPolicy,
  thread_preference: Type.Boolean(),
  origin: Type.String({ description: 'default, api or proposal:<id>' }),
  updated_at: Type.String(),
});
export const StyleUpdate = Type.Object(
  {
    tone: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    topics: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
    hashtag_policy: Type.Optional(HashtagPolicy),
    thread_preference: Type.Optional(Type.Boolean()),
    // Echoed read-only fields are accepted (and ignored) so a client can PUT back what it GET.
    id: Type.Optional(Type.Unknown()),
    version: Type.Optional(Type.Unknown()),
    origin: Type.Optional(Type.Unknown()),
    updated_at: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const totals = {
  post_count: Type.Integer(),
  total_impressions: Type.Integer(),
  total_likes: Type.Integer(),
  total_reposts: Type.Integer(),
  total_replies: Type.Integer(),
  engagement_rate: Type.Number({ description: '(likes + reposts + replies) / impressions × 100, two decimals; 0 without impressions' }),
};
export const Period = StringEnum(['7d', '30d', 'all'] as const);
export const Analytics = Type.Object({ ...totals, period: Period });
export const CategoryAnalytics = Type.Array(Type.Object({ category: Type.String(), ...totals, period: Period }));

export const DashboardStats = Type.Object({
  posts_today: Type.Integer(),
  posts_this_month: Type.Integer(),
  pending_review: Type.Integer(),
  published_total: Type.Integer(),
  sources_healthy: Type.Integer(),
  sources_total: Type.Integer(),
});
export const Activity = Type.Array(
  Type.Object({
    id: Type.Integer(),
    type: Type.String(),
    message: Type.String(),
    entity_type: Nullable(Type.String()),
    entity_id: Nullable(Type.String()),
    created_at: Type.String(),
  }),
);

const StyleChanges = Type.Object({
  tone: Type.Optional(Type.String()),
  topics: Type.Optional(Type.Array(Type.String())),
  hashtag_policy: Type.Optional(HashtagPolicy),
  thread_preference: Type.Optional(Type.Boolean()),
});
export const Proposal = Type.Object({
  id: Type.Integer(),
  type: Type.Literal('style'),
  title: Type.String(),
  rationale: Type.String(),
  evidence: Type.Array(Type.String()),
  current_value: StyleChanges,
  proposed_value: StyleChanges,
  status: StringEnum(['pending', 'approved', 'rejected'] as const),
  model: Nullable(Type.String()),
  style_version_id: Nullable(Type.Integer()),
  created_at: Type.String(),
  decided_at: Nullable(Type.String()),
});
export const ProposalDecision = Type.Object(
  { status: StringEnum(['approved', 'rejected'] as const) },
  { additionalProperties: false },
);
export const ProposalsGenerated = Type.Object({
  proposals: Type.Array(Proposal),
  dropped: Type.Array(Type.Object({ index: Type.Integer(), reason: Type.String() })),
});

export const ModelConfig = Type.Object({
  model_id: Nullable(Type.String()),
  source: StringEnum(['database', 'env'] as const),
});
export const ModelSet = Type.Object({ model_id: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }) }, { additionalProperties: false });
export const ModelSetResponse = Type.Object({ model_id: Type.String(), message: Type.String() });

const SourceReport = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  source_type: Type.String(),
  healthy: Type.Boolean(),
  items: Type.Integer(),
  error: Nullable(Type.String()),
  duration_ms: Type.Integer(),
});
export const RunResult = Type.Object({
  batch_id: Type.String(),
  post_count: Type.Integer(),
  post_ids: Type.Array(Type.Integer()),
  status: Type.Literal('completed'),
  model: Type.String(),
  sources_total: Type.Integer(),
  sources_healthy: Type.Integer(),
  sources: Type.Array(SourceReport),
  items_fetched: Type.Integer(),
  items_new: Type.Integer({ description: 'items not used by an earlier run' }),
  items_selected: Type.Integer(),
  posts_rejected: Type.Integer(),
  rejected: Type.Array(Type.Object({ index: Type.Integer(), item: Nullable(Type.Integer()), reason: Type.String() })),
  repairs: Type.Array(Type.Object({ item: Type.Integer(), repairs: Type.Array(Type.String()) })),
  usage: Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() }),
  started_at: Type.String(),
  finished_at: Type.String(),
  duration_ms: Type.Integer(),
});
export const RunProgress = Type.Object({
  batch_id: Type.String(),
  status: StringEnum(['running', 'completed', 'failed'] as const),
  stage: Type.String({ description: 'starting, fetching, ranking, drafting, saving, done' }),
  model: Type.String(),
  started_at: Type.String(),
  finished_at: Nullable(Type.String()),
  sources_total: Type.Integer(),
  sources_done: Type.Integer(),
  sources_healthy: Type.Integer(),
  sources: Type.Array(SourceReport),
  items_fetched: Type.Integer(),
  items_new: Type.Integer(),
  items_selected: Type.Integer(),
  post_count: Type.Integer(),
  error: Nullable(Type.String()),
});
export const RunStarted = Type.Object({ batch_id: Type.String(), status: Type.Literal('running'), status_url: Type.String() });
export const PipelineStatus = Type.Object({ running: Type.Boolean(), run: Nullable(RunProgress) });
export const RunRecord = Type.Object({
  batch_id: Type.String(),
  status: StringEnum(['running', 'completed', 'failed', 'interrupted'] as const),
  stage: Type.String(),
  model: Nullable(Type.String()),
  post_count: Type.Integer(),
  error: Nullable(Type.String()),
  started_at: Type.String(),
  finished_at: Nullable(Type.String()),
  result: Nullable(RunResult),
  progress: Type.Optional(RunProgress),
});
