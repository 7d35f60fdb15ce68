/**
 * Alertmanager's `--web.config.file` (the Prometheus exporter-toolkit format), for any TCP listener
 * (ctl.yaml `servers.<name>.web-config-file`): `basic_auth_users` (bcrypt hashes), `tls_server_config`
 * (certificate, client certificates, versions, cipher suites) and `http_server_config` (response
 * headers). Read strictly, as exporter-toolkit does: an unknown key is an error naming it. Paths in
 * the file are relative to the file's directory.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import YAML from 'yaml';

export type ClientAuthType = 'NoClientCert' | 'RequestClientCert' | 'RequireAnyClientCert' | 'VerifyClientCertIfGiven' | 'RequireAndVerifyClientCert';

export interface WebConfig {
  file: string;
  /** user → bcrypt hash; empty: no authentication. */
  users: Map<string, string>;
  /** Response headers added to every answer. */
  headers: Record<string, string>;
  tls?: {
    cert: string;
    key: string;
    ca?: string;
    clientAuth: ClientAuthType;
    minVersion?: SecureContextOptions['minVersion'];
    maxVersion?: SecureContextOptions['maxVersion'];
    ciphers?: string;
    honorCipherOrder: boolean;
    /** Accepted client certificate SANs (DNS, email, IP, URI); empty: any verified one. */
    allowedSans: string[];
  };
}

const TOP = new Set(['tls_server_config', 'http_server_config', 'basic_auth_users']);
const TLS_KEYS = new Set(['cert_file', 'key_file', 'client_auth_type', 'client_ca_file', 'cipher_suites', 'curve_preferences', 'min_version', 'max_version', 'prefer_server_cipher_suites', 'client_allowed_sans']);
const HTTP_KEYS = new Set(['http2', 'headers']);
/** The headers exporter-toolkit lets a web config set. */
const ALLOWED_HEADERS = new Set(['Strict-Transport-Security', 'X-Frame-Options', 'X-Content-Type-Options', 'X-XSS-Protection', 'Content-Security-Policy']);
const CLIENT_AUTH: ClientAuthType[] = ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'];
const VERSIONS: Record<string, SecureContextOptions['minVersion']> = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' };
/** Go's cipher suite names (crypto/tls) → OpenSSL's. TLS 1.3 suites are not configurable, in Go either. */
const CIPHERS: Record<string, string> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
};

function strictKeys(o: Record<string, unknown>, known: Set<string>, type: string, file: string): void {
  for (const k of Object.keys(o)) if (!known.has(k)) throw new Error(`${file}: field ${k} not found in type ${type}`);
}

function mapping(v: unknown, what: string, file: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${file}: ${what} must be a mapping`);
  return v as Record<string, unknown>;
}

/** Read and check a web config file; throws an Error naming the file and the problem. */
export function loadWebConfig(file: string): WebConfig {
  let doc: unknown;
  try {
    doc = YAML.parse(readFileSync(file, 'utf8')) ?? {};
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`);
  }
  const o = mapping(doc, 'the web config', file);
  strictKeys(o, TOP, 'web.Config', file);
  const dir = dirname(file);
  const path = (p: string) => (isAbsolute(p) ? p : join(dir, p));
  const read = (p: string, what: string) => {
    try {
      return readFileSync(path(p), 'utf8');
    } catch (e) {
      throw new Error(`${file}: ${what} ${p}: ${(e as Error).message}`);
    }
  };

  const users = new Map<string, string>();
  for (const [user, hash] of Object.entries(mapping(o.basic_auth_users, 'basic_auth_users', file))) {
    if (typeof hash !== 'string' || !/^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/.test(hash)) throw new Error(`${file}: basic_auth_users.${user} is not a bcrypt hash`);
    users.set(user, hash);
  }

  const http = mapping(o.http_server_config, 'http_server_config', file);
  strictKeys(http, HTTP_KEYS, 'web.HTTPConfig', file);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(mapping(http.headers, 'http_server_config.headers', file))) {
    const canonical = [...ALLOWED_HEADERS].find((h) => h.toLowerCase() === name.toLowerCase());
    if (!canonical) throw new Error(`${file}: HTTP header ${JSON.stringify(name)} can not be configured`);
    headers[canonical] = String(value);
  }

  const config: WebConfig = { file, users, headers };
  if (o.tls_server_config !== undefined && o.tls_server_config !== null) {
    const t = mapping(o.tls_server_config, 'tls_server_config', file);
    strictKeys(t, TLS_KEYS, 'web.TLSConfig', file);
    if (typeof t.cert_file !== 'string' || !t.cert_file) throw new Error(`${file}: missing cert_file`);
    if (typeof t.key_file !== 'string' || !t.key_file) throw new Error(`${file}: missing key_file`);
    const clientAuth = (t.client_auth_type ?? 'NoClientCert') as ClientAuthType;
    if (!CLIENT_AUTH.includes(clientAuth)) throw new Error(`${file}: Invalid ClientAuth: ${String(t.client_auth_type)}`);
    const version = (key: 'min_version' | 'max_version') => {
      const v = t[key];
      if (v === undefined || v === null) return undefined;
      const mapped = VERSIONS[String(v)];
      if (!mapped) throw new Error(`${file}: unknown TLS version: ${String(v)}`);
      return mapped;
    };
    let ciphers: string | undefined;
    if (t.cipher_suites !== undefined && t.cipher_suites !== null) {
      if (!Array.isArray(t.cipher_suites)) throw new Error(`${file}: cipher_suites must be a list`);
      ciphers = t.cipher_suites
        .map((c) => {
          const mapped = CIPHERS[String(c)];
          if (!mapped) throw new Error(`${file}: unknown cipher: ${String(c)}`);
          return mapped;
        })
        .join(':');
    }
    const sans = t.client_allowed_sans ?? [];
    if (!Array.isArray(sans)) throw new Error(`${file}: client_allowed_sans must be a list`);
    config.tls = {
      cert: read(t.cert_file, 'cert_file'),
      key: read(t.key_file, 'key_file'),
      ...(typeof t.client_ca_file === 'string' && t.client_ca_file ? { ca: read(t.client_ca_file, 'client_ca_file') } : {}),
      clientAuth,
      minVersion: version('min_version') ?? 'TLSv1.2',
      maxVersion: version('max_version'),
      ciphers,
      honorCipherOrder: t.prefer_server_cipher_suites !== false,
      allowedSans: sans.map(String),
    };
    if ((clientAuth === 'RequireAndVerifyClientCert' || clientAuth === 'VerifyClientCertIfGiven') && !config.tls.ca) {
      throw new Error(`${file}: client_ca_file is required for client_auth_type ${clientAuth}`);
    }
  }
  return config;
}

/** The TLS server options of a web config (Node's names). */
export function tlsServerOptions(c: NonNullable<WebConfig['tls']>): TlsOptions {
  return {
    cert: c.cert,
    key: c.key,
    ...(c.ca ? { ca: c.ca } : {}),
    // Certificates are asked for, and checked by OpenSSL only when they must be valid; the softer
    // modes are decided per request (web-auth.ts), as Go's tls.ClientAuthType does.
    requestCert: c.clientAuth !== 'NoClientCert',
    rejectUnauthorized: c.clientAuth === 'RequireAndVerifyClientCert',
    minVersion: c.minVersion,
    ...(c.maxVersion ? { maxVersion: c.maxVersion } : {}),
    ...(c.ciphers ? { ciphers: c.ciphers } : {}),
    honorCipherOrder: c.honorCipherOrder,
  };
}
