import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { PostsRepo } from '../../src/pipeline/data/posts.js';
import { SqliteSql } from '../../src/store/sql.js';
import { PIPELINE_MIGRATIONS } from '../../src/pipeline/data/migrations.js';
import { Store } from '../../src/store/index.js';
import { systemClock } from '../../src/http/clock.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { runMultipartAbuse } from '../helpers/multipart-abuse.js';

const PASSWORD = 'upload-abuse-owner';
const MAX = 4096;

/** The image upload route against every hostile multipart body: a 4xx each time, and the daemon lives. */
describe('pipeline image upload under hostile multipart bodies', () => {
  let d: TestDaemon;
  let postId: number;
  beforeAll(async () => {
    d = await startDaemon({ ctlYaml: { pipeline: { 'owner-password': PASSWORD, 'max-image-bytes': MAX } } });
    // A post to attach images to, written beside the running daemon (WAL allows a second writer).
    const store = new Store(join(d.dir, 'database', 'pipeline.db'), PIPELINE_MIGRATIONS);
    try {
      [postId] = await new PostsRepo(new SqliteSql(store), systemClock).insertMany([
        { batch_id: 'b', content: 'a post', thread: [], category: 'tech', source_id: null, source_name: 's', source_title: 't', source_url: 'https://example.com/1', model: 'm' },
      ]);
    } finally {
      store.close();
    }
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('answers every case with a 4xx (or a close for a client that left) and keeps serving every API', async () => {
    const login = await d.request('pipeline', 'POST', '/api/auth/login', { password: PASSWORD });
    const base = new URL(await d.baseUrl('pipeline'));
    const results = await runMultipartAbuse({
      host: base.hostname,
      port: Number(base.port),
      path: `/api/posts/${postId}/image`,
      fileField: 'file',
      maxBytes: MAX,
      headers: { Authorization: `Bearer ${login.json.access_token}` },
    });
    for (const r of results) {
      if (r.name === 'client gone mid-body') continue;
      expect(r.status, r.name).toBeGreaterThanOrEqual(400);
      expect(r.status, r.name).toBeLessThan(500);
    }
    expect(results.find((r) => r.name === 'file over the limit, chunked (no length)')?.status).toBe(413);
    expect(results.find((r) => r.name === 'file over the limit, declared length')?.status).toBe(413);
    expect(d.child.exitCode).toBeNull();
    expect((await d.request('core', 'GET', '/core/1.0/ready')).status).toBe(200);
    expect((await d.request('alertmanager', 'GET', '/api/v2/status')).status).toBe(200);
    expect((await d.request('pipeline', 'GET', `/api/posts/${postId}`)).json.image_url).toBeNull();
  });
});
