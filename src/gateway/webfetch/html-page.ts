/** Readable content of an HTML page (the built-in web fetcher): Readability over a linkedom document, then Turndown. */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import type { FetchedPage, PageFormat } from './providers.js';

let turndown: TurndownService | undefined;

/** Readable content of an HTML page: the article Readability finds (else the whole body). */
export function htmlToPage(html: string, url: string, format: PageFormat): FetchedPage {
  const { document } = parseHTML(html);
  const title = document.querySelector('title')?.textContent?.trim() || null;
  let article: { title?: string | null; content?: string | null; textContent?: string | null } | null = null;
  try {
    article = new Readability(document.cloneNode(true) as unknown as Document).parse();
  } catch {
    article = null;
  }
  const contentHtml = article?.content ?? document.querySelector('body')?.innerHTML ?? html;
  const pageTitle = article?.title?.trim() || title;
  if (format === 'html') return { url, title: pageTitle, content: contentHtml, format };
  if (format === 'text') {
    const text = article?.textContent ?? parseHTML(`<body>${contentHtml}</body>`).document.body.textContent ?? '';
    return { url, title: pageTitle, content: text.replace(/\n{3,}/g, '\n\n').trim(), format };
  }
  turndown ??= new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
  return { url, title: pageTitle, content: turndown.turndown(contentHtml).trim(), format };
}
