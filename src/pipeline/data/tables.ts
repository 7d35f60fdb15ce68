/**
 * The pipeline's tables carry the prefix `pl_` in the shared database (beside the other components'
 * `am_`, `gw_`, `nm_` tables); its SQL names them plainly and the store's query layer
 * (src/store/sql.ts) rewrites the names once per text.
 */
import { PgText, type TablePrefix } from '../../store/sql.js';

export const PIPELINE_TABLES: TablePrefix = {
  prefix: 'pl_',
  tables: ['categories', 'sources', 'runs', 'posts', 'post_metrics', 'used_items', 'style_versions', 'proposals', 'settings', 'activity', 'images'],
};

const texts = new PgText(PIPELINE_TABLES);

/** Placeholders numbered and table names prefixed, outside quoted literals. */
export function pgPipelineText(sql: string): string {
  return texts.convert(sql);
}
