/**
 * victorops_configs: the REST endpoint `api_url` + `api_key/routing_key`, a flat JSON object (keys
 * sorted: Go marshals a map): message_type (CRITICAL, WARNING or INFO while firing, RECOVERY once
 * resolved), entity_id (the group key's SHA-256), display name, state message (cut at 20,480
 * bytes), monitoring tool and the custom fields.
 */
import { goJsonLabelSetSorted } from '../api/json.js';
import { checkAnswer, HttpClient, sendError, secretOf, urlOf } from './http.js';
import { expander } from './template-text.js';
import { failed, groupKeyHash, groupStatus, truncateBytes, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

const ALLOWED = new Set(['INFO', 'WARNING', 'CRITICAL']);

export function victoropsIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return {
    kind: 'victorops',
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n);
      let messageType = t(c.message_type);
      const firing = groupStatus(n.alerts) === 'firing';
      if (firing && !t.error && !ALLOWED.has(messageType)) return failed(`unsupported message type: ${messageType}`, false);
      if (!firing) messageType = 'RECOVERY';
      const msg: Record<string, string> = {
        message_type: messageType,
        entity_id: groupKeyHash(n.groupKey),
        entity_display_name: t(c.entity_display_name),
        state_message: truncateBytes(t(c.state_message), 20480),
        monitoring_tool: t(c.monitoring_tool),
      };
      for (const [k, v] of Object.entries((c.custom_fields ?? {}) as Record<string, string>)) msg[k] = t(v);
      const url = new URL(`${encodeURIComponent(secretOf(c.api_key, c.api_key_file))}/${t(c.routing_key)}`, urlOf(c.api_url)).href;
      if (t.error) return failed(t.error, false);
      try {
        return checkAnswer(await http.postJson(url, goJsonLabelSetSorted(msg) + '\n', timeLeft(n)));
      } catch (e) {
        return sendError(e);
      }
    },
  };
}
