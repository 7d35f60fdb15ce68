// Settings: login requirement, system prompt, thinking budget, IP filter, MCP and A2A, the password.
import { useEffect, useState } from 'preact/hooks';
import { api, Card, Loading, useAction, useApi } from '../ui';

export function SettingsPage() {
  const settings = useApi<any>('/api/settings');
  const [draft, setDraft] = useState<any>(undefined);
  const [run, note] = useAction();
  useEffect(() => {
    if (settings.data) setDraft(structuredClone(settings.data));
  }, [settings.data]);
  const [pw, setPw] = useState({ current: '', next: '' });
  if (!draft) return <Loading r={settings} />;
  const set = (path: string[], v: unknown) => {
    const d = structuredClone(draft);
    let o = d;
    for (const k of path.slice(0, -1)) o = o[k];
    o[path[path.length - 1]!] = v;
    setDraft(d);
  };
  const lines = (s: string) => s.split(/[\s,]+/).map((x) => x.trim()).filter(Boolean);
  const save = (e: Event) => {
    e.preventDefault();
    void run('Settings saved.', () =>
      api('/api/settings', {
        method: 'PATCH',
        body: { mcpEnabled: draft.mcpEnabled, a2aEnabled: draft.a2aEnabled, systemPrompt: draft.systemPrompt, thinkingBudget: draft.thinkingBudget, ipFilter: draft.ipFilter },
      }).then(settings.reload),
    );
  };
  return (
    <>
      {note}
      <Card title="Login">
        <label class="check">
          <input
            type="checkbox"
            checked={draft.requireLogin}
            onChange={(e) => {
              const on = (e.target as HTMLInputElement).checked;
              if (!on && !confirm('Without a login, anyone who can reach this port can manage the gateway. Turn the login off?')) {
                (e.target as HTMLInputElement).checked = true;
                return;
              }
              void run(on ? 'Login required.' : 'Login no longer required.', () => api('/api/settings/require-login', { method: 'PUT', body: { requireLogin: on } }).then(settings.reload));
            }}
          />{' '}
          Require a login for the dashboard and the management API
        </label>
        <form
          class="form-grid"
          aria-label="Change the password"
          onSubmit={(e) => {
            e.preventDefault();
            void run('Password changed; sign in again.', () => api('/api/auth/password', { method: 'POST', body: { password: pw.next, currentPassword: pw.current } }).then(() => location.reload()));
          }}
        >
          <label>
            Current password <input type="password" autocomplete="current-password" value={pw.current} onInput={(e) => setPw({ ...pw, current: (e.target as HTMLInputElement).value })} />
          </label>
          <label>
            New password (8 characters or more) <input type="password" autocomplete="new-password" minLength={8} required value={pw.next} onInput={(e) => setPw({ ...pw, next: (e.target as HTMLInputElement).value })} />
          </label>
          <div>
            <button type="submit">Change password</button>
          </div>
        </form>
      </Card>
      <form onSubmit={save}>
        <Card title="Requests">
          <fieldset>
            <legend>System prompt</legend>
            <label class="check">
              <input type="checkbox" checked={draft.systemPrompt.enabled} onChange={(e) => set(['systemPrompt', 'enabled'], (e.target as HTMLInputElement).checked)} /> Add to every chat request
            </label>
            <label>
              Position{' '}
              <select value={draft.systemPrompt.position} onChange={(e) => set(['systemPrompt', 'position'], (e.target as HTMLSelectElement).value)}>
                <option value="prepend">before the client's</option>
                <option value="append">after the client's</option>
              </select>
            </label>
            <label>
              Prompt <textarea rows={4} value={draft.systemPrompt.prompt} onInput={(e) => set(['systemPrompt', 'prompt'], (e.target as HTMLTextAreaElement).value)} />
            </label>
          </fieldset>
          <fieldset>
            <legend>Thinking budget</legend>
            <label>
              Mode{' '}
              <select value={draft.thinkingBudget.mode} onChange={(e) => set(['thinkingBudget', 'mode'], (e.target as HTMLSelectElement).value)}>
                <option value="passthrough">as the client asks</option>
                <option value="fixed">fixed</option>
                <option value="cap">capped</option>
              </select>
            </label>
            <label>
              Tokens <input type="number" min="1024" max="1000000" value={draft.thinkingBudget.tokens} onInput={(e) => set(['thinkingBudget', 'tokens'], Number((e.target as HTMLInputElement).value))} />
            </label>
          </fieldset>
          <fieldset>
            <legend>IP filter</legend>
            <label class="check">
              <input type="checkbox" checked={draft.ipFilter.enabled} onChange={(e) => set(['ipFilter', 'enabled'], (e.target as HTMLInputElement).checked)} /> On
            </label>
            <label>
              Allow (addresses or CIDR ranges) <textarea rows={2} value={draft.ipFilter.allow.join('\n')} onChange={(e) => set(['ipFilter', 'allow'], lines((e.target as HTMLTextAreaElement).value))} />
            </label>
            <label>
              Deny <textarea rows={2} value={draft.ipFilter.deny.join('\n')} onChange={(e) => set(['ipFilter', 'deny'], lines((e.target as HTMLTextAreaElement).value))} />
            </label>
          </fieldset>
          <fieldset>
            <legend>Agent protocols</legend>
            <label class="check">
              <input type="checkbox" checked={draft.mcpEnabled} onChange={(e) => set(['mcpEnabled'], (e.target as HTMLInputElement).checked)} /> MCP server
            </label>
            <label class="check">
              <input type="checkbox" checked={draft.a2aEnabled} onChange={(e) => set(['a2aEnabled'], (e.target as HTMLInputElement).checked)} /> A2A
            </label>
          </fieldset>
          <button type="submit" class="primary">
            Save
          </button>
        </Card>
      </form>
    </>
  );
}
