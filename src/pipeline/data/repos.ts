/**
 * Every repository of the pipeline over one SQL handle: the component's (statements on their own)
 * or a transaction's (`inTransaction`: the steps commit together or not at all).
 */
import type { Clock } from '../../http/clock.js';
import { ActivityRepo } from './activity.js';
import { AnalyticsRepo } from './analytics.js';
import { CategoriesRepo } from './categories.js';
import { PostsRepo } from './posts.js';
import { ProposalsRepo } from './proposals.js';
import { RunsRepo } from './runs.js';
import { SettingsRepo } from './settings.js';
import { SourcesRepo } from './sources.js';
import type { Sql } from '../../store/sql.js';
import { StyleRepo } from './style.js';
import { UsedItemsRepo } from './used-items.js';

export interface Repos {
  sql: Sql;
  posts: PostsRepo;
  sources: SourcesRepo;
  categories: CategoriesRepo;
  style: StyleRepo;
  proposals: ProposalsRepo;
  activity: ActivityRepo;
  runs: RunsRepo;
  analytics: AnalyticsRepo;
  usedItems: UsedItemsRepo;
  settings: SettingsRepo;
}

export function reposOver(sql: Sql, clock: Clock): Repos {
  return {
    sql,
    posts: new PostsRepo(sql, clock),
    sources: new SourcesRepo(sql, clock),
    categories: new CategoriesRepo(sql, clock),
    style: new StyleRepo(sql, clock),
    proposals: new ProposalsRepo(sql, clock),
    activity: new ActivityRepo(sql, clock),
    runs: new RunsRepo(sql, clock),
    analytics: new AnalyticsRepo(sql),
    usedItems: new UsedItemsRepo(sql, clock),
    settings: new SettingsRepo(sql, clock),
  };
}

/** `fn` with repositories inside one transaction. */
export function inTransaction<T>(sql: Sql, clock: Clock, fn: (r: Repos) => Promise<T>): Promise<T> {
  return sql.transaction((tx) => fn(reposOver(tx, clock)));
}
