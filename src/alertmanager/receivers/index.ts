/**
 * Every integration of every receiver in a loaded alertmanager.yml, in 0.25's order (the Receiver
 * struct's: discord, email, pagerduty, slack, webhook, opsgenie, wechat, pushover, victorops, sns,
 * telegram, webex; then msteams, which ctl adds), each with its HTTP client (http_config).
 */
import type { Egress } from '../../egress/index.js';
import { HttpClient } from './http.js';
import { webhookIntegration } from './webhook.js';
import { slackIntegration } from './slack.js';
import { pagerdutyIntegration } from './pagerduty.js';
import { opsgenieIntegration } from './opsgenie.js';
import { victoropsIntegration } from './victorops.js';
import { pushoverIntegration } from './pushover.js';
import { wechatIntegration } from './wechat.js';
import { telegramIntegration } from './telegram.js';
import { discordIntegration, msteamsIntegration, webexIntegration } from './chat-webhooks.js';
import { emailIntegration } from './email.js';
import { snsIntegration } from './sns.js';
import type { Integration } from './types.js';

export type { Attempt, Integration, Notification, NotifyAlert } from './types.js';

type Obj = Record<string, any>;
type Build = (c: Obj, index: number, http: HttpClient) => Integration;

const HTTP_KINDS: [string, Build][] = [
  ['discord_configs', discordIntegration],
  ['email_configs', () => undefined as never],
  ['pagerduty_configs', pagerdutyIntegration],
  ['slack_configs', slackIntegration],
  ['webhook_configs', webhookIntegration],
  ['opsgenie_configs', opsgenieIntegration],
  ['wechat_configs', wechatIntegration],
  ['pushover_configs', pushoverIntegration],
  ['victorops_configs', victoropsIntegration],
  ['sns_configs', snsIntegration],
  ['telegram_configs', telegramIntegration],
  ['webex_configs', webexIntegration],
  ['msteams_configs', msteamsIntegration],
];

/**
 * Integrations by receiver name. `timeout` gives the time left for one request (until the next
 * flush is due, as 0.25 bounds a notification by its group_interval).
 */
export function buildIntegrations(receivers: readonly Obj[], egress: Egress): Map<string, Integration[]> {
  const out = new Map<string, Integration[]>();
  for (const r of receivers) {
    const list: Integration[] = [];
    for (const [key, build] of HTTP_KINDS) {
      ((r[key] ?? []) as Obj[]).forEach((c, index) => {
        if (key === 'email_configs') list.push(emailIntegration(c, index, egress));
        else list.push(build(c, index, new HttpClient(egress, c.http_config)));
      });
    }
    out.set(String(r.name), list);
  }
  return out;
}
