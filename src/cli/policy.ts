// `switchboard policy test`: which rule decides a given call, and why each earlier rule did not,
// from the config alone (no server is started). It asks the same compiled policy the pipeline does.
import { methodSpec } from '../protocol/methods.js';
import { namespacesOf, splitUri } from '../catalog/naming.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { Caller } from '../call/context.js';
import { CompiledPolicy, type Subject } from '../policy/policy.js';
import { barredFromHost } from '../policy/backend-only.js';
import { UriError, normalUri } from '../policy/uri-normal.js';
import { backendOnlyHandlers } from '../extensions/index.js';
import { WORKFLOWS_SERVER } from '../config/built-in-servers.js';
import { processIo, type CommandIo, parseCommand } from './io.js';
import { metaTarget, viewOf, workflowTarget, type MetaTarget } from './policy-builtins.js';
import type { CatalogView } from '../catalog/view.js';
import { explainWorkflow, workflowLines } from './policy-workflow.js';

export const POLICY_USAGE = `Usage: switchboard policy test --config FILE --caller KIND:ID <target> [--args JSON] [options]

Prints the decision on one call, the rule that made it, and why each earlier rule did not match.

  --caller KIND:ID      host:stdio, host:http, backend:<server>, workflow:<name>, extension:<name>;
                        a host by its caller id alone: key:<name> (API key), oauth:<sub>, stdio, http
Target (one of):
  --tool NAME           a tool as the caller names it (prefixed: notes_write_note); also a
                        meta-tool (search_tools, describe_tools, call_tool, run_script) or a
                        workflow (workflows_<name>: its steps are judged for the caller too)
  --prompt NAME         a prompt as the caller names it
  --resource URI        a resource URI as the caller names it (prefixed: notes+file:///x)
  --method METHOD       any other method; one without a slash is a handler (vault.sign)
  --backend NAME        with --tool/--prompt/--resource: the owning server, and the name is its own
                        (switchboard: the meta-tools; workflows: the workflows)
  --profile NAME        the caller comes by this catalog profile (which meta-tools it is listed)
Options:
  --args JSON           the call's arguments (tools, prompts) or params (handlers)
  --list                judge the target as a list would (conditions cannot be decided there)
  --expect EFFECT       exit 1 unless the decision is allow, deny or approve (for CI)
  --json                one JSON object instead of text`;

export async function runPolicy(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand(
    'policy',
    POLICY_USAGE,
    argv,
    {
      config: { type: 'string', short: 'c' },
      caller: { type: 'string' },
      tool: { type: 'string' },
      prompt: { type: 'string' },
      resource: { type: 'string' },
      method: { type: 'string' },
      backend: { type: 'string' },
      profile: { type: 'string' },
      args: { type: 'string' },
      list: { type: 'boolean' },
      expect: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    io,
  );
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  if (v.help) {
    io.out(POLICY_USAGE);
    return 0;
  }
  const usage = (why: string) => (io.err(`switchboard policy: ${why}\n\n${POLICY_USAGE}`), 2);
  if (positionals[0] !== 'test') return usage('the only subcommand is "test"');
  if (!v.config) return usage('--config FILE is required');
  const caller = parseCaller(v.caller);
  if (!caller)
    return usage('--caller KIND:ID is required, KIND one of host, backend, workflow, extension, admin');
  const targets = [v.tool, v.prompt, v.resource, v.method].filter((t) => t !== undefined);
  if (targets.length !== 1) return usage('give exactly one of --tool, --prompt, --resource, --method');
  if (v.expect !== undefined && !['allow', 'deny', 'approve'].includes(v.expect))
    return usage('--expect takes allow, deny or approve');
  let args: unknown;
  if (v.args !== undefined) {
    try {
      args = JSON.parse(v.args);
    } catch (err) {
      return usage(`--args is not JSON: ${(err as Error).message}`);
    }
  }
  let config: Config;
  try {
    config = (await loadConfig(v.config)).config;
  } catch (err) {
    io.err((err as Error).message);
    return 1;
  }
  const view = viewOf(config, v.profile);
  if (typeof view === 'string') {
    io.err(`switchboard policy: ${view}`);
    return 1;
  }
  const target = targetFor(config, v, view);
  if (typeof target === 'string') {
    io.err(`switchboard policy: ${target}`);
    return 1;
  }
  const { subject, meta } = target;
  // An ask's owner is the backend asking, as the return path sees it.
  if (subject.kind === 'ask' && subject.backend === undefined && caller.kind === 'backend')
    subject.backend = caller.id;
  const policy = new CompiledPolicy(config);
  // The pipeline refuses a host every backend-only handler before any rule: so does the explanation.
  const barred = barredFromHost(caller, subject, (m) => backendOnlyHandlers.includes(m));
  const explained = barred ? { verdict: barred, skipped: [] } : policy.explain(caller, subject, args);
  let effect: string = explained.verdict.effect;
  let rule = explained.verdict.rule;
  // Judged as a list judges it, the rules are not matched against a call's arguments: what a
  // call would skip is not said (a conditional rule lists the item and decides at each call).
  const listing = v.list === true && !barred;
  if (listing) {
    const listed = policy.decideListing(caller, subject);
    effect = listed.effect === 'call' ? 'listed (decided at the call)' : listed.effect;
    rule = listed.rule;
  }
  const skipped = listing ? [] : explained.skipped;
  const error = listing ? undefined : explained.error;
  // A workflow's steps, judged for this caller as its run would judge them.
  const workflow =
    subject.backend === WORKFLOWS_SERVER && subject.kind === 'tool' && !v.list
      ? explainWorkflow(config, policy, caller, subject.name, args, (f) => subjectOf(config, f, view))
      : undefined;
  if (v.json) {
    io.out(
      JSON.stringify({
        caller,
        subject,
        effect,
        rule,
        skipped,
        error,
        ...(meta ? { meta: { listed: meta.listed, why: meta.why } } : {}),
        ...(workflow ? { workflow } : {}),
      }),
    );
  } else {
    const owner = subject.backend ? ` of server ${subject.backend}` : '';
    const how = listing ? `as listed, not called` : subject.method;
    io.out(`${caller.kind}:${caller.id} -> ${subject.kind} ${subject.name}${owner} (${how})`);
    if (meta) io.out(metaLine(meta));
    skipped.forEach((s, i) => io.out(`  ${i + 1}. ${s.rule}: no match: ${s.why}`));
    if (error) io.out(`  ${rule}: ${error}`);
    if (effect === 'listed (decided at the call)')
      io.out(`  ${rule}: has conditions (when): each call is judged on its own arguments`);
    io.out(`decision: ${effect} (rule ${rule})`);
    if (workflow && effect !== 'deny') for (const line of workflowLines(workflow, caller)) io.out(line);
  }
  if (v.expect !== undefined && v.expect !== effect) {
    io.err(`switchboard policy: expected ${v.expect}, got ${effect} (rule ${rule})`);
    return 1;
  }
  return 0;
}

/**
 * KIND:ID, or a host as docs/identity.md names it: `key:<name>` (an API key), `oauth:<sub>`, `stdio`
 * or `http` (so `--caller key:ci-agent` is the host that calls with the key ci-agent).
 */
export function parseCaller(text: string | undefined): Caller | undefined {
  const t = text ?? '';
  if (t === 'stdio' || t === 'http' || /^(key|oauth):.+$/.test(t)) return { kind: 'host', id: t } as Caller;
  const m = /^(host|backend|workflow|extension|admin|agent):(.+)$/.exec(t);
  return m ? ({ kind: m[1], id: m[2] } as Caller) : undefined;
}

/** How the meta-tool's listing reads: whether the caller's view lists it, and its calls' fate. */
function metaLine(m: MetaTarget): string {
  const listed = m.listed
    ? 'listed'
    : 'not listed (a call to it by that name reaches no meta-tool in this view)';
  return `  meta-tool of switchboard, ${listed}: ${m.why}; each call it makes is judged again as the caller's own`;
}

/** The target the flags name: switchboard's own meta-tools and workflows first, then the servers'. */
function targetFor(
  config: Config,
  f: TargetFlags,
  view: CatalogView,
): { subject: Subject; meta?: MetaTarget | undefined } | string {
  if (f.tool !== undefined) {
    const wf = workflowTarget(config, f.tool, f.backend);
    if (wf) return { subject: wf };
    const plain = subjectFor(config, f);
    const meta = metaTarget(config, f.tool, f.backend, view, typeof plain === 'string');
    if (meta) return { subject: meta.subject, meta };
    return typeof plain === 'string' ? plain : { subject: plain };
  }
  const plain = subjectFor(config, f);
  return typeof plain === 'string' ? plain : { subject: plain };
}

/** A workflow step's target, named as the step names it; a run's steps keep its caller's view. */
function subjectOf(config: Config, f: TargetFlags, view: CatalogView): Subject | string {
  const t = targetFor(config, f, view);
  return typeof t === 'string' ? t : t.subject;
}

interface TargetFlags {
  tool?: string | undefined;
  prompt?: string | undefined;
  resource?: string | undefined;
  method?: string | undefined;
  backend?: string | undefined;
}

/** The subject the pipeline would judge, worked out from names alone (no server is asked). */
function subjectFor(config: Config, f: TargetFlags): Subject | string {
  if (f.method !== undefined) {
    // A backend's question to a host is judged as an ask, as the return path judges it.
    if (methodSpec(f.method)?.direction === 'ask')
      return { kind: 'ask', backend: f.backend, name: f.method, exposed: f.method, method: f.method };
    const handler = !f.method.includes('/');
    return { kind: handler ? 'handler' : 'method', name: f.method, exposed: f.method, method: f.method };
  }
  const namespaces = [...namespacesOf(config).values()];
  if (f.backend !== undefined && !namespaces.some((n) => n.backend === f.backend))
    return `no enabled server named "${f.backend}" in the config`;
  if (f.resource !== undefined) {
    // Judged in normal form, as the resolve stage puts it (the owner's part by its own scheme).
    let uri: string;
    try {
      uri = normalUri(f.resource);
    } catch (err) {
      if (!(err instanceof UriError)) throw err;
      return `the pipeline refuses ${f.resource} (rule policy.uri): ${err.message}`;
    }
    const own = (name: string, prefix = '') => {
      const normal = normalUri(name);
      return { kind: 'resource' as const, exposed: prefix + normal, method: 'resources/read', name: normal };
    };
    try {
      if (f.backend !== undefined) return { ...own(uri), backend: f.backend };
      const split = splitUri(uri);
      const ns = split && namespaces.find((n) => n.prefixed && n.uriPrefix === split.uriPrefix);
      if (ns && split) return { ...own(split.uri, `${split.uriPrefix}+`), backend: ns.backend };
      const unprefixed = namespaces.filter((n) => !n.prefixed);
      if (unprefixed.length === 1) return { ...own(uri), backend: unprefixed[0]!.backend };
    } catch (err) {
      if (!(err instanceof UriError)) throw err;
      return `the pipeline refuses ${f.resource} (rule policy.uri): ${err.message}`;
    }
    return `cannot tell which server owns ${uri}: give --backend`;
  }
  const kind = f.tool !== undefined ? 'tool' : 'prompt';
  const exposed = (f.tool ?? f.prompt)!;
  const base = { kind, exposed, method: kind === 'tool' ? 'tools/call' : 'prompts/get' } as const;
  if (f.backend !== undefined) {
    const ns = namespaces.find((n) => n.backend === f.backend)!;
    const prefix = `${ns.prefix}${ns.separator}`;
    const own = ns.prefixed && exposed.startsWith(prefix) ? exposed.slice(prefix.length) : exposed;
    return { ...base, backend: f.backend, name: own, exposed: ns.prefixed ? prefix + own : own };
  }
  const owners = namespaces.filter((n) =>
    n.prefixed ? exposed.startsWith(`${n.prefix}${n.separator}`) : true,
  );
  // The longest matching prefix wins (a_b_x belongs to a_b rather than a, as it would be exposed).
  owners.sort((a, b) => Number(a.prefixed) - Number(b.prefixed) || b.prefix.length - a.prefix.length);
  const prefixed = owners.filter((n) => n.prefixed);
  const ns = prefixed[0] ?? (owners.length === 1 ? owners[0] : undefined);
  if (!ns) return `cannot tell which server owns ${exposed}: give --backend`;
  const own = ns.prefixed ? exposed.slice(ns.prefix.length + ns.separator.length) : exposed;
  return { ...base, backend: ns.backend, name: own };
}
