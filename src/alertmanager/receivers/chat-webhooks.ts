/**
 * The chat webhooks whose message is one small JSON document: Discord (an embed with title,
 * description and a colour by status), Webex (markdown to a room, bearer auth from http_config) and
 * Microsoft Teams (a MessageCard, as Alertmanager 0.26 added it).
 */
import { goJson } from '../api/json.js';
import { checkAnswer, HttpClient, sendError, urlOf } from './http.js';
import { expander, type Expander } from './template-text.js';
import { failed, groupStatus, truncate, truncateBytes, type Attempt, type Integration, type Notification, timeLeft } from './types.js';

type Obj = Record<string, any>;

function chatIntegration(kind: string, c: Obj, index: number, http: HttpClient, url: string, build: (t: Expander, n: Notification) => unknown): Integration {
  return {
    kind,
    index,
    sendResolved: c.send_resolved !== false,
    async send(n: Notification): Promise<Attempt> {
      const t = expander(n);
      const body = goJson(build(t, n)) + '\n';
      if (t.error) return failed(t.error, false);
      try {
        return checkAnswer(await http.postJson(url, body, timeLeft(n)), [429]);
      } catch (e) {
        return sendError(e);
      }
    },
  };
}

const DISCORD_RED = 0x992d22;
const DISCORD_GREEN = 0x2ecc71;

export function discordIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return chatIntegration('discord', c, index, http, urlOf(c.webhook_url), (t, n) => ({
    content: '',
    embeds: [
      {
        title: truncate(t(c.title), 256),
        description: truncate(t(c.message), 4096),
        color: groupStatus(n.alerts) === 'firing' ? DISCORD_RED : DISCORD_GREEN,
      },
    ],
  }));
}

export function webexIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return chatIntegration('webex', c, index, http, urlOf(c.api_url), (t) => ({
    markdown: truncateBytes(t(c.message), 7439),
    roomId: t(c.room_id) || undefined,
  }));
}

export function msteamsIntegration(c: Obj, index: number, http: HttpClient): Integration {
  return chatIntegration('msteams', c, index, http, urlOf(c.webhook_url), (t, n) => ({
    '@context': 'http://schema.org/extensions',
    type: 'MessageCard',
    title: t(c.title),
    summary: t(c.summary),
    text: t(c.text),
    themeColor: groupStatus(n.alerts) === 'firing' ? '8C1A1A' : '2DC72D',
  }));
}
