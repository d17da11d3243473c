// Shared by the context-resources tests: a switchboard whose context scopes global and team:docs
// are MCP resources, and writes made in process as a workflow would make them.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';

export type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function contextConfig(extra: Partial<ConfigInput> = {}): ConfigInput {
  const dir = mkdtempSync(join(tmpdir(), 'sb-context-res-'));
  return {
    servers: { p: probe('p') },
    state: { path: join(dir, 'state.sqlite') },
    audit: { path: join(dir, 'audit.sqlite') },
    log: { level: 'silent' },
    context: { resources: { scopes: ['global', 'team:docs'] } },
    ...extra,
  } as ConfigInput;
}

/** Writes as a workflow would: in process, through the pipeline. */
export function put(sb: Switchboard, scope: string, key: string, value: unknown): Promise<Obj> {
  return sb.gateway.dispatch({ kind: 'workflow', id: 'writer' }, 'context.put', { scope, key, value });
}
