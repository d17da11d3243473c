// Workflow expressions (CEL): compiled once when the configuration loads, so a syntax error is a
// config error naming its path, and evaluated over JSON values with bounded cost.
//
// CEL, not JSONata: CEL has no recursion and no user-defined functions, so every expression ends
// in time proportional to its size and its data; the structural limits below bound the size.
import { Environment } from '@marcbachmann/cel-js';

/** Limits on an expression's shape, checked when it is parsed (at config load). */
const LIMITS = { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000 };

const env = new Environment({
  unlistedVariablesAreDyn: true,
  homogeneousAggregateLiterals: false,
  limits: LIMITS,
});

export type Compiled = (vars: Record<string, unknown>) => unknown;

/** Parses an expression; throws with CEL's message (where it stopped) when it cannot. */
export function compileExpr(source: string): Compiled {
  const run = env.parse(source);
  return (vars) => fromCel(run(toCel(vars) as Record<string, unknown>));
}

/** The first line of a CEL error: the rest is a caret drawing that config messages do without. */
export function exprProblem(err: unknown): string {
  return String((err as Error).message ?? err).split('\n')[0]!;
}

/**
 * An argument template: strings are expressions, arrays and objects are walked, other JSON values
 * stand for themselves. Compiled once; throws the path of the first string that does not parse.
 */
export type Template = (vars: Record<string, unknown>) => unknown;

export function compileTemplate(value: unknown, path: (string | number)[] = []): Template {
  if (typeof value === 'string') {
    let run: Compiled;
    try {
      run = compileExpr(value);
    } catch (err) {
      throw new TemplateError(path, exprProblem(err));
    }
    return run;
  }
  if (Array.isArray(value)) {
    const parts = value.map((v, i) => compileTemplate(v, [...path, i]));
    return (vars) => parts.map((p) => p(vars));
  }
  if (value !== null && typeof value === 'object') {
    const parts = Object.entries(value).map(([k, v]) => [k, compileTemplate(v, [...path, k])] as const);
    return (vars) => Object.fromEntries(parts.map(([k, p]) => [k, p(vars)]));
  }
  return () => value;
}

export class TemplateError extends Error {
  constructor(
    readonly path: (string | number)[],
    message: string,
  ) {
    super(message);
  }
}

/** JSON to CEL: whole numbers become CEL ints (bigint), so `input.n + 1` types as int + int. */
function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object') {
    // fromEntries defines each key, so a "__proto__" member stays a member (assignment would not).
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  }
  return value;
}

/** CEL to JSON: ints back to numbers, maps to objects, bytes to base64. */
function fromCel(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(fromCel);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), fromCel(v)]));
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromCel(v)]));
  }
  return value;
}
