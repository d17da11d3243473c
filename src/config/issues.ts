// Turns zod's issues into sentences a person fixing a config file can act on: where, what was expected, what was found.
import { z } from 'zod';
import { Backend, HttpBackend, StdioBackend } from './schema.js';
import { isPlainObject } from './env-refs.js';

export interface MappedIssue {
  /** Path in switchboard's shape. */
  readonly path: PropertyKey[];
  /** Set when the issue is about a key, so the position can point at the key itself. */
  readonly key?: string;
  readonly message: string;
}

export interface MapContext {
  /** Whether the value at a path took text from the environment: such values are never echoed. */
  fromEnv(path: readonly PropertyKey[]): boolean;
}

const SERVER_SHAPES = 'either a stdio server (command, args, env) or a remote server (url, headers)';

/** Maps the issues of parsing `input` with `root`; `base` is where `input` sits in the whole config. */
export function mapZodIssues(
  issues: readonly z.core.$ZodIssue[],
  root: z.ZodType,
  input: unknown,
  base: readonly PropertyKey[],
  ctx: MapContext,
): MappedIssue[] {
  return issues.flatMap((issue) => mapIssue(issue, root, input, base, ctx));
}

function mapIssue(
  issue: z.core.$ZodIssue,
  root: z.ZodType,
  input: unknown,
  base: readonly PropertyKey[],
  ctx: MapContext,
): MappedIssue[] {
  const path = [...base, ...issue.path];
  const value = valueAt(input, issue.path);
  const secret = ctx.fromEnv(path) || looksSecret(path);
  const found = (): string => describeValue(value, secret);
  const schema = schemaAt(root, input, issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      if (value === undefined) {
        return [{ path, message: `expected ${describeSchema(schema, issue.expected)}, but it is missing` }];
      }
      if (issue.expected === 'int' && typeof value === 'number') {
        return [{ path, message: `expected a whole number, got ${found()}` }];
      }
      const quotable = typeof value === 'boolean' || (typeof value === 'number' && !secret);
      const quote =
        issue.expected !== 'string' || (typeof value !== 'number' && typeof value !== 'boolean')
          ? ''
          : quotable
            ? ` (quote it to make it a string: "${String(value)}")`
            : ' (quote it to make it a string)';
      return [
        { path, message: `expected ${describeSchema(schema, issue.expected)}, got ${found()}${quote}` },
      ];
    }
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      const word = issue.code === 'too_small' ? 'at least' : 'at most';
      if (issue.origin === 'string' && issue.code === 'too_small' && Number(bound) === 1) {
        return [{ path, message: `expected a non-empty string, got ${found()}` }];
      }
      const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' entries' : '';
      return [{ path, message: `expected ${word} ${String(bound)}${unit}, got ${found()}` }];
    }
    case 'invalid_format': {
      const expected =
        issue.format === 'url'
          ? 'an http:// or https:// URL'
          : issue.format === 'starts_with' && 'prefix' in issue
            ? `text starting with "${String(issue.prefix)}"`
            : issue.format === 'regex' && !issue.message.startsWith('Invalid')
              ? issue.message
              : `text matching ${issue.pattern ?? issue.format}`;
      return [{ path, message: `expected ${expected}, got ${found()}` }];
    }
    case 'invalid_value':
      return [{ path, message: oneOf(issue.values, value, found) }];
    case 'unrecognized_keys': {
      const known = objectKeys(schema);
      return issue.keys.map((key) => ({ path, key, message: unknownKey(key, known, schema) }));
    }
    case 'invalid_key': {
      const reason = issue.issues
        .map((i) =>
          !i.message.startsWith('Invalid')
            ? i.message
            : 'pattern' in i
              ? `a name matching ${String(i.pattern)}`
              : '',
        )
        .find((m) => m);
      const name = String(issue.path[issue.path.length - 1] ?? '');
      return [
        {
          path: path.slice(0, -1),
          key: name,
          message: `invalid name ${JSON.stringify(name)}: expected ${reason ?? 'a valid name'}`,
        },
      ];
    }
    case 'invalid_union': {
      if (unwrap(schemaAt(root, undefined, issue.path)) === Backend) return serverIssues(value, path, ctx);
      // A discriminated union reports at its discriminator (`type`), listing the values it knows.
      if (issue.discriminator !== undefined && 'options' in issue && issue.options !== undefined) {
        return [{ path, message: oneOf(issue.options, value, found) }];
      }
      return [{ path, message: `expected ${describeSchema(schema)}, got ${found()}` }];
    }
    default:
      return [{ path, message: issue.message }];
  }
}

function oneOf(values: readonly unknown[], value: unknown, found: () => string): string {
  const options = values.map((v) => JSON.stringify(v));
  const expected = options.length === 1 ? options[0] : `one of ${options.join(', ')}`;
  if (value === undefined) return `expected ${expected}, but it is missing`;
  const strings = values.filter((v): v is string => typeof v === 'string');
  const near = typeof value === 'string' ? closest(value, strings) : undefined;
  const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
  return `expected ${expected}, got ${found()}${hint}`;
}

/** A server entry failed both shapes: judge it as the shape it was meant to be, so the message is about its real mistake. */
function serverIssues(entry: unknown, path: PropertyKey[], ctx: MapContext): MappedIssue[] {
  if (!isPlainObject(entry)) {
    return [{ path, message: `expected ${SERVER_SHAPES}, got ${describeValue(entry, false)}` }];
  }
  if ('command' in entry && ('url' in entry || 'urls' in entry)) {
    const remote = 'urls' in entry ? 'urls' : 'a url';
    return [{ path, message: `expected ${SERVER_SHAPES}, got both a command and ${remote}` }];
  }
  const shape = narrow(Backend, entry);
  if (shape === StdioBackend || shape === HttpBackend) {
    const stdio = shape === StdioBackend;
    const result = shape.safeParse(entry);
    if (!result.success) {
      return mapZodIssues(result.error.issues, shape, entry, path, ctx).map((issue) =>
        stdio && issue.path.length === path.length + 1 && issue.path[path.length] === 'type'
          ? {
              ...issue,
              message: `${issue.message}: an entry with a command is a stdio server (remote servers have a url)`,
            }
          : issue,
      );
    }
  }
  const known = [...new Set([...Object.keys(StdioBackend.shape), ...Object.keys(HttpBackend.shape)])];
  const unknown = Object.keys(entry)
    .filter((k) => !known.includes(k))
    .map((k) => unknownKey(k, known, undefined));
  const keys = Object.keys(entry);
  const got =
    keys.length === 0 ? 'an empty mapping' : `a mapping with ${keys.map((k) => `'${k}'`).join(', ')}`;
  return [{ path, message: [`expected ${SERVER_SHAPES}, got ${got}`, ...unknown].join('; ') }];
}

function unknownKey(key: string, known: readonly string[], schema: z.ZodType | undefined): string {
  const near = closest(key, known);
  if (near !== undefined) return `unknown key '${key}' (did you mean '${near}'?)`;
  const object = unwrap(schema);
  if (object === StdioBackend && key in HttpBackend.shape) {
    return `unknown key '${key}': it belongs to remote servers (with a url), not to stdio servers (with a command)`;
  }
  if (object === HttpBackend && key === 'replicas') {
    return `unknown key 'replicas': a remote server's replicas are listed in urls, one URL each`;
  }
  if (object === HttpBackend && key in StdioBackend.shape) {
    return `unknown key '${key}': it belongs to stdio servers (with a command), not to remote servers (with a url)`;
  }
  return known.length === 0
    ? `unknown key '${key}'`
    : `unknown key '${key}' (expected one of: ${known.join(', ')})`;
}

/** Values under names like these are credentials even when written literally: never echo them into logs. */
function looksSecret(path: readonly PropertyKey[]): boolean {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  return (
    (typeof last === 'string' && /secret|token|password|passwd|private|key$|auth|credential/i.test(last)) ||
    parent === 'headers' ||
    parent === 'env'
  );
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let s = schema;
  while (s instanceof z.ZodDefault || s instanceof z.ZodPrefault || s instanceof z.ZodOptional) {
    s = s.unwrap() as z.ZodType;
  }
  return s;
}

/** The schema that judged the value at `path`; through a union, the member the value was meant for. */
function schemaAt(root: z.ZodType, input: unknown, path: readonly PropertyKey[]): z.ZodType | undefined {
  let s = narrow(root, input);
  let v = input;
  for (const segment of path) {
    const u = unwrap(s);
    if (u instanceof z.ZodObject) s = (u.shape as Record<string, z.ZodType>)[String(segment)];
    else if (u instanceof z.ZodRecord) s = u.valueType as z.ZodType;
    else if (u instanceof z.ZodArray) s = u.element as z.ZodType;
    else return undefined;
    v = valueAt(v, [segment]);
    s = narrow(s, v);
  }
  return s;
}

/** zod reports some union errors against the union and some against the member it chose; both read as the member the value was meant for. */
function narrow(schema: z.ZodType | undefined, value: unknown): z.ZodType | undefined {
  const u = unwrap(schema);
  if (!(u instanceof z.ZodUnion) || !isPlainObject(value)) return schema;
  if (u === Backend) {
    if ('command' in value && ('url' in value || 'urls' in value)) return schema;
    if ('command' in value || value['type'] === 'stdio') return StdioBackend;
    if (
      'url' in value ||
      'urls' in value ||
      ['http', 'streamable-http', 'sse'].includes(String(value['type']))
    )
      return HttpBackend;
    return schema;
  }
  const discriminator = (u.def as { discriminator?: string }).discriminator;
  if (discriminator === undefined) return schema;
  const member = (u.options as z.ZodType[]).find((option) => {
    const o = unwrap(option);
    const tag =
      o instanceof z.ZodObject ? unwrap((o.shape as Record<string, z.ZodType>)[discriminator]) : undefined;
    return tag instanceof z.ZodLiteral && tag.values.has(value[discriminator] as z.core.util.Literal);
  });
  return member ?? schema;
}

function objectKeys(schema: z.ZodType | undefined): string[] {
  const s = unwrap(schema);
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

/** Says what a schema accepts in words; `fallback` is zod's own name for it, used when the schema is not one of ours. */
function describeSchema(schema: z.ZodType | undefined, fallback?: string): string {
  const s = unwrap(schema);
  if (s === Backend) return SERVER_SHAPES;
  if (s instanceof z.ZodString) return 'a string';
  if (s instanceof z.ZodNumber) return s.isInt ? 'a whole number' : 'a number';
  if (s instanceof z.ZodBoolean) return 'true or false';
  if (s instanceof z.ZodArray) return `an array of ${plural(s.element as z.ZodType)}`;
  if (s instanceof z.ZodRecord) return `a mapping of names to ${plural(s.valueType as z.ZodType)}`;
  if (s instanceof z.ZodObject) return `a mapping (keys: ${Object.keys(s.shape).join(', ')})`;
  if (s instanceof z.ZodEnum) return `one of ${s.options.map((o) => JSON.stringify(o)).join(', ')}`;
  if (s instanceof z.ZodLiteral) return [...s.values].map((v) => JSON.stringify(v)).join(' or ');
  if (s instanceof z.ZodUnion) return (s.options as z.ZodType[]).map((o) => describeSchema(o)).join(' or ');
  return fallback === undefined ? 'a valid value' : `a value of type ${fallback}`;
}

function plural(schema: z.ZodType): string {
  const s = unwrap(schema);
  if (s === Backend) return 'servers';
  if (s instanceof z.ZodString) return 'strings';
  if (s instanceof z.ZodNumber) return 'numbers';
  if (s instanceof z.ZodObject || s instanceof z.ZodUnion) return 'mappings';
  return 'values';
}

/** Says what was found; values that may be secrets (from the environment, or under a credential's name) are described but never shown. */
export function describeValue(value: unknown, secret: boolean): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (typeof value === 'string') {
    if (value === '') return 'an empty string';
    if (secret) return 'a string (not shown)';
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return `a string (${JSON.stringify(shown)})`;
  }
  if (typeof value === 'number') return secret ? 'a number (not shown)' : `a number (${String(value)})`;
  if (typeof value === 'boolean') return `a boolean (${String(value)})`;
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (isPlainObject(value)) return 'a mapping';
  return `a ${typeof value}`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const segment of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = Object.hasOwn(v, segment) ? (v as Record<PropertyKey, unknown>)[segment] : undefined;
  }
  return v;
}

/** The candidate a typo most likely meant: the same word in another case, or at most two edits away on a word long enough to tell. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate.toLowerCase() === word.toLowerCase()) return candidate;
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    const allowed = Math.min(2, Math.floor(Math.min(word.length, candidate.length) / 3));
    if (d <= allowed && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance: a swap of neighbours ("hots" for "host") counts as one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}
