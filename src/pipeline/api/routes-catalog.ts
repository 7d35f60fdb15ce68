import { Type } from '@sinclair/typebox';
import { HttpError, conflict, notFound } from '../../http/errors.js';
import type { Category } from '../data/categories.js';
import type { Source, SourceInput, SourceType } from '../data/sources.js';
import { checkUserUrl, UrlRefusedError } from '../../egress/user-url.js';
import type { Repos } from '../data/repos.js';
import type { Services } from '../services.js';
import { type ApiRegistry, pathId } from './registry.js';
import { Category as CategorySchema, CategoryCreate, CategoryUpdate, Source as SourceSchema, SourceCreate, SourceUpdate } from './schemas.js';

export function catalogRoutes(api: ApiRegistry, s: Services): void {
  const getSource = async (id: number, r: Pick<Repos, 'sources'> = s): Promise<Source> => {
    const src = await r.sources.get(id);
    if (!src) throw notFound(`Source ${id} not found`);
    return src;
  };
  const getCategory = async (id: number, r: Pick<Repos, 'categories'> = s): Promise<Category> => {
    const c = await r.categories.get(id);
    if (!c) throw notFound(`Category ${id} not found`);
    return c;
  };

  /** Check a source and bring its category to the stored spelling (creating the category when new). */
  const prepareSource = async (input: SourceInput, r: Repos): Promise<SourceInput> => {
    const name = input.name.trim();
    if (!name) throw new HttpError(422, 'body/name must not be blank', { code: 'validation_error' });
    const url = input.url.trim();
    checkSourceUrl(input.source_type, url);
    // A feed URL is fetched on every run: refused now if it names a private address (DNS is checked at the fetch).
    if (input.source_type !== 'hackernews') {
      try {
        checkUserUrl(url, s.egress, { allowHttp: true });
      } catch (e) {
        if (e instanceof UrlRefusedError) throw new HttpError(422, `body/url: ${e.message}`, { code: 'validation_error' });
        throw e;
      }
    }
    let category = input.category.trim();
    if (category) category = (await r.categories.ensure(category)).name;
    return { ...input, name, url, category };
  };

  api.add({
    method: 'GET',
    path: '/api/sources',
    tag: 'sources',
    summary: 'List content sources with their health',
    response: Type.Array(SourceSchema),
    handler: () => s.sources.list(),
  });
  api.add({
    method: 'POST',
    path: '/api/sources',
    tag: 'sources',
    summary: 'Create a source (hackernews or rss); its category is created when new',
    body: SourceCreate,
    status: 201,
    response: SourceSchema,
    handler: (_ctx, body: { name: string; url: string; source_type: SourceType; category?: string; is_active?: boolean }) =>
      s.tx(async (r) => {
        const src = await r.sources.create(await prepareSource({ ...body, category: body.category ?? '', is_active: body.is_active ?? true }, r));
        await r.activity.add('source_created', `Source "${src.name}" (${src.source_type}) created`, 'source', src.id);
        return src;
      }),
  });
  api.add({
    method: 'GET',
    path: '/api/sources/:id',
    tag: 'sources',
    summary: 'Get one source',
    response: SourceSchema,
    handler: (ctx) => getSource(pathId(ctx, 'Source')),
  });
  for (const method of ['PUT', 'PATCH'] as const) {
    api.add({
      method,
      path: '/api/sources/:id',
      tag: 'sources',
      summary: 'Update a source (fields not sent keep their value)',
      body: SourceUpdate,
      response: SourceSchema,
      handler: (ctx, body: Partial<SourceInput>) => {
        const id = pathId(ctx, 'Source');
        return s.tx(async (r) => {
          const cur = await getSource(id, r);
          const next = await prepareSource({
            name: body.name ?? cur.name,
            url: body.url ?? cur.url,
            source_type: body.source_type ?? cur.source_type,
            category: body.category ?? cur.category,
            is_active: body.is_active ?? cur.is_active,
          }, r);
          await r.sources.update(id, next);
          await r.activity.add('source_updated', `Source "${next.name}" updated`, 'source', id);
          return getSource(id, r);
        });
      },
    });
  }
  api.add({
    method: 'DELETE',
    path: '/api/sources/:id',
    tag: 'sources',
    summary: 'Delete a source (its posts keep their source name)',
    status: 204,
    handler: async (ctx) => {
      const id = pathId(ctx, 'Source');
      await s.tx(async (r) => {
        const src = await getSource(id, r);
        await r.sources.delete(id);
        await r.activity.add('source_deleted', `Source "${src.name}" deleted`, 'source', id);
      });
      ctx.res.statusCode = 204;
      ctx.res.end();
      return undefined;
    },
  });

  api.add({
    method: 'GET',
    path: '/api/categories',
    tag: 'categories',
    summary: 'List categories',
    response: Type.Array(CategorySchema),
    handler: () => s.categories.list(),
  });
  api.add({
    method: 'POST',
    path: '/api/categories',
    tag: 'categories',
    summary: 'Create a category',
    body: CategoryCreate,
    status: 201,
    response: CategorySchema,
    errors: [409],
    handler: (_ctx, body: { name: string; is_active?: boolean }) => {
      const name = body.name.trim();
      if (!name) throw new HttpError(422, 'body/name must not be blank', { code: 'validation_error' });
      return s.tx(async (r) => {
        if (await r.categories.byName(name)) throw conflict(`Category "${name}" already exists`);
        const c = await r.categories.create(name, body.is_active ?? true);
        await r.activity.add('category_created', `Category "${c.name}" created`, 'category', c.id);
        return c;
      });
    },
  });
  api.add({
    method: 'GET',
    path: '/api/categories/:id',
    tag: 'categories',
    summary: 'Get one category',
    response: CategorySchema,
    handler: (ctx) => getCategory(pathId(ctx, 'Category')),
  });
  for (const method of ['PUT', 'PATCH'] as const) {
    api.add({
      method,
      path: '/api/categories/:id',
      tag: 'categories',
      summary: 'Update a category; a rename also renames it on its sources and posts',
      body: CategoryUpdate,
      response: CategorySchema,
      errors: [409],
      handler: (ctx, body: { name?: string; is_active?: boolean }) => {
        const id = pathId(ctx, 'Category');
        return s.tx(async (r) => {
          const cur = await getCategory(id, r);
          const name = body.name === undefined ? cur.name : body.name.trim();
          if (!name) throw new HttpError(422, 'body/name must not be blank', { code: 'validation_error' });
          const other = await r.categories.byName(name);
          if (other && other.id !== id) throw conflict(`Category "${name}" already exists`);
          await r.categories.update(id, name, body.is_active ?? cur.is_active);
          if (name !== cur.name) {
            await r.sources.renameCategory(cur.name, name);
            await r.posts.renameCategory(cur.name, name);
          }
          await r.activity.add('category_updated', `Category "${name}" updated`, 'category', id);
          return getCategory(id, r);
        });
      },
    });
  }
}

function checkSourceUrl(type: SourceType, url: string): void {
  if (type === 'hackernews' && url === '') return;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new HttpError(422, `body/url must be an absolute http or https URL${type === 'hackernews' ? ' (or empty for the top stories)' : ''}`, {
      code: 'validation_error',
    });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new HttpError(422, 'body/url must use http or https', { code: 'validation_error' });
  if (u.username || u.password) throw new HttpError(422, 'body/url must not carry credentials', { code: 'validation_error' });
}
