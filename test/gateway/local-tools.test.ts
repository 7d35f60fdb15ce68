/**
 * Local tooling against fake CLI binaries on a temporary PATH and a temporary home: detection
 * (installed, runnable, version, runtime mode, reason), settings read with keys masked, applied with a
 * backup and the other settings kept, restored (an absent file removed again); the intercept-proxy
 * alias; ACP agents with the detection cache, custom agents and refresh.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startGateway, type GatewayHarness } from './harness.js';

let gw: GatewayHarness;
const root = mkdtempSync(join(tmpdir(), 'ctl-tools-'));
const bin = join(root, 'bin');
const home = join(root, 'home');
const ADMIN = 'sk-tools-admin-000000000000';
const M = { Authorization: `Bearer ${ADMIN}` };

function script(name: string, text: string): void {
  writeFileSync(join(bin, name), text);
  chmodSync(join(bin, name), 0o755);
}

beforeAll(async () => {
  mkdirSync(bin, { recursive: true });
  mkdirSync(join(home, '.claude'), { recursive: true });
  script('claude', '#!/bin/sh\necho "1.0.42 (Claude Code)"\n');
  script('opencode', "#!/usr/bin/env node\nconsole.log('opencode 0.3.1')\n");
  script('aider', '#!/bin/sh\necho "boom: missing module" >&2\nexit 1\n');
  script('goose', '#!/bin/sh\necho "goose 1.2.0"\n');
  script('my-agent', '#!/bin/sh\necho "my-agent version 3.4.5"\n');
  writeFileSync(join(bin, 'codex-acp'), 'not executable');
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ theme: 'dark', env: { OTHER: 'x' } }));
  writeFileSync(join(home, '.aider.conf.yml'), '# my aider settings\ndark-mode: true\n');
  gw = await startGateway({
    yaml: `providers:\n  - {id: an, kind: anthropic, base_url: "http://127.0.0.1:9", api_key: k, models: [claude]}\nkeys:\n  - {name: admin, key: "${ADMIN}", models: ["*"], scopes: [management]}\n`,
    env: { PATH: `${bin}:${dirname(process.execPath)}` },
    config: { cli_tools: { home } },
  });
});
afterAll(async () => {
  await gw.close();
  rmSync(root, { recursive: true, force: true });
});

describe('CLI tools', () => {
  it('detects what is installed, what runs, versions and runtime modes, and why not', async () => {
    const r = await gw.req('GET', '/api/cli-tools/all-statuses');
    expect(r.status, r.text).toBe(200);
    const t = r.json.tools;
    expect(t.claude).toMatchObject({ installed: true, runnable: true, version: '1.0.42', runtimeMode: 'shell', commandPath: join(bin, 'claude'), reason: null });
    expect(t.opencode).toMatchObject({ installed: true, runnable: true, version: '0.3.1', runtimeMode: 'node' });
    expect(t.aider).toMatchObject({ installed: true, runnable: false, version: null });
    expect(t.aider.reason).toMatch(/^exited 1: boom: missing module/);
    expect(t.gemini).toMatchObject({ installed: false, runnable: false, commandPath: null, reason: 'gemini not found on PATH' });
    expect((await gw.req('GET', '/api/cli-tools/claude/status')).json).toMatchObject({ id: 'claude', installed: true });
    expect((await gw.req('GET', '/api/cli-tools/runtime/opencode')).json).toMatchObject({ runtimeMode: 'node', settingsPath: join(home, '.config/opencode/opencode.json') });
    expect((await gw.req('GET', '/api/cli-tools/nope/status')).status).toBe(404);
  });

  it('applies gateway settings with a backup, keeps the rest, masks keys, and restores', async () => {
    const before = readFileSync(join(home, '.claude', 'settings.json'), 'utf8');
    const a = await gw.req('POST', '/api/cli-tools/apply', { tool: 'claude', apiKey: 'sk-gw-secret-1234', model: 'an/claude' }, M, { tcp: true });
    expect(a.status, a.text).toBe(200);
    const url = gw.tcpUrl;
    expect(a.json).toMatchObject({ applied: true, tool: 'claude', baseUrl: url, backup: { tool: 'claude', absent: false } });
    const written = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
    expect(written).toEqual({ theme: 'dark', env: { OTHER: 'x', ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: 'sk-gw-secret-1234', ANTHROPIC_MODEL: 'an/claude' } });
    const s = await gw.req('GET', '/api/cli-tools/claude-settings', undefined, M, { tcp: true });
    expect(s.json).toMatchObject({ tool: 'claude', exists: true, baseUrl: url, hasKey: true, model: 'an/claude', pointsAtGateway: true });
    expect(s.text).not.toContain('sk-gw-secret');
    expect((await gw.req('GET', '/api/cli-tools/tool-a-settings')).json.tool).toBe('claude');

    const back = await gw.req('POST', '/api/cli-tools/claude/restore', {});
    expect(back.status, back.text).toBe(200);
    expect(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')).toBe(before);
    expect((await gw.req('GET', '/api/cli-tools/backups?tool=claude')).json.backups).toHaveLength(2); // the apply's and the restore's

    // YAML keeps its comments; a .env file that did not exist is created, and restoring removes it.
    expect((await gw.req('POST', '/api/cli-tools/apply', { tool: 'aider', apiKey: 'k1', baseUrl: 'http://127.0.0.1:20128/', model: 'an/claude' })).status).toBe(200);
    expect(readFileSync(join(home, '.aider.conf.yml'), 'utf8')).toBe('# my aider settings\ndark-mode: true\nopenai-api-base: http://127.0.0.1:20128/v1\nopenai-api-key: k1\nmodel: openai/an/claude\n');
    expect((await gw.req('POST', '/api/cli-tools/apply', { tool: 'gemini', apiKey: 'k2', baseUrl: 'http://127.0.0.1:20128' })).json.backup.absent).toBe(true);
    expect(readFileSync(join(home, '.gemini', '.env'), 'utf8')).toBe('GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:20128\nGEMINI_API_KEY=k2\n');
    expect((await gw.req('POST', '/api/cli-tools/gemini/restore', {})).status).toBe(200);
    expect(existsSync(join(home, '.gemini', '.env'))).toBe(false);
  });

  it('refuses what it cannot do, changing nothing', async () => {
    writeFileSync(join(home, '.claude', 'settings.json'), '{not json');
    const r = await gw.req('POST', '/api/cli-tools/apply', { tool: 'claude', apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/nothing was changed/);
    expect(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')).toBe('{not json');
    expect((await gw.req('POST', '/api/cli-tools/apply', { tool: 'claude', apiKey: 'k' })).json.error.message).toMatch(/baseUrl is required over the control socket/);
    expect((await gw.req('POST', '/api/cli-tools/opencode/restore', {})).status).toBe(404);
  });

  it('refuses values with line breaks before writing an env or YAML file', async () => {
    const env = join(home, '.gemini', '.env');
    const before = existsSync(env) ? readFileSync(env, 'utf8') : undefined;
    for (const body of [
      { tool: 'gemini', apiKey: 'k\nGOOGLE_GEMINI_BASE_URL=http://evil.example', baseUrl: 'http://127.0.0.1:20128' },
      { tool: 'gemini', apiKey: 'k', baseUrl: 'http://127.0.0.1:20128', model: 'm\r\nX=1' },
      { tool: 'aider', apiKey: 'k\u2028x: 1', baseUrl: 'http://127.0.0.1:20128' },
    ]) {
      const r = await gw.req('POST', '/api/cli-tools/apply', body);
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.message).toMatch(/must not contain line breaks .*nothing was changed/);
    }
    expect(existsSync(env) ? readFileSync(env, 'utf8') : undefined).toBe(before);
  });

  it('intercept proxy: a model name a tool sends becomes a gateway alias', async () => {
    expect((await gw.req('POST', '/api/cli-tools/intercept-proxy/alias', { from: 'claude-sonnet-4', to: 'an/claude' })).status).toBe(201);
    const p = await gw.req('GET', '/api/cli-tools/intercept-proxy', undefined, M, { tcp: true });
    expect(p.json).toMatchObject({ baseUrl: gw.tcpUrl, endpoints: { openai: `${gw.tcpUrl}/v1` } });
    expect(p.json.aliases).toContainEqual({ from: 'claude-sonnet-4', to: 'an/claude', source: 'api' });
    expect((await gw.req('POST', '/api/cli-tools/intercept-proxy/alias', { from: 'x', to: 'x' })).status).toBe(400);
  });
});

describe('ACP agents', () => {
  it('detects the known agents, caches for 60 s, takes custom agents and refreshes', async () => {
    const a = await gw.req('GET', '/api/acp/agents');
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ cacheTtlMs: 60000, summary: { total: 4, installed: 1, notFound: 3, builtIn: 4, custom: 0 } });
    expect(a.json.agents.find((x: { id: string }) => x.id === 'goose')).toMatchObject({ installed: true, version: '1.2.0', protocol: 'acp', spawnArgs: ['acp'], isCustom: false });
    expect(a.json.agents.find((x: { id: string }) => x.id === 'codex')).toMatchObject({ installed: false }); // not executable
    const again = await gw.req('GET', '/api/acp/agents');
    expect(again.json.cacheAge).toBeGreaterThanOrEqual(0);

    const add = await gw.req('POST', '/api/acp/agents', { id: 'mine', name: 'My agent', binary: 'my-agent', providerAlias: 'an', spawnArgs: ['--acp'], protocol: 'acp' });
    expect(add.status, add.text).toBe(201);
    expect(add.json.agent).toMatchObject({ id: 'mine', installed: true, version: '3.4.5', isCustom: true, providerAlias: 'an' });
    expect(add.json.summary).toMatchObject({ total: 5, installed: 2, custom: 1 });
    script('claude-code-acp', '#!/bin/sh\necho 0.9.0\n');
    expect((await gw.req('GET', '/api/acp/agents')).json.summary.installed).toBe(2); // cached
    expect((await gw.req('POST', '/api/acp/agents', { action: 'refresh' })).json.summary.installed).toBe(3);
    expect((await gw.req('DELETE', '/api/acp/agents?id=gemini')).status).toBe(400);
    expect((await gw.req('DELETE', '/api/acp/agents?id=mine')).json).toEqual({ id: 'mine', deleted: true });
    expect((await gw.req('POST', '/api/acp/agents', { id: 'Bad Id', name: 'x', binary: 'x' })).status).toBe(400);
    expect((await gw.req('POST', '/api/acp/agents', { action: 'explode' })).status).toBe(400);
  });

  it('runs no command of the caller: a versionCommand, a path or shell syntax in binary is a 400, and nothing runs', async () => {
    const touched = join(root, 'touched');
    const refused = [
      { id: 'evil', name: 'x', binary: 'my-agent', versionCommand: `touch ${touched}` },
      { id: 'evil', name: 'x', binary: 'touch', versionCommand: `touch ${touched}` },
      { id: 'evil', name: 'x', binary: '/usr/bin/touch' },
      { id: 'evil', name: 'x', binary: `../bin/my-agent` },
      { id: 'evil', name: 'x', binary: `my-agent;touch ${touched}` },
      { id: 'evil', name: 'x', binary: '$(touch x)' },
      { id: 'evil', name: 'x', binary: '-rf' },
    ];
    for (const body of refused) {
      const r = await gw.req('POST', '/api/acp/agents', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.message).toMatch(/versionCommand is not accepted|binary must be a program name/);
    }
    expect((await gw.req('POST', '/api/acp/agents', { action: 'refresh' })).status).toBe(200);
    expect(existsSync(touched)).toBe(false);
    expect((await gw.req('GET', '/api/acp/agents')).json.agents.some((a: { id: string }) => a.id === 'evil')).toBe(false);
  });
});
