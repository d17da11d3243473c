// `switchboard validate`'s warnings about grants wider than they look: a rule, a bridge.allow
// pattern or a default that hands a backend a backend-only handler (`vault.get`, …) without
// naming it. `bridge.allow: ['*']` written to reach every tool also reads every vault secret.
import type { ConfigIssue } from '../config/errors.js';
import type { Rule } from '../config/policy-schema.js';
import type { Config } from '../config/schema.js';
import { anyGlob } from '../encoding/glob.js';

/** Every grant that reaches one of `handlers` for a backend without naming it, as a warning. */
export function broadHandlerGrants(
  config: Pick<Config, 'policy' | 'servers'>,
  handlers: readonly string[],
  file: string,
): ConfigIssue[] {
  if (handlers.length === 0) return [];
  const backends = Object.entries(config.servers)
    .filter(([, s]) => !s.disabled)
    .map(([name]) => name);
  const issues: ConfigIssue[] = [];
  const warn = (path: string, who: string, reached: string[], what: string) =>
    issues.push({
      file,
      path,
      message: `${what} grants ${who} the handler${reached.length === 1 ? '' : 's'} ${reached.join(', ')} without naming ${reached.length === 1 ? 'it' : 'them'}; name each handler a backend needs`,
    });

  config.policy.rules.forEach((rule, i) => {
    if (rule.effect === 'deny') return;
    const callers = rule.callers && anyGlob(rule.callers);
    const granted = backends.filter((b) => !callers || callers(`backend:${b}`));
    const reached = handlers.filter((h) => grantsUnnamed(rule, h));
    if (granted.length && reached.length)
      warn(
        `policy.rules[${i}]`,
        granted.map((b) => `backend:${b}`).join(', '),
        reached,
        `rule "${rule.name ?? `rule[${i}]`}" (${rule.effect})`,
      );
  });
  for (const b of backends) {
    const patterns = config.servers[b]!.bridge.allow;
    const allowed = anyGlob(patterns);
    const reached = handlers.filter((h) => allowed(h) && !patterns.includes(h));
    if (reached.length)
      warn(`servers.${b}.bridge.allow`, `backend ${b}`, reached, `servers.${b}.bridge.allow`);
  }
  if (config.policy.defaults.backend !== 'deny' && backends.length)
    warn(
      'policy.defaults.backend',
      'every backend no rule decides for',
      handlers.slice(),
      `policy.defaults.backend: ${config.policy.defaults.backend}`,
    );
  return issues;
}

/** Whether the rule's target part matches the handler without the rule spelling its name out. */
function grantsUnnamed(rule: Rule, handler: string): boolean {
  // A rule with backends never matches a handler (handlers have no owning server).
  if (rule.backends) return false;
  if (rule.methods && !anyGlob(rule.methods)(handler)) return false;
  const selects = rule.tools || rule.prompts || rule.resources || rule.handlers;
  if (selects && !(rule.handlers && anyGlob(rule.handlers)(handler))) return false;
  return !rule.handlers?.includes(handler) && !rule.methods?.includes(handler);
}
