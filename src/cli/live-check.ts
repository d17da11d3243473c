// The part of `switchboard validate` that needs the servers running: it starts every backend (no
// fronts), reads their catalogs, and reports the ones that fail and the names that collide.
import type { LoadedConfig } from '../config/load.js';
import type { ConfigIssue } from '../config/errors.js';
import { META_TOOL_NAMES } from '../catalog/meta-tools.js';
import { RUN_SCRIPT } from '../catalog/code-mode.js';
import { startSwitchboard } from '../switchboard.js';

export async function liveCheck(
  loaded: LoadedConfig,
  note: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<ConfigIssue[]> {
  const { config, file } = loaded;
  // Collisions are reported here rather than refused, so every one of them is listed. A check
  // leaves no trace in the trust database: it audits nothing, and pins nothing on first sight
  // before the operator has decided to trust these servers.
  const sb = await startSwitchboard({
    config: {
      ...config,
      namespacing: { ...config.namespacing, collisions: 'priority' },
      audit: { ...config.audit, enabled: false },
      pinning: { ...config.pinning, enabled: false },
    },
    http: false,
  });
  try {
    const issues: ConfigIssue[] = sb.failedBackends.map((f) => ({
      file,
      path: `servers.${f.name}`,
      message:
        `the server did not start: ${f.error}` +
        (f.stderr.length ? `\n    its stderr ended with:\n      ${f.stderr.join('\n      ')}` : ''),
    }));
    for (const c of sb.gateway.catalog.collisions()) {
      const what = `${c.kind === 'tools' ? 'tool' : 'prompt'} name "${c.exposed}" is exposed by ${c.backends.join(' and ')}`;
      if (config.namespacing.collisions === 'priority') {
        // Resolved by policy, so not an error; still said, since nothing is shadowed silently.
        note(`${file}: note: ${what}; with collisions: priority, ${c.winner} keeps it`);
      } else {
        issues.push({
          file,
          path: `servers.${c.backends[0]}`,
          message: `${what}; give the servers prefixes (namespacing.mode: always) or set namespacing.collisions: priority`,
        });
      }
    }
    // Another node's tools are not listed here: with a mesh, a step may name one.
    if (sb.failedBackends.length === 0 && !config.mesh.enabled)
      issues.push(...unknownStepTools(loaded, sb.gateway.catalog.list('tools').tools as { name: string }[]));
    return issues;
  } finally {
    await sb.stop();
  }
}

/**
 * Workflow `tool:` steps naming a tool no server lists (a typo, a prefix left out): found here
 * rather than when a run reaches the step. Said only while every server started (a step may name
 * a tool of one that did not) and without a mesh.
 */
function unknownStepTools(loaded: LoadedConfig, listed: readonly { name: string }[]): ConfigIssue[] {
  const names = new Set([...listed.map((t) => t.name), ...META_TOOL_NAMES, RUN_SCRIPT]);
  const disabled = Object.entries(loaded.config.servers).filter(([, b]) => b.disabled);
  const aside = disabled.length
    ? `; ${disabled.map(([name]) => name).join(', ')} ${disabled.length === 1 ? 'is' : 'are'} disabled, and list none`
    : '';
  const sep = loaded.config.namespacing.separator;
  const servers = Object.keys(loaded.config.servers);
  // The same tool with its server's prefix, or without it: the likeliest mix-up.
  const likely = (tool: string) =>
    [...names].find((n) => servers.some((s) => n === `${s}${sep}${tool}` || tool === `${s}${sep}${n}`));
  return Object.entries(loaded.config.workflows).flatMap(([workflow, wf]) =>
    wf.steps.flatMap((step, i) => {
      if (step.tool === undefined || names.has(step.tool)) return [];
      const guess = likely(step.tool);
      const hint = guess
        ? `; did you mean "${guess}"?`
        : ' (steps name tools as hosts see them, prefixed where hosts see prefixes)';
      return [
        {
          file: loaded.file,
          path: `workflows.${workflow}.steps[${i}].tool`,
          message: `no server lists a tool "${step.tool}"${hint}${aside}`,
        },
      ];
    }),
  );
}
