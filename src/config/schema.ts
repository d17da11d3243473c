// The one schema of switchboard's configuration. The YAML file, the mcpServers JSON that hosts
// use, CLI flags and the environment all compile into the `Config` this file defines. The parts
// live beside it (backend-schema.ts, http-schema.ts, sections-schema.ts); the rest of the code
// imports them from here.
import { z } from 'zod';
import { builtInServers } from './built-in-servers.js';
import { Policy } from './policy-schema.js';
import { BACKEND_NAME, Backend } from './backend-schema.js';
import { HttpFront, authModeOf } from './http-schema.js';
import { SandboxSection } from './sandbox-schema.js';
import { TracingSection } from './tracing-schema.js';
import { AdminSection } from './admin-schema.js';
import { profileIssues } from './catalog-schema.js';
import { WorkflowsSection, workflowCycle } from './workflow-schema.js';
import { A2ASection, a2aPathIssues, a2aPushIssues } from './a2a-schema.js';
import {
  AuditSection,
  CatalogSection,
  BridgeSection,
  ContextSection,
  EventsSection,
  LimitsSection,
  LogSection,
  ModernSection,
  NamespacingSection,
  PinningSection,
  RedactionSection,
  ShutdownSection,
  StartupSection,
  StateSection,
  VaultSection,
} from './sections-schema.js';
import { MeshSection } from './mesh-schema.js';

export {
  BACKEND_NAME,
  Backend,
  HttpBackend,
  NamespacingMode,
  StdioBackend,
  isStdioBackend,
  type BackendConfig,
  type HttpBackendConfig,
  type StdioBackendConfig,
  A2ABackend,
  isA2ABackend,
  type A2ABackendConfig,
} from './backend-schema.js';
export {
  HttpAuth,
  HttpFront,
  JWT_ALGORITHMS,
  authModeOf,
  httpAuthProblems,
  isLoopbackHost,
} from './http-schema.js';

export const Config = z
  .object({
    servers: z
      .record(z.string().regex(BACKEND_NAME, 'a name of letters, digits, _ . - (at most 64)'), Backend)
      .default({})
      .describe('The MCP servers switchboard fronts, by name.'),
    namespacing: NamespacingSection,
    catalog: CatalogSection,
    http: HttpFront.prefault({}),
    limits: LimitsSection,
    bridge: BridgeSection,
    vault: VaultSection,
    modern: ModernSection,
    redaction: RedactionSection,
    audit: AuditSection,
    state: StateSection,
    context: ContextSection,
    events: EventsSection,
    policy: Policy,
    pinning: PinningSection,
    sandbox: SandboxSection,
    startup: StartupSection,
    shutdown: ShutdownSection,
    log: LogSection,
    tracing: TracingSection,
    mesh: MeshSection,
    admin: AdminSection,
    workflows: WorkflowsSection,
    a2a: A2ASection,
    workflowFiles: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'More workflows, in files of their own (`workflows:` as in this file), relative to this file; `*` and `?` may stand in the file name (workflows/*.yaml).',
      ),
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const name of builtInServers(c))
      if (Object.hasOwn(c.servers, name))
        ctx.addIssue({
          code: 'custom',
          path: ['servers', name],
          message: `"${name}" is the name of a server switchboard itself answers for; give this server another name`,
        });
    for (const issue of profileIssues(c.catalog, c.servers)) ctx.addIssue({ code: 'custom', ...issue });
    const cycle = workflowCycle(c.workflows, c.namespacing.separator);
    if (cycle)
      ctx.addIssue({
        code: 'custom',
        path: ['workflows', cycle[0]!],
        message: `workflows that run each other in a cycle (${cycle.join(' -> ')})`,
      });
    const clash = adminPortClash(c);
    if (clash) ctx.addIssue({ code: 'custom', path: ['admin', 'port'], message: clash });
    for (const issue of a2aPathIssues(c.a2a.serve, c.http.path)) ctx.addIssue({ code: 'custom', ...issue });
    for (const issue of a2aPushIssues(c.a2a.serve, authModeOf(c.http.auth)))
      ctx.addIssue({ code: 'custom', ...issue });
  });

export type Config = z.output<typeof Config>;

/**
 * The admin listener and the HTTP front on one port: found before anything starts, not as a port
 * in use once the admin listener holds it and the front cannot open.
 */
export function adminPortClash(c: {
  admin: { enabled: boolean; port: number };
  http: { port: number };
}): string | undefined {
  if (!c.admin.enabled || c.http.port === 0 || c.admin.port !== c.http.port) return undefined;
  return `is http.port too (${c.http.port}): the admin listener needs a port of its own`;
}
export type ConfigInput = z.input<typeof Config>;
export type { WorkflowConfig, WorkflowStepConfig } from './workflow-schema.js';
export type VaultKeyConfig = Config['vault']['keys'][string];
