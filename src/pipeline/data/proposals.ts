import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
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
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  list(status?: ProposalStatus): Proposal[] {
    const rows = status
      ? this.store.prepare('SELECT * FROM proposals WHERE status = ? ORDER BY created_at DESC, id DESC').all(status)
      : this.store.prepare('SELECT * FROM proposals ORDER BY created_at DESC, id DESC').all();
    return (rows as ProposalRow[]).map(toProposal);
  }

  get(id: number): Proposal | undefined {
    const r = this.store.prepare('SELECT * FROM proposals WHERE id = ?').get(id) as ProposalRow | undefined;
    return r && toProposal(r);
  }

  insertMany(list: NewProposal[]): number[] {
    const now = nowIso(this.clock);
    const st = this.store.prepare(
      `INSERT INTO proposals (type, title, rationale, evidence, current_value, proposed_value, status, model, created_at)
       VALUES ('style', ?, ?, ?, ?, ?, 'pending', ?, ?)`,
    );
    return list.map((p) =>
      Number(
        st.run(p.title, p.rationale, JSON.stringify(p.evidence), JSON.stringify(p.current_value), JSON.stringify(p.proposed_value), p.model, now)
          .lastInsertRowid,
      ),
    );
  }

  decide(id: number, status: 'approved' | 'rejected', styleVersionId: number | null): void {
    this.store
      .prepare('UPDATE proposals SET status = ?, decided_at = ?, style_version_id = ? WHERE id = ?')
      .run(status, nowIso(this.clock), styleVersionId, id);
  }
}
