/**
 * A loopback feed server: `/rss.xml` (RSS 2.0), `/atom.xml` (Atom 1.0), `/rdf.xml` (RSS 1.0),
 * `/garbage.xml` (200 with non-XML), `/broken.xml` (malformed XML), `/slow.xml` (never answers),
 * `/missing.xml` (404). Entries are configurable.
 */
import { listenLoopback } from './http-server.js';

export interface FeedEntry {
  title: string;
  link: string;
  id?: string;
  /** ISO time. */
  date: string;
  summary?: string;
}

export interface FakeFeeds {
  origin: string;
  url(path: string): string;
  rss: FeedEntry[];
  atom: FeedEntry[];
  requests: string[];
  close(): Promise<void>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function rssDocument(entries: FeedEntry[]): string {
  const items = entries
    .map(
      (e) => `    <item>
      <title>${esc(e.title)}</title>
      <link>${esc(e.link)}</link>
      <guid isPermaLink="false">${esc(e.id ?? e.link)}</guid>
      <pubDate>${new Date(e.date).toUTCString()}</pubDate>
      <description><![CDATA[<p>${e.summary ?? ''}</p>]]></description>
    </item>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel>
    <title>Fake RSS</title>
    <link>https://blog.example.com/</link>
    <description>fixture</description>
${items}
  </channel>
</rss>`;
}

export function atomDocument(entries: FeedEntry[]): string {
  const items = entries
    .map(
      (e) => `  <entry>
    <title type="html">${esc(e.title)}</title>
    <link rel="alternate" type="text/html" href="${esc(e.link)}"/>
    <link rel="replies" href="${esc(e.link)}#comments"/>
    <id>${esc(e.id ?? e.link)}</id>
    <updated>${e.date}</updated>
    <published>${e.date}</published>
    <summary type="html">${esc(e.summary ?? '')}</summary>
  </entry>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Fake Atom</title>
  <id>urn:fake:atom</id>
  <updated>2030-01-01T00:00:00Z</updated>
${items}
</feed>`;
}

export function rdfDocument(entries: FeedEntry[]): string {
  const items = entries
    .map((e) => `  <item rdf:about="${esc(e.link)}"><title>${esc(e.title)}</title><link>${esc(e.link)}</link><dc:date>${e.date}</dc:date></item>`)
    .join('\n');
  return `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://example.com/"><title>Fake RDF</title></channel>
${items}
</rdf:RDF>`;
}

export function sampleEntries(nowMs: number, prefix: string, host: string): FeedEntry[] {
  return [1, 2, 3].map((i) => ({
    title: `${prefix} story ${i}: databases & caching`,
    link: `https://${host}/posts/${i}`,
    date: new Date(nowMs - i * 3_600_000).toISOString(),
    summary: `Summary ${i} with <b>markup</b>`,
  }));
}

export async function startFakeFeeds(nowMs = Date.now()): Promise<FakeFeeds> {
  const state = {
    rss: sampleEntries(nowMs, 'RSS', 'blog.example.com'),
    atom: sampleEntries(nowMs, 'Atom', 'atom.example.com'),
    requests: [] as string[],
  };
  const srv = await listenLoopback((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    state.requests.push(path);
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    switch (path) {
      case '/rss.xml':
        return send(200, 'application/rss+xml; charset=utf-8', rssDocument(state.rss));
      case '/atom.xml':
        return send(200, 'application/atom+xml; charset=utf-8', atomDocument(state.atom));
      case '/rdf.xml':
        return send(200, 'application/rdf+xml', rdfDocument(state.rss));
      case '/garbage.xml':
        return send(200, 'application/rss+xml', '{"this": "is not a feed"} \u0000\u0001 garbage');
      case '/broken.xml':
        return send(200, 'application/rss+xml', '<rss><channel><item><title>unclosed</channel></rss>');
      case '/html.xml':
        return send(200, 'text/html', '<html><head><title>Not a feed</title></head><body></body></html>');
      case '/slow.xml':
        return; // never answers
      default:
        return send(404, 'text/plain', 'not found');
    }
  });
  const origin = `http://127.0.0.1:${srv.port}`;
  return {
    origin,
    url: (p: string) => `${origin}${p}`,
    get rss() {
      return state.rss;
    },
    set rss(v) {
      state.rss = v;
    },
    get atom() {
      return state.atom;
    },
    set atom(v) {
      state.atom = v;
    },
    requests: state.requests,
    close: srv.close,
  };
}
