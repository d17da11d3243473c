// A remote agent's skills as MCP tools: one tool per skill, whose input is the text of the message
// to send and optional structured data (a data part), since a card describes skills in words only.
import type { AgentCard } from '@a2a-js/sdk';

const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    message: { type: 'string', description: 'What to ask the agent (sent as a text part).' },
    data: {
      type: 'object',
      description: 'Structured input for the skill (sent as a data part), if it takes any.',
      additionalProperties: true,
    },
  },
  required: ['message'],
};

/** MCP tool names keep to letters, digits, _ - . (at most 128): other characters become _. */
function toolName(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 128) || 'skill';
}

export function skillsToTools(card: AgentCard): {
  tools: Record<string, unknown>[];
  skills: Map<string, string>;
} {
  const skills = new Map<string, string>();
  const tools: Record<string, unknown>[] = [];
  for (const s of card.skills) {
    let name = toolName(s.id);
    for (let n = 2; skills.has(name); n++) name = `${toolName(s.id)}_${n}`;
    skills.set(name, s.id);
    const more = [
      s.examples.length ? `Examples: ${s.examples.map((e) => JSON.stringify(e)).join('; ')}` : '',
      s.tags.length ? `Tags: ${s.tags.join(', ')}` : '',
    ].filter(Boolean);
    tools.push({
      name,
      ...(s.name && s.name !== name ? { title: s.name } : {}),
      description: [s.description || `Skill ${s.id} of the agent ${card.name}`, ...more].join('\n'),
      inputSchema: INPUT_SCHEMA,
      // Any skill may run as an MCP task (agent-tasks.ts): agents' work is often long.
      execution: { taskSupport: 'optional' },
    });
  }
  return { tools, skills };
}
