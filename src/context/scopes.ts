// What a scope, key or topic may look like, and which settings (limits, TTL, schema, validator) a
// scope gets from the `context.scopes` patterns, compiled once per scope name.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { SCOPE, TOPIC, type ContextSection, type ScopeSettings } from '../config/context-schema.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { Limits } from './store.js';
import { globTest } from '../encoding/glob.js';

// ajv-formats is CommonJS: its function is the module itself or its `default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

/** Keys: 1-512 characters, no control characters and no U+10FFFF (the store's range end). */
const KEY = /^[^\p{Cc}\u{10FFFF}]{1,512}$/u;

export function scopeOf(params: Record<string, unknown>): string {
  const s = params.scope;
  if (typeof s !== 'string' || !SCOPE.test(s))
    throw new WireError(
      WIRE.INVALID_PARAMS,
      'scope must be "global" or "<kind>:<id>" (e.g. server:search, run:42): printable ASCII without spaces, an id of at most 200 characters',
    );
  return s;
}

export function keyOf(params: Record<string, unknown>, field = 'key', optional = false): string {
  const k = params[field];
  if (optional && k === undefined) return '';
  if (typeof k !== 'string' || !KEY.test(k))
    throw new WireError(
      WIRE.INVALID_PARAMS,
      `${field} must be a string of 1 to 512 characters without control characters`,
    );
  return k;
}

const MAX_TOPIC = 200;

/** A topic to publish to (exact), or to subscribe to (exact, or ending in `*`: a prefix). */
export function topicOf(params: Record<string, unknown>, pattern: boolean): string {
  const t = params.topic;
  const body = typeof t === 'string' && pattern && t.endsWith('*') ? t.slice(0, -1).replace(/\.$/, '') : t;
  const ok =
    typeof t === 'string' &&
    t.length <= MAX_TOPIC &&
    (t === '*' || (typeof body === 'string' && TOPIC.test(body)));
  if (!ok)
    throw new WireError(
      WIRE.INVALID_PARAMS,
      pattern
        ? `topic must be a dotted name (builds.done) of at most ${MAX_TOPIC} characters, optionally ending in * (builds.*), or *`
        : `topic must be a dotted name such as builds.done (letters, digits, _ : -) of at most ${MAX_TOPIC} characters`,
    );
  return t as string;
}

export interface ScopeRules {
  maxValueBytes: number;
  limits: Limits;
  ttlMs?: number | undefined;
  validate?: ValidateFunction | undefined;
  validator?: string | undefined;
}

/** The settings of each scope, from the first matching pattern (cached per scope name, bounded). */
export class ScopeSettingsTable {
  private readonly patterns: {
    match: (s: string) => boolean;
    settings: ScopeSettings;
    schema?: ValidateFunction;
  }[];
  private readonly cache = new Map<string, ScopeRules>();

  constructor(private readonly config: ContextSection) {
    const ajv = addFormats(new Ajv({ strict: false, allErrors: false }));
    this.patterns = Object.entries(config.scopes).map(([pattern, settings]) => ({
      match: globTest(pattern),
      settings,
      ...(settings.schema && { schema: ajv.compile(settings.schema) }),
    }));
  }

  rules(scope: string): ScopeRules {
    let rules = this.cache.get(scope);
    if (rules) return rules;
    const hit = this.patterns.find((p) => p.match(scope));
    const s = hit?.settings;
    rules = {
      maxValueBytes: s?.maxValueBytes ?? this.config.maxValueBytes,
      limits: { maxKeys: s?.maxKeys ?? this.config.maxKeys, maxBytes: s?.maxBytes ?? this.config.maxBytes },
      ttlMs: s?.ttlMs,
      validate: hit?.schema,
      validator: s?.validator,
    };
    // Scope names come from callers (run ids, session ids): keep the cache bounded.
    if (this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(scope, rules);
    return rules;
  }
}
