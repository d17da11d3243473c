// Argument conditions of a rule (`when`), compiled once: each becomes a test over the call's
// arguments that either holds, does not hold, or cannot be judged (a type mismatch, a relative
// path): the last throws, and the policy denies the call (fail closed).
import { posix } from 'node:path';
import { canonicalJson } from '../encoding/canonical-json.js';
import { RawText } from '../encoding/raw-text.js';
import { linearPattern } from '../encoding/linear-pattern.js';
import type { Condition } from '../config/policy-schema.js';

/** A condition that cannot be judged for the value the call carries. */
export class EvaluationError extends Error {
  override name = 'EvaluationError';
}

/** Whether the arguments satisfy every condition; throws EvaluationError when one cannot be judged. */
export type ArgsTest = (args: unknown) => boolean;

/** Why a condition does not hold (undefined: it holds); throws like ArgsTest. For explanations. */
export type ArgsExplain = (args: unknown) => string | undefined;

interface Compiled {
  lookup: (args: unknown) => unknown;
  /** Whether the value satisfies the condition: the hot path, which builds no strings. */
  holds: (value: unknown) => boolean;
  /** Why it does not (undefined: it does), for explanations. */
  why: (value: unknown) => string | undefined;
}

export function compileConditions(when: Readonly<Record<string, Condition>>): {
  test: ArgsTest;
  explain: ArgsExplain;
} {
  const all: Compiled[] = Object.entries(when).map(([key, c]) => ({
    lookup: lookupOf(key),
    ...checkOf(key, c),
  }));
  return {
    test: (args) => {
      for (const c of all) if (!c.holds(c.lookup(args))) return false;
      return true;
    },
    explain: (args) => {
      for (const c of all) {
        const why = c.why(c.lookup(args));
        if (why !== undefined) return why;
      }
      return undefined;
    },
  };
}

function lookupOf(key: string): (args: unknown) => unknown {
  const parts = key.split('.');
  return (args) => {
    if (args === undefined || args === null) return undefined;
    if (typeof args !== 'object' || Array.isArray(args))
      throw new EvaluationError(`the arguments are ${describe(args)}, not an object`);
    let v: unknown = args;
    for (const p of parts) {
      if (v === null || typeof v !== 'object' || !Object.hasOwn(v, p)) return undefined;
      v = (v as Record<string, unknown>)[p];
    }
    // A large string argument kept as bytes (wire-parse.ts) is judged as the string it is.
    return v instanceof RawText ? v.text : v;
  };
}

/** One operator: a test, and what to say when it fails. Both throw when the value cannot be judged. */
interface Check {
  holds: (v: unknown) => boolean;
  unmet: (v: unknown) => string;
}

function checkOf(key: string, c: Condition): Pick<Compiled, 'holds' | 'why'> {
  const checks: Check[] = [];
  if (c.exists !== undefined) {
    const want = c.exists;
    checks.push({
      holds: (v) => (v !== undefined) === want,
      unmet: () => `${key} is ${want ? 'absent' : 'present'}`,
    });
  }
  // The remaining operators judge a value: an absent one simply does not satisfy them.
  const present = (holds: (v: unknown) => boolean, unmet: (v: unknown) => string): Check => ({
    holds: (v) => v !== undefined && holds(v),
    unmet: (v) => (v === undefined ? `${key} is absent` : unmet(v)),
  });
  if ('equals' in c) {
    const want = canonicalJson(c.equals);
    checks.push(
      present(
        (v) => canonicalJson(v) === want,
        () => `${key} is not ${want}`,
      ),
    );
  }
  if (c.in !== undefined) {
    const set = new Set(c.in.map((x) => canonicalJson(x)));
    checks.push(
      present(
        (v) => set.has(canonicalJson(v)),
        () => `${key} is none of ${canonicalJson(c.in)}`,
      ),
    );
  }
  if (c.prefix !== undefined) {
    const p = c.prefix;
    checks.push(
      present(
        (v) => stringOf(key, v, 'prefix').startsWith(p),
        () => `${key} does not start with ${JSON.stringify(p)}`,
      ),
    );
  }
  if (c.pathPrefix !== undefined) {
    const dir = c.pathPrefix.length > 1 ? c.pathPrefix.replace(/\/+$/, '') : '/';
    const inside = (v: unknown) => {
      const path = normalPath(key, stringOf(key, v, 'pathPrefix'));
      return dir === '/' || path === dir || path.startsWith(dir + '/');
    };
    checks.push(
      present(inside, (v) => `${key} (${JSON.stringify(normalPath(key, String(v)))}) is not inside ${dir}`),
    );
  }
  if (c.matches !== undefined) {
    // Linear in the value: a caller's argument must not hold the process with a backtracking search.
    const re = linearPattern(c.matches);
    checks.push(
      present(
        (v) => re.test(stringOf(key, v, 'matches')),
        () => `${key} does not match /${c.matches}/`,
      ),
    );
  }
  return {
    holds: (v) => {
      for (const check of checks) if (!check.holds(v)) return false;
      return true;
    },
    why: (v) => {
      for (const check of checks) if (!check.holds(v)) return check.unmet(v);
      return undefined;
    },
  };
}

function stringOf(key: string, v: unknown, op: string): string {
  if (typeof v !== 'string')
    throw new EvaluationError(`${op} on ${key}, which is ${describe(v)}, not a string`);
  return v;
}

/** The absolute path a value names, normalised; a relative path cannot be judged. */
function normalPath(key: string, value: string): string {
  let path = value;
  if (/^file:/i.test(path)) {
    try {
      path = decodeURIComponent(new URL(path).pathname);
    } catch {
      throw new EvaluationError(`${key} is not a valid file: URL`);
    }
  }
  if (!path.startsWith('/'))
    throw new EvaluationError(`${key} (${JSON.stringify(value)}) is not an absolute path`);
  if (path.includes('\0')) throw new EvaluationError(`${key} contains a NUL character`);
  const normal = posix.normalize(path);
  return normal.length > 1 ? normal.replace(/\/+$/, '') : normal;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}
