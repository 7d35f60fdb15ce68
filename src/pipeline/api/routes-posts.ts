import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { HttpError, badRequest, conflict, notFound } from '../../http/errors.js';
import { weightedLength } from '../drafting/length.js';
import { POST_STATUSES, engagementRate, type Metrics, type Post, type PostChanges } from '../data/posts.js';
import { fetchMetrics } from '../publish/metrics-fetch.js';
import { mimeOf } from '../publish/publisher.js';
import { XApiError, type XApiClient } from '../publish/x-api.js';
import type { Services } from '../services.js';
import { parseIsoDateTime } from '../time.js';
import { STORED_NAME, receiveImage } from '../uploads.js';
import { type ApiRegistry, pathId, queryEnum, queryInt, queryString } from './registry.js';
import { ImageUploaded, MetricsBody, MetricsFetchResult, Post as PostSchema, PostList, PostMetrics, PostUpdate } from './schemas.js';

interface UpdateBody {
  status?: 'approved' | 'rejected';
  content?: string;
  thread?: string[];
  feedback?: string | null;
  scheduled_for?: string | null;
}

export function postRoutes(api: ApiRegistry, s: Services): void {
  const getPost = async (id: number): Promise<Post> => {
    const p = await s.posts.get(id);
    if (!p) throw notFound(`Post ${id} not found`);
    return p;
  };
  const requireX = (): XApiClient => {
    const x = s.x();
    if (!x) throw badRequest('the X API token is not configured (pipeline.x-api-token in ctl.yaml or PIPELINE_X_API_TOKEN)');
    return x;
  };
  const upstream = (e: unknown): never => {
    if (e instanceof XApiError) throw new HttpError(502, e.message, { cause: e });
    throw e;
  };

  api.add({
    method: 'GET',
    path: '/api/posts',
    tag: 'posts',
    summary: 'List posts, newest first',
    query: [
      { name: 'status', schema: { enum: [...POST_STATUSES] }, description: 'only posts with this status' },
      { name: 'batch_id', schema: { type: 'string' }, description: 'only posts of this pipeline run' },
      { name: 'search', schema: { type: 'string', maxLength: 200 }, description: 'case-insensitive text in the content, thread or source title' },
      { name: 'page', schema: { type: 'integer', minimum: 1, default: 1 }, description: 'page number' },
      { name: 'page_size', schema: { type: 'integer', minimum: 1, maximum: s.config.maxPageSize, default: 20 }, description: `items per page (at most ${s.config.maxPageSize})` },
    ],
    response: PostList,
    handler: async (ctx) => {
      const page = queryInt(ctx, 'page', 1, 1, 1_000_000);
      const pageSize = queryInt(ctx, 'page_size', 20, 1, s.config.maxPageSize);
      const { items, total } = await s.posts.list({
        status: queryEnum(ctx, 'status', POST_STATUSES),
        batch_id: queryString(ctx, 'batch_id', 100),
        search: queryString(ctx, 'search', 200),
        page,
        pageSize,
      });
      return { items, total, page, per_page: pageSize };
    },
  });

  api.add({
    method: 'GET',
    path: '/api/posts/:id',
    tag: 'posts',
    summary: 'Get one post',
    response: PostSchema,
    handler: (ctx) => getPost(pathId(ctx, 'Post')),
  });

  api.add({
    method: 'PATCH',
    path: '/api/posts/:id',
    tag: 'posts',
    summary: 'Approve, reject or edit a post (content, thread, feedback, scheduled_for)',
    body: PostUpdate,
    response: PostSchema,
    errors: [409],
    handler: async (ctx, body: UpdateBody) => {
      const id = pathId(ctx, 'Post');
      const post = await getPost(id);
      const changes: PostChanges = {};
      if (post.status === 'published' && (body.status !== undefined || body.content !== undefined || body.thread !== undefined || body.scheduled_for !== undefined)) {
        throw conflict(`Post ${id} is already published; only its feedback can change`);
      }
      const max = s.config.maxPostLength;
      const checkLength = (text: string, where: string) => {
        const n = weightedLength(text);
        if (n > max) throw new HttpError(422, `${where} is too long (${n} > ${max} characters as X counts them)`, { code: 'validation_error' });
      };
      if (body.content !== undefined) {
        if (body.content.trim() === '') throw new HttpError(422, 'body/content must not be blank', { code: 'validation_error' });
        checkLength(body.content, 'body/content');
        changes.content = body.content;
      }
      if (body.thread !== undefined) {
        body.thread.forEach((part, i) => checkLength(part, `body/thread/${i}`));
        changes.thread = body.thread;
      }
      if (body.feedback !== undefined) changes.feedback = body.feedback === null || body.feedback.trim() === '' ? null : body.feedback;
      if (body.scheduled_for !== undefined) {
        if (body.scheduled_for === null || body.scheduled_for === '') changes.scheduled_for = null;
        else {
          const iso = parseIsoDateTime(body.scheduled_for);
          if (!iso) throw new HttpError(422, 'body/scheduled_for must be an ISO 8601 date-time such as 2030-01-01T09:30:00Z', { code: 'validation_error' });
          changes.scheduled_for = iso;
        }
      }
      if (body.status !== undefined) changes.status = body.status;
      await s.tx(async (r) => {
        await r.posts.update(id, changes);
        const what: string[] = [];
        if (changes.status) what.push(changes.status);
        if (changes.content !== undefined || changes.thread !== undefined) what.push('edited');
        if (changes.scheduled_for) what.push(`scheduled for ${changes.scheduled_for}`);
        if (changes.feedback) what.push('feedback given');
        if (what.length) await r.activity.add(changes.status ? `post_${changes.status}` : 'post_updated', `Post ${id} ${what.join(', ')}`, 'post', id);
      });
      return getPost(id);
    },
  });

  api.add({
    method: 'POST',
    path: '/api/posts/:id/image',
    tag: 'posts',
    summary: `Upload the post's image (multipart/form-data, field "file"; PNG, JPEG, GIF or WebP; at most ${s.config.maxImageBytes} bytes)`,
    multipart: { field: 'file', description: 'the image' },
    response: ImageUploaded,
    errors: [413, 415],
    handler: async (ctx) => {
      const id = pathId(ctx, 'Post');
      const before = await s.posts.imageFile(id);
      if (!(await s.posts.get(id))) {
        ctx.req.resume();
        throw notFound(`Post ${id} not found`);
      }
      const saved = await receiveImage(ctx, s.images.dir, id, s.config.maxImageBytes);
      await s.images.saved(saved.file);
      const url = `/api/uploads/${saved.file}`;
      await s.tx(async (r) => {
        await r.posts.setImage(id, saved.file, url);
        await r.activity.add('post_image', `Image uploaded for post ${id}`, 'post', id);
      });
      if (before) await s.images.removed(before);
      return { message: 'Image uploaded', image_url: url };
    },
  });

  api.add({
    method: 'DELETE',
    path: '/api/posts/:id/image',
    tag: 'posts',
    summary: "Remove the post's image",
    status: 204,
    handler: async (ctx) => {
      const id = pathId(ctx, 'Post');
      await getPost(id);
      const file = await s.posts.imageFile(id);
      if (!file) throw notFound(`Post ${id} has no image`);
      await s.posts.setImage(id, null, null);
      await s.images.removed(file);
      ctx.res.statusCode = 204;
      ctx.res.end();
      return undefined;
    },
  });

  api.add({
    method: 'GET',
    path: '/api/uploads/:name',
    tag: 'posts',
    summary: 'An uploaded image (the image_url of a post)',
    params: { name: { schema: { type: 'string' }, description: 'stored file name' } },
    produces: 'image/*',
    errors: [404],
    handler: async (ctx) => {
      const name = ctx.params.name ?? '';
      if (!STORED_NAME.test(name)) throw notFound('Image not found');
      const path = await s.images.localPath(name);
      const st = path ? await stat(path).catch(() => null) : null;
      if (!path || !st || !st.isFile()) throw notFound('Image not found');
      ctx.res.writeHead(200, {
        'Content-Type': mimeOf(name),
        'Content-Length': st.size,
        'Cache-Control': 'private, max-age=86400',
        'X-Content-Type-Options': 'nosniff',
      });
      if (ctx.req.method === 'HEAD') {
        ctx.res.end();
        return undefined;
      }
      await new Promise<void>((resolve) => {
        const rs = createReadStream(path);
        rs.on('error', () => {
          ctx.res.destroy();
          resolve();
        });
        rs.on('end', () => resolve());
        rs.pipe(ctx.res);
      });
      return undefined;
    },
  });

  const metricsView = async (p: Post) => ({
    post_id: p.id,
    impressions: p.impressions,
    likes: p.likes,
    retweets: p.retweets,
    replies: p.replies,
    engagement_rate: p.engagement_rate,
    source: p.metrics_source,
    updated_at: p.metrics_updated_at,
    history: await s.posts.metricsHistory(p.id),
  });

  api.add({
    method: 'POST',
    path: '/api/posts/:id/metrics',
    tag: 'metrics',
    summary: 'Record metrics by hand (impressions, likes, retweets, replies; omitted values keep their current value)',
    body: MetricsBody,
    response: PostMetrics,
    handler: async (ctx, body: Partial<Metrics>) => {
      const id = pathId(ctx, 'Post');
      const p = await getPost(id);
      const m: Metrics = {
        impressions: body.impressions ?? p.impressions,
        likes: body.likes ?? p.likes,
        retweets: body.retweets ?? p.retweets,
        replies: body.replies ?? p.replies,
      };
      await s.tx(async (r) => {
        await r.posts.recordMetrics(id, m, 'manual');
        await r.activity.add('metrics_recorded', `Metrics recorded for post ${id} (${engagementRate(m)}% engagement)`, 'post', id);
      });
      return metricsView(await getPost(id));
    },
  });

  api.add({
    method: 'GET',
    path: '/api/posts/:id/metrics',
    tag: 'metrics',
    summary: "A post's current metrics and their history (newest first)",
    response: PostMetrics,
    handler: async (ctx) => metricsView(await getPost(pathId(ctx, 'Post'))),
  });

  api.add({
    method: 'POST',
    path: '/api/metrics/fetch',
    tag: 'metrics',
    summary: `Fetch public metrics from the X API for posts published in the last ${s.config.metricsWindowDays} days`,
    response: MetricsFetchResult,
    errors: [400, 502],
    handler: async () => {
      const x = requireX();
      return await fetchMetrics(x, { ...s, windowDays: s.config.metricsWindowDays }).catch(upstream);
    },
  });

  api.add({
    method: 'POST',
    path: '/api/posts/:id/publish',
    tag: 'posts',
    summary: 'Publish an approved post on X now (threads as replies, the image with the first part)',
    response: PostSchema,
    errors: [400, 409, 502],
    handler: async (ctx) => {
      const id = pathId(ctx, 'Post');
      const p = await getPost(id);
      if (p.status === 'published') throw conflict(`Post ${id} is already published`);
      if (p.status !== 'approved' && p.status !== 'failed') throw conflict(`Post ${id} is ${p.status}; approve it first`);
      const x = requireX();
      return await s.publisher.publish(x, p).catch(upstream);
    },
  });
}
