/**
 * Model listings: `/v1/models` (chat, embedding and image models plus combos, and the
 * `<family>-gateway-no-thinking/<provider>/<model>` variants of models that can reason and accept
 * reasoning off), `/v1beta/models` (Gemini shape), `/api/tags` (Ollama shape). The list is built once
 * per catalog version.
 */
import type { Catalog } from '../../catalog.js';
import { listsNoThinkingVariant } from '../../providers/index.js';
import { noThinkingModelId } from '../../providers/capabilities.js';
import type { ModelListEntry } from '../../translate/index.js';

const cache = new WeakMap<Catalog, ModelListEntry[]>();

export function modelEntries(catalog: Catalog): ModelListEntry[] {
  const hit = cache.get(catalog);
  if (hit) return hit;
  const out: ModelListEntry[] = [];
  const variants: ModelListEntry[] = [];
  for (const p of catalog.ordered) {
    if (!p.config.enabled) continue;
    const created = Math.floor(p.config.createdAt / 1000);
    for (const spec of p.config.models) {
      if (spec.hidden) continue;
      const entry: ModelListEntry = {
        id: `${p.config.id}/${spec.id}`,
        type: spec.type,
        ownedBy: p.config.id,
        created,
        ...(spec.name ? { displayName: spec.name } : {}),
        ...(spec.contextLength ? { contextLength: spec.contextLength } : {}),
        ...(spec.maxOutputTokens ? { maxOutputTokens: spec.maxOutputTokens } : {}),
      };
      out.push(entry);
      if (spec.type === 'chat' && listsNoThinkingVariant(p.conn, spec.id)) {
        variants.push({ ...entry, id: noThinkingModelId(p.config.id, spec.id), thinking: false });
      }
    }
  }
  for (const c of catalog.combos.values()) {
    if (!c.enabled) continue;
    out.push({ id: c.name, type: 'combo', ownedBy: 'combo', created: Math.floor(c.createdAt / 1000), ...(c.description ? { displayName: c.name } : {}) });
  }
  const all = [...out, ...variants];
  cache.set(catalog, all);
  return all;
}

export function findModelEntry(catalog: Catalog, id: string): ModelListEntry | undefined {
  const bare = id.replace(/^models\//, '');
  return modelEntries(catalog).find((m) => m.id === bare);
}

/** "a chat", "an image": a model type with its indefinite article, for messages. */
export function withArticle(type: string): string {
  return `${/^[aeiou]/i.test(type) ? 'an' : 'a'} ${type}`;
}
