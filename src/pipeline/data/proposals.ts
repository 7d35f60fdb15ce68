import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
import { nowIso } from '../time.js';
import { parseColumn } from './json.js';
import type { StylePatch } from './style.js';

export type ProposalStatus = 'pending' | 'approved' | 'rejected';

interface ProposalRow {
  id: number;
  type: string;
  title: string;
  rationale: string;
  evidence: string;
  current_value: string;
  proposed_value: string;
  status: ProposalStatus;
  model: string | null;
  style_version_id: number | null;
  created_at: string;
  decided_at: string | null;
}

export interface Proposal {
  id: number;
  /** Always `style` for now: a change to the style configuration. */
  type: 'style';
  title: string;
  rationale: string;
  /** Short facts the model based the proposal on (post ids, numbers, reviewer remarks). */
  evidence: string[];
  /** The style fields the proposal changes, with their values when it was made. */
  current_value: StylePatch;
  proposed_value: StylePatch;
  status: ProposalStatus;
  model: string | null;
  /** The style version written when the proposal was approved. */
  style_version_id: number | null;
  created_at: string;
  decided_at: string | null;
}

export interface NewProposal {
  title: string;
  rationale: string;
  evidence: string[];
  current_value: StylePatch;
  proposed_value: StylePatch;
  model: string | null;
}

const toProposal = (r: ProposalRow): Proposal => ({
  ...r,
  type: 'style',
  evidence: parseColumn<string[]>(r.evidence, []),
  current_value: parseColumn<StylePatch>(r.current_value, {}),
  proposed_value: parseColumn<StylePatch>(r.proposed_value, {}),
});

export class ProposalsRepo {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async list(status?: ProposalStatus): Promise<Proposal[]> {
    const rows = status
      ? await this.sql.all<ProposalRow>('SELECT * FROM proposals WHERE status = ? ORDER BY created_at DESC, id DESC', status)
      : await this.sql.all<ProposalRow>('SELECT * FROM proposals ORDER BY created_at DESC, id DESC');
    return rows.map(toProposal);
  }

  async get(id: number): Promise<Proposal | undefined> {
    const r = await this.sql.get<ProposalRow>('SELECT * FROM proposals WHERE id = ?', id);
    return r && toProposal(r);
  }

  async insertMany(list: NewProposal[]): Promise<number[]> {
    const now = nowIso(this.clock);
    const ids: number[] = [];
    for (const p of list) {
      ids.push(
        await this.sql.insert(
          `INSERT INTO proposals (type, title, rationale, evidence, current_value, proposed_value, status, model, created_at)
           VALUES ('style', ?, ?, ?, ?, ?, 'pending', ?, ?)`,
          p.title,
          p.rationale,
          JSON.stringify(p.evidence),
          JSON.stringify(p.current_value),
          JSON.stringify(p.proposed_value),
          p.model,
          now,
        ),
      );
    }
    return ids;
  }

  async decide(id: number, status: 'approved' | 'rejected', styleVersionId: number | null): Promise<void> {
    await this.sql.run('UPDATE proposals SET status = ?, decided_at = ?, style_version_id = ? WHERE id = ?', status, nowIso(this.clock), styleVersionId, id);
  }
}
