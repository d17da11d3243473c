// Switchboard's agent card: its skills are the tools the asking caller may list, read through the
// pipeline as that caller's tools/list (so policy filters them and audit records the read). An
// unauthenticated request to a front that requires authentication gets the card without skills.
import type { AgentCard, AgentInterface, AgentSkill } from '@a2a-js/sdk';
import type { Caller } from '../call/context.js';
import { muteReply } from '../call/mute-reply.js';
import { newCall } from '../call/new-call.js';
import type { Config } from '../config/schema.js';
import { SERVER_INFO } from '../protocol/versions.js';
import type { RunCall } from './skill-run.js';

/** The card extension whose params carry each skill's input schema (the tool's). */
export const SCHEMAS_EXTENSION = 'urn:mcp-switchboard:a2a:input-schemas';

type Tool = { name: string; title?: string; description?: string; inputSchema?: Record<string, unknown> };

export interface CardOptions {
  settings: Config['a2a']['serve'];
  /** Whether the HTTP front authenticates its callers (the card then says how). */
  authenticated: boolean;
  /** Whether push notifications are offered (a2a.serve.pushNotifications.enabled). */
  pushNotifications: boolean;
}

/** The tools `caller` may list, every page of them. */
async function toolsFor(run: RunCall, caller: Caller): Promise<Tool[]> {
  const reply = muteReply({ sessionKey: `a2a:${caller.kind}:${caller.id}`, era: 'legacy' });
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const ctx = newCall({ caller, method: 'tools/list', params: cursor ? { cursor } : {}, reply });
    await run(ctx);
    const result = (ctx.result ?? {}) as { tools?: Tool[]; nextCursor?: string };
    tools.push(...(result.tools ?? []));
    cursor = result.nextCursor;
  } while (cursor);
  return tools;
}

function example(t: Tool): string {
  const schema = (t.inputSchema ?? {}) as {
    required?: string[];
    properties?: Record<string, { type?: string }>;
  };
  const args = Object.fromEntries(
    (schema.required ?? []).map((k) => [k, `<${schema.properties?.[k]?.type ?? 'value'}>`]),
  );
  return JSON.stringify({ skill: t.name, arguments: args });
}

function skillOf(t: Tool): AgentSkill {
  return {
    id: t.name,
    name: t.title ?? t.name,
    description: t.description ?? '',
    tags: ['mcp-tool'],
    examples: [example(t)],
    inputModes: ['application/json'],
    outputModes: ['text/plain', 'application/json'],
    securityRequirements: [],
  };
}

/** The agent's bindings at `origin` (`http://host:port`): JSON-RPC first, then HTTP+JSON. */
export function interfacesAt(origin: string, settings: Config['a2a']['serve']): AgentInterface[] {
  return [
    { url: `${origin}${settings.path}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    {
      url: `${origin}${settings.restPath}`,
      protocolBinding: 'HTTP+JSON',
      tenant: '',
      protocolVersion: '1.0',
    },
  ];
}

/** The card for `caller` (undefined: the anonymous card of an authenticating front, no skills). */
export async function buildCard(
  run: RunCall,
  options: CardOptions,
  caller: Caller | undefined,
  origin: string,
): Promise<AgentCard> {
  const tools = caller ? await toolsFor(run, caller) : [];
  const { settings, authenticated, pushNotifications } = options;
  return {
    name: settings.name,
    description: settings.description,
    supportedInterfaces: interfacesAt(origin, settings),
    provider: undefined,
    version: SERVER_INFO.version,
    capabilities: {
      streaming: true,
      pushNotifications,
      extendedAgentCard: authenticated,
      extensions: [
        {
          uri: SCHEMAS_EXTENSION,
          description:
            'Each skill is an MCP tool; params.inputSchemas holds the JSON Schema of its arguments.',
          required: false,
          params: { inputSchemas: Object.fromEntries(tools.map((t) => [t.name, t.inputSchema ?? {}])) },
        },
      ],
    },
    securitySchemes: authenticated
      ? {
          bearer: {
            scheme: {
              $case: 'httpAuthSecurityScheme',
              value: {
                description:
                  'A token the HTTP front accepts: its local token, an API key or an OAuth access token',
                scheme: 'Bearer',
                bearerFormat: '',
              },
            },
          },
        }
      : {},
    securityRequirements: authenticated ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: tools.map(skillOf),
    signatures: [],
  };
}
