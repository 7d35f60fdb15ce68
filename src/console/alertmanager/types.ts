/** Alertmanager API v2 objects as the console reads them. */
import type { ApiMatcher } from './matchers.js';

export interface Alert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  updatedAt: string;
  generatorURL?: string;
  receivers: Array<{ name: string }>;
  status: { state: 'active' | 'suppressed' | 'unprocessed'; silencedBy: string[]; inhibitedBy: string[] };
}

export interface AlertGroup {
  labels: Record<string, string>;
  receiver: { name: string };
  alerts: Alert[];
}

export interface Silence {
  id: string;
  matchers: ApiMatcher[];
  startsAt: string;
  endsAt: string;
  updatedAt: string;
  createdBy: string;
  comment: string;
  status: { state: 'active' | 'pending' | 'expired' };
}

export interface Status {
  cluster: { name?: string; status: string; peers: Array<{ name: string; address: string }> | null };
  config: { original: string };
  uptime: string;
  versionInfo: Record<string, string>;
}

/** A silence's ID: a UUID (any other string names no silence). */
export const SILENCE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
