import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
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
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async list(): Promise<Category[]> {
    return (await this.sql.all<CategoryRow>('SELECT * FROM categories ORDER BY lower(name), id')).map(toCategory);
  }

  async get(id: number): Promise<Category | undefined> {
    const r = await this.sql.get<CategoryRow>('SELECT * FROM categories WHERE id = ?', id);
    return r && toCategory(r);
  }

  async byName(name: string): Promise<Category | undefined> {
    const r = await this.sql.get<CategoryRow>('SELECT * FROM categories WHERE lower(name) = lower(?)', name);
    return r && toCategory(r);
  }

  async create(name: string, isActive: boolean): Promise<Category> {
    const now = nowIso(this.clock);
    const id = await this.sql.insert('INSERT INTO categories (name, is_active, created_at, updated_at) VALUES (?, ?, ?, ?)', name, isActive ? 1 : 0, now, now);
    return (await this.get(id))!;
  }

  /** The category of that name, created (active) when missing. */
  async ensure(name: string): Promise<Category> {
    return (await this.byName(name)) ?? (await this.create(name, true));
  }

  async update(id: number, name: string, isActive: boolean): Promise<void> {
    await this.sql.run('UPDATE categories SET name = ?, is_active = ?, updated_at = ? WHERE id = ?', name, isActive ? 1 : 0, nowIso(this.clock), id);
  }
}
