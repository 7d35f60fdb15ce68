/**
 * `POST /v1/issues/report`: a quota or key-issuance failure reported to an issue tracker with a
 * GitHub-compatible issues API (`POST {url}/repos/{owner}/{repo}/issues`), through the egress layer.
 * Configured in ctl.yaml `gateway.issue_tracker: {url, repository, token | token_env, labels}`.
 */
import type { Egress } from '../../egress/index.js';
import { GatewayError } from '../errors.js';

export interface IssueTrackerConfig {
  /** API base, e.g. https://api.github.com. */
  url: string;
  /** owner/name. */
  repository: string;
  token: string;
  labels: string[];
}

/** ctl.yaml `gateway.issue_tracker`; undefined when absent (the route then answers 503). */
export function issueTrackerConfig(config: Record<string, unknown>, env: NodeJS.ProcessEnv): IssueTrackerConfig | undefined {
  const t = config.issue_tracker;
  if (t === undefined || t === null) return undefined;
  if (typeof t !== 'object' || Array.isArray(t)) throw new Error('ctl.yaml gateway.issue_tracker must be a mapping');
  const o = t as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!['url', 'repository', 'token', 'token_env', 'labels'].includes(k)) throw new Error(`ctl.yaml gateway.issue_tracker: unknown field ${k}`);
  const url = o.url ?? 'https://api.github.com';
  if (typeof url !== 'string' || !/^https?:\/\/[^/]+/.test(url)) throw new Error('ctl.yaml gateway.issue_tracker.url must be an http(s) URL');
  if (typeof o.repository !== 'string' || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(o.repository)) throw new Error('ctl.yaml gateway.issue_tracker.repository must be owner/name');
  const tokenEnv = o.token_env ?? 'CTL_ISSUE_TRACKER_TOKEN';
  if (typeof tokenEnv !== 'string') throw new Error('ctl.yaml gateway.issue_tracker.token_env must be a variable name');
  const token = typeof o.token === 'string' ? o.token : env[tokenEnv];
  if (!token) throw new Error(`ctl.yaml gateway.issue_tracker needs a token (token, or the environment variable ${tokenEnv})`);
  const labels = o.labels ?? ['ctl-gateway'];
  if (!Array.isArray(labels) || !labels.every((l) => typeof l === 'string')) throw new Error('ctl.yaml gateway.issue_tracker.labels must be a list of strings');
  return { url: url.replace(/\/+$/, ''), repository: o.repository, token, labels };
}

export interface IssueReport {
  title: string;
  body: string;
  labels: string[];
}

/** File the issue; answers the tracker's number and URL. Tracker failures are 502 with its status. */
export async function fileIssue(egress: Egress, cfg: IssueTrackerConfig, report: IssueReport): Promise<{ number: number | null; url: string | null }> {
  let res;
  try {
    res = await egress.request(`${cfg.url}/repos/${cfg.repository}/issues`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${cfg.token}`,
        accept: 'application/vnd.github+json',
        'content-type': 'application/json',
        'user-agent': 'ctl-gateway',
      },
      body: JSON.stringify({ title: report.title, body: report.body, labels: [...new Set([...cfg.labels, ...report.labels])] }),
      headersTimeout: 15_000,
      bodyTimeout: 15_000,
    });
  } catch (e) {
    throw new GatewayError('remote', `issue tracker unreachable: ${(e as Error).message}`, { code: 'tracker_unreachable' });
  }
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode > 299) throw new GatewayError('remote', `issue tracker answered ${res.statusCode}: ${text.slice(0, 300)}`, { code: 'tracker_error' });
  let j: { number?: unknown; html_url?: unknown; url?: unknown } = {};
  try {
    j = JSON.parse(text) as typeof j;
  } catch {
    // a 2xx without JSON: filed, number unknown
  }
  return { number: typeof j.number === 'number' ? j.number : null, url: typeof j.html_url === 'string' ? j.html_url : typeof j.url === 'string' ? j.url : null };
}
