/**
 * An agent skill as a SKILL.md file (the agent-skills folder format): YAML front matter with the
 * name, description and, when set, model and temperature; then the prompt as the body.
 */
import { stringify } from 'yaml';
import type { AgentSkillRecord } from './store.js';

export function skillMarkdown(s: AgentSkillRecord): string {
  const front: Record<string, unknown> = { name: s.name, description: s.description };
  if (s.model !== undefined) front.model = s.model;
  if (s.temperature !== undefined) front.temperature = s.temperature;
  return `---\n${stringify(front, { lineWidth: 0 })}---\n\n${s.prompt.trimEnd()}\n`;
}
