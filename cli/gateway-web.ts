/** `ctl gateway search` and `ctl gateway fetch`: web search and web fetch through the gateway. */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, intOption } from './run.js';

interface SearchView {
  provider: string;
  cached: boolean;
  results: { title: string; url: string; snippet: string; published_at?: string }[];
}

export function registerWeb(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });

  g.command('search <query>')
    .description('search the web through a configured search provider (POST /v1/search)')
    .option('--provider <id>', 'a provider of gateway.yaml search.providers (default: the default one)')
    .option('-n, --max-results <n>', 'how many results (1-50)', intOption('--max-results'), 10)
    .option('--news', 'news instead of web results')
    .option('--time-range <range>', 'day, week, month or year')
    .action(
      action(async (query: string, o: { provider?: string; maxResults: number; news?: boolean; timeRange?: string }) => {
        const v = await api<SearchView>('POST', '/v1/search', {
          query,
          max_results: o.maxResults,
          ...(o.provider ? { provider: o.provider } : {}),
          ...(o.news ? { search_type: 'news' } : {}),
          ...(o.timeRange ? { time_range: o.timeRange } : {}),
        });
        await printRows(
          v.results,
          [
            { header: 'title', get: (r) => r.title },
            { header: 'url', get: (r) => r.url },
            { header: 'snippet', get: (r) => (r.snippet.length > 80 ? `${r.snippet.slice(0, 77)}...` : r.snippet) },
          ],
          v,
        );
        if (outputFormat() === 'table') process.stderr.write(`${v.results.length} results from ${v.provider}${v.cached ? ' (cached)' : ''}\n`);
      }),
    );

  g.command('fetch <url>')
    .description('fetch a web page as readable markdown, text or HTML (POST /v1/web/fetch)')
    .option('--provider <id>', 'firecrawl, jina, tavily or builtin (default: the pool, in that order)')
    .option('--format <fmt>', 'markdown, text or html', 'markdown')
    .action(
      action(async (url: string, o: { provider?: string; format: string }) => {
        const v = await api<{ url: string; title: string | null; content: string; provider: string }>('POST', '/v1/web/fetch', { url, format: o.format, ...(o.provider ? { provider: o.provider } : {}) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(v.content.endsWith('\n') ? v.content : `${v.content}\n`);
        process.stderr.write(`${v.title ? `${v.title} — ` : ''}${v.url} (via ${v.provider})\n`);
      }),
    );
}
