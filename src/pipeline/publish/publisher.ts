/**
 * Scheduled publishing: every `publish-interval` the approved posts whose `scheduled_for` has come
 * (per the injected clock) are posted to X, threads as chained replies, the image with the first
 * part. Parts already posted are remembered, so a retry continues a thread instead of repeating it.
 * Without a token nothing is published (the posts wait).
 */
import type { PostImages } from '../images.js';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { InternalAlerts } from '../../http/component.js';
import type { Clock } from '../../http/clock.js';
import type { ActivityRepo } from '../data/activity.js';
import type { Post, PostsRepo } from '../data/posts.js';
import { nowIso } from '../time.js';
import { XApiError, type XApiClient } from './x-api.js';

export const MAX_PUBLISH_ATTEMPTS = 5;
const BATCH = 20;

export interface PublisherDeps {
  posts: PostsRepo;
  activity: ActivityRepo;
  x: () => XApiClient | null;
  clock: Clock;
  log: Logger;
  images: PostImages;
  intervalMs: number;
  /** ctl's alert manager: PipelinePublishFailed per post that will not be retried, until it is published. */
  alerts?: InternalAlerts;
  /** Several daemons on one database: true when this one holds the publishing lease. */
  lease?: () => Promise<boolean>;
}

export class Publisher {
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private readonly inFlight = new Set<number>();

  constructor(private readonly d: PublisherDeps) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.tick().catch((e: unknown) => this.d.log.error({ err: e }, 'scheduled publishing failed'));
    }, this.d.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Publish every due post once; returns how many were published. */
  async tick(): Promise<number> {
    if (this.ticking) return 0;
    const x = this.d.x();
    if (!x) return 0;
    this.ticking = true;
    let published = 0;
    try {
      // Several daemons on one database: only the one holding the publishing lease publishes.
      if (this.d.lease && !(await this.d.lease())) return 0;
      for (const post of await this.d.posts.dueForPublishing(nowIso(this.d.clock), BATCH)) {
        if (this.inFlight.has(post.id)) continue;
        const ok = await this.publish(x, post).then(
          () => true,
          () => false,
        );
        if (ok) published++;
      }
    } finally {
      this.ticking = false;
    }
    return published;
  }

  /** Publish one post now; throws XApiError when X refuses (the failure is recorded on the post). */
  async publish(x: XApiClient, post: Post): Promise<Post> {
    if (this.inFlight.has(post.id)) throw new XApiError('this post is being published right now', null, true);
    this.inFlight.add(post.id);
    try {
      const parts = [post.content, ...post.thread];
      const ids = [...post.external_ids];
      try {
        let mediaIds: string[] | undefined;
        if (ids.length === 0) {
          const file = await this.d.posts.imageFile(post.id);
          const path = file ? await this.d.images.localPath(file) : null;
          if (file && path) mediaIds = [await x.uploadImage(await readFile(path), mimeOf(file), file)];
        }
        for (let i = ids.length; i < parts.length; i++) {
          const id = await x.postTweet(parts[i]!, { replyTo: ids[i - 1], mediaIds: i === 0 ? mediaIds : undefined });
          ids.push(id);
          await this.d.posts.recordPublishedParts(post.id, ids);
        }
      } catch (e) {
        const err = e instanceof XApiError ? e : new XApiError(`publishing failed: ${(e as Error).message}`, null, false);
        const final = !err.retryable || post.publish_attempts + 1 >= MAX_PUBLISH_ATTEMPTS;
        await this.d.posts.markPublishFailure(post.id, err.message, final);
        await this.d.activity.add('post_publish_failed', `Publishing post ${post.id} failed${final ? '' : ' (will retry)'}: ${err.message}`, 'post', post.id);
        this.d.log.warn({ post: post.id, err: err.message, final }, 'publishing a post failed');
        if (final) this.d.alerts?.fire({ alertname: 'PipelinePublishFailed', labels: { post_id: String(post.id) }, annotations: { summary: `publishing post ${post.id} failed: ${err.message}` }, path: `/api/posts/${post.id}` });
        throw err;
      }
      await this.d.posts.markPublished(post.id, ids);
      this.d.alerts?.resolve('PipelinePublishFailed', { post_id: String(post.id) });
      await this.d.activity.add('post_published', `Post ${post.id} published on X (${ids[0]})`, 'post', post.id);
      return (await this.d.posts.get(post.id))!;
    } finally {
      this.inFlight.delete(post.id);
    }
  }
}

export function mimeOf(file: string): string {
  const ext = file.slice(file.lastIndexOf('.') + 1).toLowerCase();
  return { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' }[ext] ?? 'application/octet-stream';
}
