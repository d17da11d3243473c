// The `context` and `events` sections: the shared context store (scopes of versioned keys) and
// publish/subscribe between servers, with per-scope validation and limits, and durable topics.
import { Ajv } from 'ajv';
import { z } from 'zod';
import { timerMs } from './durations.js';

/** Whether `schema` compiles as a JSON Schema (draft 2020-12 subset ajv accepts by default). */
function schemaProblem(schema: unknown): string | undefined {
  try {
    new Ajv({ strict: false }).compile(schema as object);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const Bytes = (what: string, dflt: number) => z.number().int().min(1).default(dflt).describe(what);

const ScopeSettings = z
  .object({
    schema: z
      .record(z.string(), z.unknown())
      .optional()
      .superRefine((s, ctx) => {
        const problem = s === undefined ? undefined : schemaProblem(s);
        if (problem) ctx.addIssue({ code: 'custom', message: `a valid JSON Schema (${problem})` });
      })
      .describe('A JSON Schema every value written to the scope must satisfy (checked before the write).'),
    validator: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Called through the pipeline with {scope, key, value, version, caller} before a write commits: a handler method (ext.op) answering {valid, reason?}, or a tool (as hosts see it) whose error result rejects with its text.',
      ),
    maxValueBytes: z.number().int().min(1).optional().describe('Overrides context.maxValueBytes.'),
    maxKeys: z.number().int().min(1).optional().describe('Overrides context.maxKeys.'),
    maxBytes: z.number().int().min(1).optional().describe('Overrides context.maxBytes.'),
    ttlMs: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Default time to live of keys written without ttlMs (default: none, keys stay).'),
  })
  .strict();
export type ScopeSettings = z.output<typeof ScopeSettings>;

/** A scope as the store spells it: `global` or `<kind>:<id>` (src/context/scopes.ts). */
/**
 * `global`, or `<kind>:<id>` (`server:search`, `run:42`, `session:abc`, `team:x`): printable ASCII,
 * no spaces, at most 200 characters, so a scope reads the same in a policy rule, a log line and a
 * `context://scope/key` URI.
 */
export const SCOPE = /^(?:global|[a-z][a-z0-9_-]*:[\x21-\x7e]{1,200})$/;
/** Topics: dotted names (`builds.done`); a subscription may end in `*` to take a prefix. */
export const TOPIC = /^[A-Za-z0-9_:-]+(?:\.[A-Za-z0-9_:-]+)*$/;

const ScopeName = z.string().regex(SCOPE, 'a scope: "global" or "<kind>:<id>"');

/**
 * A settings pattern (`*` for any run of characters) some name can match. A topic's characters
 * are valid wherever a `*` stands, so a pattern is one when it reads as a topic with each `*` a
 * letter; a scope's `*` may stand for its `:` too, so only its characters are checked (printable,
 * no spaces): enough to refuse a pattern that could never apply, and no working one.
 */
function namePattern(matchable: (pattern: string) => boolean, what: string) {
  return z
    .string()
    .min(1)
    .refine((p) => p === '*' || matchable(p), `${what}, * for any run of characters`);
}

const topicPattern = (p: string) => TOPIC.test(p.replaceAll('*', 'x'));
const scopePattern = (p: string) => /^[\x21-\x7e]+$/.test(p);

const ContextResources = z
  .object({
    scopes: z
      .array(ScopeName)
      .default([])
      .describe(
        'Scopes hosts reach as MCP resources context://<scope>/<key> (read, list, subscribe), by exact name; none (the default): no context resources. The policy decides per caller (rules with backends: [context]).',
      ),
    maxListed: z
      .number()
      .int()
      .min(0)
      .default(1000)
      .describe(
        'Most context entries resources/list shows (in scope order, then key order); the rest are read through the template context://{scope}/{key}.',
      ),
  })
  .strict()
  .prefault({})
  .describe('The context store as MCP resources for hosts. See docs/context.md#hosts-as-mcp-resources.');

export const ContextSection = z
  .object({
    enabled: z.boolean().default(true).describe('Serve the context.* handlers (the shared context store).'),
    maxValueBytes: Bytes('Largest value (its JSON text, in bytes) one key may hold.', 65_536),
    maxKeys: Bytes('Most keys one scope may hold.', 10_000),
    maxBytes: Bytes('Most bytes of values one scope may hold.', 16 * 1024 * 1024),
    maxTtlMs: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Longest ttlMs a write may ask for (default: no limit).'),
    sweepMs: timerMs(100)
      .default(60_000)
      .describe('How often expired keys (already invisible) are deleted and their watchers told.'),
    scopes: z
      .record(
        namePattern(scopePattern, 'a scope pattern: "global" or "<kind>:<id>", printable, without spaces'),
        ScopeSettings,
      )
      .default({})
      .describe(
        'Settings per scope pattern (* matches any run of characters, e.g. "server:*", "run:*"); the first pattern in file order that matches a scope applies.',
      ),
    resources: ContextResources,
  })
  .strict()
  .prefault({})
  .describe('The shared context store: scopes of versioned keys. See docs/context.md.');
export type ContextSection = z.output<typeof ContextSection>;

const TopicSettings = z
  .object({
    durable: z
      .boolean()
      .default(false)
      .describe('Keep events in the state database for named subscriptions (at least once, ack).'),
    maxEvents: z.number().int().min(1).default(10_000).describe('Durable: most events kept per topic.'),
    maxAgeMs: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Durable: events older than this are deleted (default: kept until maxEvents).'),
  })
  .strict();
export type TopicSettings = z.output<typeof TopicSettings>;

export const EventsSection = z
  .object({
    enabled: z.boolean().default(true).describe('Serve the events.* handlers (publish/subscribe).'),
    maxPayloadBytes: Bytes("Largest event's data (its JSON text, in bytes).", 65_536),
    maxReplay: z
      .number()
      .int()
      .min(1)
      .default(1_000)
      .describe(
        'Durable: most unacknowledged events replayed on one subscribe; the subscriber acks and resubscribes for more.',
      ),
    topics: z
      .record(
        namePattern(topicPattern, 'a topic pattern: dotted (builds.done), of letters, digits, _ : -'),
        TopicSettings,
      )
      .default({})
      .describe(
        'Settings per topic pattern (* matches any run of characters); first match in file order. Topics no pattern matches are live only.',
      ),
  })
  .strict()
  .prefault({})
  .describe('Publish/subscribe between servers over the bridge. See docs/events.md.');
export type EventsSection = z.output<typeof EventsSection>;
