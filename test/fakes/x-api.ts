/**
 * A loopback fake of the X API v2 pieces the pipeline uses: `POST /2/tweets`, `POST /2/media/upload`,
 * `GET /2/tweets?ids=…&tweet.fields=public_metrics`, with bearer-token checks and X's error shapes.
 * `failNext` makes the next requests fail with a given status (429, 500, 403, ...).
 */
import { listenLoopback, readRequestBody } from './http-server.js';

export interface FakeTweet {
  id: string;
  text: string;
  reply_to: string | null;
  media_ids: string[];
  public_metrics: { retweet_count: number; reply_count: number; like_count: number; quote_count: number; bookmark_count: number; impression_count: number };
}

export interface FakeXApi {
  /** API base URL, e.g. http://127.0.0.1:PORT/2 (the `x-api-base-url` setting). */
  baseUrl: string;
  token: string;
  tweets: FakeTweet[];
  media: { id: string; bytes: number; category: string }[];
  requests: { method: string; path: string; auth: string | undefined }[];
  /** Fail the next `count` requests with `status`. */
  failNext(status: number, count?: number): void;
  /** Fail the requests for which this returns a status (checked after failNext). */
  failIf: ((method: string, path: string, body: string) => number | undefined) | null;
  setMetrics(id: string, m: Partial<FakeTweet['public_metrics']>): void;
  close(): Promise<void>;
}

export async function startFakeXApi(token = 'x-test-token'): Promise<FakeXApi> {
  const tweets: FakeTweet[] = [];
  const media: FakeXApi['media'] = [];
  const requests: FakeXApi['requests'] = [];
  let nextId = 1_800_000_000_000_000_000n;
  let failures: { status: number; count: number } | null = null;
  const api = { failIf: null } as unknown as FakeXApi;

  const srv = await listenLoopback(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ method: req.method ?? 'GET', path: url.pathname, auth: req.headers.authorization });
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
    };
    const body = await readRequestBody(req);
    const forced = failures && failures.count > 0 ? (failures.count--, failures.status) : api.failIf?.(req.method ?? 'GET', url.pathname, body.toString('utf8'));
    if (forced) {
      const s = forced;
      if (s === 429) return json(429, { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 }, { 'x-rate-limit-reset': '1893456000' });
      return json(s, { title: 'Error', detail: `fake failure ${s}`, type: 'about:blank', status: s });
    }
    if (req.headers.authorization !== `Bearer ${token}`) {
      return json(401, { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' });
    }
    if (req.method === 'POST' && url.pathname === '/2/tweets') {
      let parsed: { text?: unknown; reply?: { in_reply_to_tweet_id?: string }; media?: { media_ids?: string[] } };
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return json(400, { errors: [{ message: 'Request body is not valid JSON' }], title: 'Invalid Request', detail: 'One or more parameters to your request was invalid.' });
      }
      if (typeof parsed.text !== 'string' || parsed.text.length === 0) {
        return json(400, { title: 'Invalid Request', detail: 'One or more parameters to your request was invalid.', errors: [{ message: '$.text is required' }] });
      }
      if ([...parsed.text].length > 560) return json(403, { title: 'Forbidden', detail: 'Your Tweet text is too long.', type: 'about:blank', status: 403 });
      if (tweets.some((t) => t.text === parsed.text && t.reply_to === (parsed.reply?.in_reply_to_tweet_id ?? null))) {
        return json(403, { title: 'Forbidden', detail: 'You are not allowed to create a Tweet with duplicate content.', type: 'about:blank', status: 403 });
      }
      const id = String(nextId++);
      tweets.push({
        id,
        text: parsed.text,
        reply_to: parsed.reply?.in_reply_to_tweet_id ?? null,
        media_ids: parsed.media?.media_ids ?? [],
        public_metrics: { retweet_count: 0, reply_count: 0, like_count: 0, quote_count: 0, bookmark_count: 0, impression_count: 0 },
      });
      return json(201, { data: { id, text: parsed.text, edit_history_tweet_ids: [id] } });
    }
    if (req.method === 'POST' && url.pathname === '/2/media/upload') {
      const type = req.headers['content-type'] ?? '';
      if (!type.startsWith('multipart/form-data')) return json(400, { title: 'Invalid Request', detail: 'media must be multipart/form-data' });
      const text = body.toString('latin1');
      const category = /name="media_category"\r\n\r\n([^\r]*)/.exec(text)?.[1] ?? '';
      if (!/name="media"/.test(text)) return json(400, { title: 'Invalid Request', detail: 'media is required' });
      const id = String(nextId++);
      media.push({ id, bytes: body.length, category });
      return json(200, { data: { id, media_key: `3_${id}`, size: body.length, expires_after_secs: 86400 } });
    }
    if (req.method === 'GET' && url.pathname === '/2/tweets') {
      const ids = (url.searchParams.get('ids') ?? '').split(',').filter(Boolean);
      if (ids.length === 0 || ids.length > 100) return json(400, { title: 'Invalid Request', detail: 'ids must have 1 to 100 items' });
      const withMetrics = (url.searchParams.get('tweet.fields') ?? '').split(',').includes('public_metrics');
      const data = tweets.filter((t) => ids.includes(t.id)).map((t) => ({ id: t.id, text: t.text, ...(withMetrics ? { public_metrics: t.public_metrics } : {}) }));
      const errors = ids
        .filter((id) => !tweets.some((t) => t.id === id))
        .map((id) => ({
          value: id,
          detail: `Could not find tweet with ids: [${id}].`,
          title: 'Not Found Error',
          resource_type: 'tweet',
          parameter: 'ids',
          resource_id: id,
          type: 'https://api.twitter.com/2/problems/resource-not-found',
        }));
      return json(200, { ...(data.length ? { data } : {}), ...(errors.length ? { errors } : {}) });
    }
    json(404, { title: 'Not Found', detail: 'no such endpoint', type: 'about:blank', status: 404 });
  });
  const rest: Omit<FakeXApi, 'failIf'> = {
    baseUrl: `http://127.0.0.1:${srv.port}/2`,
    token,
    tweets,
    media,
    requests,
    failNext(status, count = 1) {
      failures = { status, count };
    },
    setMetrics(id, m) {
      const t = tweets.find((x) => x.id === id);
      if (!t) throw new Error(`no tweet ${id}`);
      Object.assign(t.public_metrics, m);
    },
    close: srv.close,
  };
  Object.assign(api, rest);
  return api;
}
