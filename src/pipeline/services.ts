import type { PostImages } from './images.js';
import type { PipelineScheduler } from './scheduler/index.js';
import type { Logger } from 'pino';
import type { Egress } from '../egress/index.js';
import type { GatewayHandle } from '../http/gateway-handle.js';
import type { Clock } from '../http/clock.js';
import type { Repos } from './data/repos.js';
import type { Sql } from '../store/sql.js';
import type { TokenIssuer } from './auth/tokens.js';
import type { PipelineConfig } from './config.js';
import type { ModelSettings } from './model-setting.js';
import type { Publisher } from './publish/publisher.js';
import type { XApiClient } from './publish/x-api.js';
import type { PipelineRunner } from './runner.js';

/** Everything the routes need, built once by the component: the repositories (over the component's database) and the rest. */
export interface Services extends Pick<Repos, 'posts' | 'sources' | 'categories' | 'style' | 'proposals' | 'activity' | 'runs' | 'analytics'> {
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
  model: ModelSettings;
  runner: PipelineRunner;
  publisher: Publisher;
  /** The gateway's chat, looked up at call time. */
  gateway: () => GatewayHandle | undefined;
  /** The X API client, or null without a token. */
  x: () => XApiClient | null;
}
