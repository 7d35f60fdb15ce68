/**
 * http_config `oauth2`: the client-credentials grant (as prometheus/common does it through
 * golang.org/x/oauth2): a token from `token_url` (client id and secret in a Basic header, `scopes`
 * and `endpoint_params` in the form), kept until shortly before it expires, sent as a Bearer token.
 */
import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import type { Egress } from '../../egress/index.js';
import { goQueryEncode } from './pushover.js';
import { USER_AGENT } from './types.js';

type Obj = Record<string, any>;

/** A token is renewed this long before its stated expiry. */
const EARLY_MS = 10_000;

export class OAuth2TokenSource {
  private token = '';
  private expiresAt = 0;

  constructor(
    private readonly egress: Egress,
    private readonly config: Obj,
    private readonly dispatcher: () => Dispatcher,
  ) {}

  async bearer(timeoutMs: number): Promise<string> {
    if (this.token && Date.now() < this.expiresAt) return this.token;
    const c = this.config;
    const secret = c.client_secret_file ? readFileSync(c.client_secret_file, 'utf8').trim() : (c.client_secret ?? '');
    const params: [string, string][] = [['grant_type', 'client_credentials']];
    if (c.scopes?.length) params.push(['scope', (c.scopes as string[]).join(' ')]);
    for (const [k, v] of Object.entries((c.endpoint_params ?? {}) as Record<string, string>)) params.push([k, v]);
    const basic = Buffer.from(`${encodeURIComponent(c.client_id ?? '')}:${encodeURIComponent(secret)}`).toString('base64');
    const res = await this.egress.request(
      c.token_url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${basic}`, 'User-Agent': USER_AGENT },
        body: goQueryEncode(params),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      this.dispatcher(),
    );
    const text = await res.body.text();
    let answer: { access_token?: string; expires_in?: number | string; error?: string } = {};
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      // not JSON: no token
    }
    if (res.statusCode < 200 || res.statusCode >= 300 || !answer.access_token) {
      throw new Error(`oauth2: cannot fetch token: ${res.statusCode}${answer.error ? ` ${answer.error}` : ''}`);
    }
    this.token = answer.access_token;
    const lifetime = Number(answer.expires_in ?? 0) * 1000;
    this.expiresAt = lifetime > 0 ? Date.now() + lifetime - EARLY_MS : Number.POSITIVE_INFINITY;
    return this.token;
  }
}
