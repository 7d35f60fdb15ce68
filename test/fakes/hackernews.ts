/**
 * A loopback fake of the Hacker News Firebase API (`/v0/topstories.json`, `/v0/item/<id>.json`, ...).
 * Modes make it misbehave for tests: `garbage` (200 with HTML), `error` (HTTP 500), `hang` (never
 * answers until closed), `bad-items` (list fine, every item 500).
 */
import { listenLoopback } from './http-server.js';

export interface FakeStory {
  id: number;
  title: string;
  url?: string;
  score?: number;
  descendants?: number;
  /** Unix seconds. */
  time?: number;
  type?: string;
  text?: string;
  dead?: boolean;
}

export type HackerNewsMode = 'ok' | 'garbage' | 'error' | 'hang' | 'bad-items';

export interface FakeHackerNews {
  /** API base URL, e.g. http://127.0.0.1:PORT/v0 (the `hn-api-base-url` setting). */
  baseUrl: string;
  stories: FakeStory[];
  mode: HackerNewsMode;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

export function sampleStories(nowSec: number, prefix = 'HN'): FakeStory[] {
  return [
    { id: 101, title: `${prefix}: Rust 2.0 released`, url: 'https://example.com/rust-2', score: 500, descendants: 120, time: nowSec - 3600 },
    { id: 102, title: `${prefix}: SQLite tips for production`, url: 'https://example.org/sqlite?utm_source=hn', score: 300, descendants: 40, time: nowSec - 7200 },
    { id: 103, title: `Ask ${prefix}: How do you review AI drafts?`, score: 80, descendants: 60, time: nowSec - 1800, text: '<p>Curious &amp; open</p>' },
    { id: 104, title: `${prefix}: Dead story`, url: 'https://example.net/dead', score: 1, time: nowSec - 600, dead: true },
  ];
}

export async function startFakeHackerNews(stories: FakeStory[] = sampleStories(Math.floor(Date.now() / 1000))): Promise<FakeHackerNews> {
  const state = { stories, mode: 'ok' as HackerNewsMode, requests: [] as string[] };
  const srv = await listenLoopback((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    state.requests.push(path);
    if (state.mode === 'hang') return; // never answers
    const json = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (state.mode === 'error') return json(500, { error: 'internal' });
    if (state.mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Service Unavailable {not json</body></html>');
      return;
    }
    const list = /^\/v0\/(top|new|best|ask|show|job)stories\.json$/.exec(path);
    if (list) return json(200, state.stories.map((s) => s.id));
    const item = /^\/v0\/item\/(\d+)\.json$/.exec(path);
    if (item) {
      if (state.mode === 'bad-items') return json(500, { error: 'item store down' });
      const s = state.stories.find((x) => x.id === Number(item[1]));
      return json(200, s ? { by: 'someone', type: 'story', kids: [], ...s } : null);
    }
    json(404, { error: 'Permission denied' });
  });
  return {
    baseUrl: `http://127.0.0.1:${srv.port}/v0`,
    get stories() {
      return state.stories;
    },
    set stories(v) {
      state.stories = v;
    },
    get mode() {
      return state.mode;
    },
    set mode(m) {
      state.mode = m;
    },
    requests: state.requests,
    close: srv.close,
  };
}
