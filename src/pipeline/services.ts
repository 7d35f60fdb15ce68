import type { PostImages } from './images.js';
import type { PipelineScheduler } from './scheduler/index.js';
import type { Logger } from 'pino';
import type { Egress } from '../egress/index.js';
import type { GatewayHandle } from '../gateway/handle.js';
import type { Clock } from '../http/clock.js';
import type { Repos } from './data/repos.js';
import type { Sql } from './data/sql.js';
import type { TokenIssuer } from './auth/tokens.js';
import type { PipelineConfig } from './config.js';
import type { ActivityRepo } from './data/activity.js';
import type { AnalyticsRepo } from './data/analytics.js';
import type { CategoriesRepo } from './data/categories.js';
import type { PostsRepo } from './data/posts.js';
import type { ProposalsRepo } from './data/proposals.js';
import type { RunsRepo } from './data/runs.js';
import type { SourcesRepo } from './data/sources.js';
import type { StyleRepo } from './data/style.js';
import type { ModelSettings } from './model-setting.js';
import type { Publisher } from './publish/publisher.js';
import type { XApiClient } from './publish/x-api.js';
import type { PipelineRunner } from './runner.js';

/** Everything the routes need, built once by the component. */
export interface Services {
  config: PipelineConfig;
  /** Jobs on the schedules of ctl.yaml (set once the component is built). */
  scheduler?: PipelineScheduler;
  clock: Clock;
  log: Logger;
  /** The pipeline's database (SQLite, or PostgreSQL with storage.postgres). */
  sql: Sql;
  /** `fn` with repositories inside one transaction (use only `r` within it). */
  tx<T>(fn: (r: Repos) => Promise<T>): Promise<T>;
  egress: Egress;
  /** Post images (uploads dir; shared through the database with storage.postgres). */
  images: PostImages;
  version: string;
  tokens: TokenIssuer;
  posts: PostsRepo;
  sources: SourcesRepo;
  categories: CategoriesRepo;
  style: StyleRepo;
  proposals: ProposalsRepo;
  activity: ActivityRepo;
  runs: RunsRepo;
  analytics: AnalyticsRepo;
  model: ModelSettings;
  runner: PipelineRunner;
  publisher: Publisher;
  /** The gateway's chat, looked up at call time. */
  gateway: () => GatewayHandle | undefined;
  /** The X API client, or null without a token. */
  x: () => XApiClient | null;
}
