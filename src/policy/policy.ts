// Declarative policy, compiled once from the frozen config: who may list and call what. Rules are
// tried in order (inline, then the policy file, then each backend's bridge.allow), the first that
// matches decides, and the defaults decide the rest. The pipeline's policy stage and
// `switchboard policy test` both ask this one object, so what the command explains is what runs.
import type { Config } from '../config/schema.js';
import type { Caller } from '../call/context.js';
import { compileConditions, EvaluationError, type ArgsExplain, type ArgsTest } from './conditions.js';
import type { Effect, Rule } from '../config/policy-schema.js';
import type { SubjectKind } from '../protocol/methods.js';
import { normalUriPattern } from './uri-normal.js';
import { anyGlob } from '../encoding/glob.js';

export type { SubjectKind };

/** What a call (or a listed item) is about, as the policy judges it. */
export interface Subject {
  kind: SubjectKind;
  /** The server that owns the target; none for handlers and other methods. */
  backend?: string | undefined;
  /** The owning server's own name or URI; the method for handlers and other methods. */
  name: string;
  /** The name or URI the caller used (what bridge.allow patterns are over). */
  exposed: string;
  /** The MCP method; a listed item counts as the call it is listed for. */
  method: string;
  /** One of switchboard's own meta-tools (meta-tools.ts): allowed when no rule names it. */
  builtIn?: boolean | undefined;
}

export interface Verdict {
  effect: Effect;
  rule: string;
  auditValues: boolean;
}

/** A list-time verdict: a rule with conditions that matches caller and target leaves it to the call. */
export type ListVerdict = Verdict | { effect: 'call'; rule: string };

interface Compiled {
  name: string;
  effect: Effect;
  auditValues: boolean;
  caller: (key: string) => boolean;
  target: (s: Subject) => boolean;
  when: { test: ArgsTest; explain: ArgsExplain } | undefined;
  /** Why caller or target does not match (undefined: they do). Cold path: explanations. */
  whyNot: (key: string, s: Subject) => string | undefined;
}

export interface Explanation {
  verdict: Verdict;
  /** Every rule tried before the deciding one, with why it did not decide. */
  skipped: { rule: string; why: string }[];
  /** Set when the verdict is a denial because a condition could not be judged. */
  error?: string;
}

export class PolicyError extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
    this.name = 'PolicyError';
  }
}

export const callerKey = (c: Caller): string => `${c.kind}:${c.id}`;

const CANDIDATES_MAX = 50_000;

export class CompiledPolicy {
  private readonly rules: Compiled[];
  /** Rules whose callers match, per caller: most calls skip every rule written for someone else. */
  private readonly byCaller = new Map<string, Compiled[]>();
  /**
   * Rules whose caller and target match, per caller and target: a call then only evaluates the
   * conditions of its candidates. Bounded: emptied when it grows past CANDIDATES_MAX targets.
   */
  private readonly candidates = new Map<string, Compiled[]>();
  readonly ruleCount: number;

  constructor(private readonly config: Pick<Config, 'policy' | 'servers'>) {
    this.rules = config.policy.rules.map((r, i) => compileRule(r, r.name ?? `rule[${i}]`));
    for (const [name, server] of Object.entries(config.servers)) {
      if (server.disabled || server.bridge.allow.length === 0) continue;
      this.rules.push(bridgeAllowRule(name, server.bridge.allow));
    }
    // Last of all, before the defaults: each backend's own context scope (docs/context.md).
    for (const [name, server] of Object.entries(config.servers))
      if (!server.disabled) this.rules.push(ownScopeRule(name));
    this.ruleCount = this.rules.length;
  }

  /** The policy section it was compiled from (with a policy file's rules in). */
  get rulesConfig(): Config['policy'] {
    return this.config.policy;
  }

  /** Whether any rule asks for approval (so the approval store is needed). */
  get approves(): boolean {
    const d = this.config.policy.defaults;
    return (
      this.config.policy.rules.some((r) => r.effect === 'approve') ||
      [d.host, d.backend, d.workflow].includes('approve')
    );
  }

  private applicable(key: string): Compiled[] {
    let list = this.byCaller.get(key);
    if (!list) {
      list = this.rules.filter((r) => r.caller(key));
      // Callers are configured names; the bound only guards against an unbounded set of ids.
      if (this.byCaller.size > 10_000) this.byCaller.clear();
      this.byCaller.set(key, list);
    }
    return list;
  }

  /** The verdict on a call. Throws PolicyError when a condition cannot be judged (deny it). */
  decide(caller: Caller, s: Subject, args: unknown): Verdict {
    const who = callerKey(caller);
    const key = `${who}\0${s.kind}\0${s.backend ?? ''}\0${s.name}\0${s.method}\0${s.exposed}`;
    let rules = this.candidates.get(key);
    if (!rules) {
      rules = this.applicable(who).filter((r) => r.target(s));
      if (this.candidates.size >= CANDIDATES_MAX) this.candidates.clear();
      this.candidates.set(key, rules);
    }
    for (const r of rules) {
      if (r.when) {
        let holds: boolean;
        try {
          holds = r.when.test(args);
        } catch (err) {
          if (err instanceof EvaluationError) throw new PolicyError(r.name, err.message);
          throw err;
        }
        if (!holds) continue;
      }
      return { effect: r.effect, rule: r.name, auditValues: r.auditValues };
    }
    return this.fallback(caller, s);
  }

  /** The verdict when listing: an item a conditional rule may allow is listed, and decided at the call. */
  decideListing(caller: Caller, s: Subject): ListVerdict {
    for (const r of this.applicable(callerKey(caller))) {
      if (!r.target(s)) continue;
      if (r.when) return { effect: 'call', rule: r.name };
      return { effect: r.effect, rule: r.name, auditValues: r.auditValues };
    }
    return this.fallback(caller, s);
  }

  /** Whether the caller sees the item in its lists (a denial of a listed item is not "unknown"). */
  visible(caller: Caller, s: Subject): boolean {
    return this.decideListing(caller, s).effect !== 'deny';
  }

  private fallback(caller: Caller, s: Subject): Verdict {
    const d = this.config.policy.defaults;
    // What a backend asks the caller of its call is allowed unless a rule names it.
    if (s.kind === 'ask') return { effect: 'allow', rule: 'defaults.ask', auditValues: false };
    // A meta-tool reaches nothing by itself: each call it makes is judged as the caller's own.
    if (s.builtIn) return { effect: 'allow', rule: 'defaults.meta', auditValues: false };
    switch (caller.kind) {
      case 'host':
        // Handlers serve backends; a host reaches one only through a rule that names it.
        if (s.kind === 'handler') return { effect: 'deny', rule: 'defaults.host', auditValues: false };
        return { effect: d.host, rule: 'defaults.host', auditValues: false };
      case 'backend':
        return { effect: d.backend, rule: 'defaults.backend', auditValues: false };
      case 'workflow':
        return { effect: d.workflow, rule: 'defaults.workflow', auditValues: false };
      case 'extension':
        return { effect: 'allow', rule: 'defaults.extension', auditValues: false };
      case 'admin':
        // An operator's call through the admin API is a host's call by default (defaults.host),
        // and like a host it reaches a handler only through a rule that names it.
        if (s.kind === 'handler') return { effect: 'deny', rule: 'defaults.admin', auditValues: false };
        return { effect: d.host, rule: 'defaults.admin', auditValues: false };
      case 'agent':
        // An agent comes through the HTTP front as a host does, and like a host reaches no handler by default.
        if (s.kind === 'handler') return { effect: 'deny', rule: 'defaults.agent', auditValues: false };
        return { effect: d.agent, rule: 'defaults.agent', auditValues: false };
    }
  }

  /** The verdict with the reason each earlier rule did not decide: `switchboard policy test`. */
  explain(caller: Caller, s: Subject, args: unknown): Explanation {
    const key = callerKey(caller);
    const skipped: Explanation['skipped'] = [];
    for (const r of this.rules) {
      const why = r.whyNot(key, s);
      if (why !== undefined) {
        skipped.push({ rule: r.name, why });
        continue;
      }
      if (r.when) {
        let unmet: string | undefined;
        try {
          unmet = r.when.explain(args);
        } catch (err) {
          if (!(err instanceof EvaluationError)) throw err;
          return {
            verdict: { effect: 'deny', rule: r.name, auditValues: false },
            skipped,
            error: `cannot evaluate: ${err.message} (evaluation errors deny)`,
          };
        }
        if (unmet !== undefined) {
          skipped.push({ rule: r.name, why: `when: ${unmet}` });
          continue;
        }
      }
      return { verdict: { effect: r.effect, rule: r.name, auditValues: r.auditValues }, skipped };
    }
    return { verdict: this.fallback(caller, s), skipped };
  }
}

const SELECTORS: Record<
  Exclude<SubjectKind, 'method' | 'ask'>,
  'tools' | 'prompts' | 'resources' | 'handlers'
> = {
  tool: 'tools',
  prompt: 'prompts',
  resource: 'resources',
  handler: 'handlers',
};

function compileRule(rule: Rule, name: string): Compiled {
  const callers = rule.callers && anyGlob(rule.callers);
  const backends = rule.backends && anyGlob(rule.backends);
  const methods = rule.methods && anyGlob(rule.methods);
  const named = {
    tools: rule.tools && anyGlob(rule.tools),
    prompts: rule.prompts && anyGlob(rule.prompts),
    // Resources are judged by their URI in normal form (uri-normal.ts): so are the patterns.
    resources: rule.resources && anyGlob(rule.resources.map(normalUriPattern)),
    handlers: rule.handlers && anyGlob(rule.handlers),
  };
  // A rule that names no kind of target is about every target; one that names some, only those.
  const anyTarget = !rule.tools && !rule.prompts && !rule.resources && !rule.handlers;
  const nameOk = (s: Subject): boolean => {
    if (anyTarget) return true;
    if (s.kind === 'method' || s.kind === 'ask') return false;
    const m = named[SELECTORS[s.kind]];
    return m !== undefined && m(s.name);
  };
  const target = (s: Subject): boolean =>
    // A backend's question is judged only by rules written for it: ones that name its method.
    (s.kind !== 'ask' || methods !== undefined) &&
    (!backends || (s.backend !== undefined && backends(s.backend))) &&
    (!methods || methods(s.method)) &&
    nameOk(s);
  const list = (p: readonly string[]) => `[${p.join(', ')}]`;
  return {
    name,
    effect: rule.effect,
    auditValues: rule.auditValues ?? false,
    caller: callers ?? (() => true),
    target,
    when: rule.when && compileConditions(rule.when),
    whyNot: (key, s) => {
      if (callers && !callers(key)) return `caller ${key} is not in callers ${list(rule.callers!)}`;
      if (s.kind === 'ask' && !methods)
        return `a backend's ${s.method} is judged only by rules that name it in methods`;
      if (backends && s.backend === undefined)
        return `${s.kind} ${s.name} has no owning server (backends set)`;
      if (backends && !backends(s.backend!))
        return `server ${s.backend} is not in backends ${list(rule.backends!)}`;
      if (methods && !methods(s.method)) return `method ${s.method} is not in methods ${list(rule.methods!)}`;
      if (!nameOk(s)) {
        if (s.kind === 'method' || s.kind === 'ask')
          return `${s.method} is not a tool, prompt, resource or handler the rule names`;
        const sel = SELECTORS[s.kind];
        const pats = rule[sel];
        return pats ? `${s.kind} ${s.name} is not in ${sel} ${list(pats)}` : `the rule names no ${sel}`;
      }
      return undefined;
    },
  };
}

/** A backend's `bridge.allow`, as the allow rule it always was: patterns over exposed names. */
function bridgeAllowRule(backend: string, patterns: readonly string[]): Compiled {
  const key = `backend:${backend}`;
  const names = anyGlob(patterns);
  // A resource is addressed by its URI in normal form (uri-normal.ts); so are patterns meant for one.
  const uris = anyGlob(patterns.map(normalUriPattern));
  const allowed = (s: Subject) => (s.kind === 'resource' ? uris : names)(s.exposed);
  const name = `servers.${backend}.bridge.allow`;
  return {
    name,
    effect: 'allow',
    auditValues: false,
    caller: (k) => k === key,
    // What the backend may call, not what it may ask its caller.
    target: (s) => s.kind !== 'ask' && allowed(s),
    when: undefined,
    whyNot: (k, s) =>
      k !== key
        ? `only for caller ${key}`
        : s.kind === 'ask'
          ? `grants calls, not a backend's ${s.method}`
          : allowed(s)
            ? undefined
            : `${s.exposed} is not in [${patterns.join(', ')}]`,
  };
}

/**
 * `context.ownScope`: a backend may use the context store's scope named after it (`server:<name>`),
 * every operation, without a grant. Tried after every written rule, so a deny rule takes it away.
 */
function ownScopeRule(backend: string): Compiled {
  const key = `backend:${backend}`;
  const when = compileConditions({ scope: { equals: `server:${backend}` } });
  const isContext = (s: Subject) => s.kind === 'handler' && s.name.startsWith('context.');
  return {
    name: 'context.ownScope',
    effect: 'allow',
    auditValues: false,
    caller: (k) => k === key,
    target: isContext,
    when,
    whyNot: (k, s) =>
      k !== key
        ? `only for caller ${key}`
        : isContext(s)
          ? undefined
          : `${s.name} is not a context.* handler`,
  };
}
