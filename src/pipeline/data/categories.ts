import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import { nowIso } from '../time.js';

interface CategoryRow {
  id: number;
  name: string;
  is_active: number;
  created_at: string;
  updated_at: string;
}

export interface Category {
  id: number;
  name: string;
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

const toCategory = (r: CategoryRow): Category => ({ ...r, is_active: r.is_active === 1 });

export class CategoriesRepo {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  list(): Category[] {
    return (this.store.prepare('SELECT * FROM categories ORDER BY name COLLATE NOCASE, id').all() as CategoryRow[]).map(toCategory);
  }

  get(id: number): Category | undefined {
    const r = this.store.prepare('SELECT * FROM categories WHERE id = ?').get(id) as CategoryRow | undefined;
    return r && toCategory(r);
  }

  byName(name: string): Category | undefined {
    const r = this.store.prepare('SELECT * FROM categories WHERE name = ? COLLATE NOCASE').get(name) as CategoryRow | undefined;
    return r && toCategory(r);
  }

  create(name: string, isActive: boolean): Category {
    const now = nowIso(this.clock);
    const id = this.store
      .prepare('INSERT INTO categories (name, is_active, created_at, updated_at) VALUES (?, ?, ?, ?)')
      .run(name, isActive ? 1 : 0, now, now).lastInsertRowid;
    return this.get(Number(id))!;
  }

  /** The category of that name, created (active) when missing. */
  ensure(name: string): Category {
    return this.byName(name) ?? this.create(name, true);
  }

  update(id: number, name: string, isActive: boolean): void {
    this.store
      .prepare('UPDATE categories SET name = ?, is_active = ?, updated_at = ? WHERE id = ?')
      .run(name, isActive ? 1 : 0, nowIso(this.clock), id);
  }
}
