import { Type } from '@sinclair/typebox';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import type { ProposalStatus } from '../data/proposals.js';
import type { StylePatch } from '../data/style.js';
import { requireGateway } from '../gateway-access.js';
import { generateProposals } from '../proposals/generate.js';
import type { Services } from '../services.js';
import { type ApiRegistry, pathId, queryEnum, queryInt } from './registry.js';
import { Proposal, ProposalDecision, ProposalsGenerated, Style, StyleUpdate } from './schemas.js';

export function styleRoutes(api: ApiRegistry, s: Services): void {
  api.add({
    method: 'GET',
    path: '/api/style',
    tag: 'style',
    summary: 'The current style configuration (latest version)',
    response: Style,
    handler: () => s.style.current(),
  });
  for (const method of ['PUT', 'PATCH'] as const) {
    api.add({
      method,
      path: '/api/style',
      tag: 'style',
      summary: 'Update the style; fields not sent keep their value; every update is a new version',
      body: StyleUpdate,
      response: Style,
      handler: (_ctx, body: StylePatch & Record<string, unknown>) => {
        const patch: StylePatch = {};
        if (body.tone !== undefined) patch.tone = body.tone.trim();
        if (body.topics !== undefined) patch.topics = [...new Set(body.topics.map((t) => t.trim()).filter(Boolean))];
        if (body.hashtag_policy !== undefined) patch.hashtag_policy = body.hashtag_policy;
        if (body.thread_preference !== undefined) patch.thread_preference = body.thread_preference;
        return s.tx(async (r) => {
          const v = await r.style.update(patch, 'api');
          await r.activity.add('style_updated', `Style updated (version ${v.version})`, 'style', v.id);
          return v;
        });
      },
    });
  }
  api.add({
    method: 'GET',
    path: '/api/style/history',
    tag: 'style',
    summary: 'Style versions, newest first',
    query: [{ name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, description: 'how many versions' }],
    response: Type.Array(Style),
    handler: (ctx) => s.style.history(queryInt(ctx, 'limit', 20, 1, 100)),
  });

  const STATUSES = ['pending', 'approved', 'rejected'] as const;
  api.add({
    method: 'GET',
    path: '/api/proposals',
    tag: 'proposals',
    summary: 'Improvement proposals, newest first',
    query: [{ name: 'status', schema: { enum: [...STATUSES] }, description: 'only proposals with this status' }],
    response: Type.Array(Proposal),
    handler: (ctx) => s.proposals.list(queryEnum<ProposalStatus>(ctx, 'status', STATUSES)),
  });
  api.add({
    method: 'POST',
    path: '/api/proposals/generate',
    tag: 'proposals',
    summary: 'Ask the model for style proposals from the best and worst posts and reviewer feedback',
    status: 201,
    response: ProposalsGenerated,
    errors: [400, 409, 502, 503],
    handler: async () => {
      const gateway = requireGateway(s.gateway);
      const model = (await s.model.current()).model_id;
      if (!model) throw badRequest('no model configured: set one with PUT /api/settings/model (ctl pipeline model set) or PIPELINE_MODEL');
      return await generateProposals(gateway, model, { ...s, timeoutMs: s.config.llmTimeoutMs });
    },
  });
  api.add({
    method: 'GET',
    path: '/api/proposals/:id',
    tag: 'proposals',
    summary: 'Get one proposal',
    response: Proposal,
    handler: async (ctx) => {
      const id = pathId(ctx, 'Proposal');
      const p = await s.proposals.get(id);
      if (!p) throw notFound(`Proposal ${id} not found`);
      return p;
    },
  });
  api.add({
    method: 'PATCH',
    path: '/api/proposals/:id',
    tag: 'proposals',
    summary: 'Approve or reject a pending proposal; approving writes a new style version',
    body: ProposalDecision,
    response: Proposal,
    errors: [409],
    handler: (ctx, body: { status: 'approved' | 'rejected' }) => {
      const id = pathId(ctx, 'Proposal');
      return s.tx(async (r) => {
        const p = await r.proposals.get(id);
        if (!p) throw notFound(`Proposal ${id} not found`);
        if (p.status !== 'pending') throw conflict(`Proposal ${id} is already ${p.status}`);
        let versionId: number | null = null;
        if (body.status === 'approved') versionId = (await r.style.update(p.proposed_value, `proposal:${id}`)).id;
        await r.proposals.decide(id, body.status, versionId);
        await r.activity.add(
          `proposal_${body.status}`,
          `Proposal ${id} ${body.status}${versionId ? ` (style version ${versionId})` : ''}`,
          'proposal',
          id,
        );
        return (await r.proposals.get(id))!;
      });
    },
  });
}
