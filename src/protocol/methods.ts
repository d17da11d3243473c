// The one method table: everything any stage needs to know about an MCP method, in one entry per
// method (both eras, both directions) and one for the handler kind. Stages ask `methodSpec` instead
// of keeping switches of their own, so a method added here is known everywhere at once, and a
// method this table lacks is caught by the test that compares it with the specification's lists.
import type { Params } from '../jsonrpc/message.js';

/** What a call names and the resolve stage finds an owning backend for. */
export type TargetKind = 'tool' | 'prompt' | 'resource' | 'completion' | 'task';

/** The catalog's lists. */
export type ListName = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/**
 * What the policy judges a call as (see policy/policy.ts): `ask` is a backend's question on its
 * way back to a caller, judged only by rules that name its method.
 */
export type SubjectKind = 'tool' | 'prompt' | 'resource' | 'handler' | 'method' | 'ask';

/** Which params field names the target, and so what grants and denials speak of. */
export type NameField = 'name' | 'uri' | 'ref' | 'taskId';

/** Who answers a call from a caller. */
export type Answerer =
  /** switchboard itself, without a backend: the handshake, ping, log level, discovery, listen. */
  | 'switchboard'
  /** the merged catalog (lists). */
  | 'catalog'
  /** the backend that owns the target. */
  | 'backend'
  /** switchboard's task routes (the merged tasks/list). */
  | 'tasks'
  /** a handler an extension registered (vault.sign, context.get, ...). */
  | 'handler';

export interface MethodSpec {
  /**
   * `call`: a caller's request to switchboard (and on to a backend). `ask`: a request a backend
   * sends towards the caller of one of its calls (sampling, elicitation, roots); it comes back
   * through the gated return path.
   */
  readonly direction: 'call' | 'ask';
  /** The eras that have the method: removed ones are answered as unknown on the modern wire. */
  readonly eras: readonly ('legacy' | 'modern')[];
  readonly answeredBy: Answerer;
  /** The kind of target the call names (resolve finds its backend). */
  readonly target?: TargetKind;
  /** Where the params name the target; also what `Mcp-Name` mirrors when `header` is set. */
  readonly names?: NameField;
  /** The modern HTTP wire mirrors the name in an `Mcp-Name` header. */
  readonly header?: boolean;
  /** For lists: which catalog list, its result key and item field, and the call items are listed for. */
  readonly list?: {
    readonly kind: ListName;
    /** The server capability that offers the list. */
    readonly capability: 'tools' | 'prompts' | 'resources';
    readonly key: string;
    readonly field: 'name' | 'uri' | 'uriTemplate';
    readonly subject: SubjectKind;
    readonly judgedAs: string;
  };
  /** Safe to send again when its backend went down under it: it has no effects. */
  readonly idempotent?: boolean;
  /** Its modern result carries cache hints (ttlMs, cacheScope). */
  readonly cacheable?: boolean;
  /** A modern server may answer it with an input_required result. */
  readonly inputRequired?: boolean;
  /** For asks: the client capability the caller must have declared. */
  readonly capability?: 'sampling' | 'elicitation' | 'roots';
  /** Every caller may use it whatever the policy says (housekeeping; tasks/list lists only one's own). */
  readonly alwaysAllowed?: boolean;
  /** Sent to every replica of a backend: it sets the server as a whole. */
  readonly broadcast?: boolean;
}

const BOTH = ['legacy', 'modern'] as const;
const LEGACY = ['legacy'] as const;
const MODERN = ['modern'] as const;
/** A call on one task, addressed by its id. */
const TASK_CALL = {
  direction: 'call',
  eras: BOTH,
  answeredBy: 'backend',
  target: 'task',
  names: 'taskId',
} as const;

/** Every MCP method switchboard knows, by name. */
export const METHODS = {
  // Housekeeping, answered by switchboard.
  initialize: { direction: 'call', eras: LEGACY, answeredBy: 'switchboard', alwaysAllowed: true },
  ping: { direction: 'call', eras: LEGACY, answeredBy: 'switchboard', alwaysAllowed: true },
  'logging/setLevel': {
    direction: 'call',
    eras: LEGACY,
    answeredBy: 'switchboard',
    alwaysAllowed: true,
    broadcast: true,
  },
  'server/discover': {
    direction: 'call',
    eras: MODERN,
    answeredBy: 'switchboard',
    alwaysAllowed: true,
    cacheable: true,
  },
  'subscriptions/listen': { direction: 'call', eras: MODERN, answeredBy: 'switchboard', alwaysAllowed: true },

  // Lists, answered from the merged catalog and filtered item by item.
  'tools/list': {
    direction: 'call',
    eras: BOTH,
    answeredBy: 'catalog',
    cacheable: true,
    list: {
      kind: 'tools',
      capability: 'tools',
      key: 'tools',
      field: 'name',
      subject: 'tool',
      judgedAs: 'tools/call',
    },
  },
  'prompts/list': {
    direction: 'call',
    eras: BOTH,
    answeredBy: 'catalog',
    cacheable: true,
    list: {
      kind: 'prompts',
      capability: 'prompts',
      key: 'prompts',
      field: 'name',
      subject: 'prompt',
      judgedAs: 'prompts/get',
    },
  },
  'resources/list': {
    direction: 'call',
    eras: BOTH,
    answeredBy: 'catalog',
    cacheable: true,
    list: {
      kind: 'resources',
      capability: 'resources',
      key: 'resources',
      field: 'uri',
      subject: 'resource',
      judgedAs: 'resources/read',
    },
  },
  'resources/templates/list': {
    direction: 'call',
    eras: BOTH,
    answeredBy: 'catalog',
    cacheable: true,
    list: {
      kind: 'resourceTemplates',
      capability: 'resources',
      key: 'resourceTemplates',
      field: 'uriTemplate',
      subject: 'resource',
      judgedAs: 'resources/read',
    },
  },

  // Calls on one backend's target.
  'tools/call': {
    direction: 'call',
    eras: BOTH,
    answeredBy: 'backend',
    target: 'tool',
    names: 'name',
    header: true,
    inputRequired: true,
  },
  'prompts/get': {
    direction: 'call',
    eras: BOTH,
    answeredBy: 'backend',
    target: 'prompt',
    names: 'name',
    header: true,
    idempotent: true,
    inputRequired: true,
  },
  'resources/read': {
    direction: 'call',
    eras: BOTH,
    answeredBy: 'backend',
    target: 'resource',
    names: 'uri',
    header: true,
    idempotent: true,
    cacheable: true,
    inputRequired: true,
  },
  'resources/subscribe': {
    direction: 'call',
    eras: LEGACY,
    answeredBy: 'backend',
    target: 'resource',
    names: 'uri',
  },
  'resources/unsubscribe': {
    direction: 'call',
    eras: LEGACY,
    answeredBy: 'backend',
    target: 'resource',
    names: 'uri',
  },
  'completion/complete': {
    direction: 'call',
    eras: BOTH,
    answeredBy: 'backend',
    target: 'completion',
    names: 'ref',
  },

  // Tasks: ids name their backend (`<backend>:<id>`); only the caller that made a task reaches it.
  'tasks/get': { ...TASK_CALL, header: true },
  'tasks/result': TASK_CALL,
  'tasks/cancel': { ...TASK_CALL, header: true },
  'tasks/update': { ...TASK_CALL, header: true },
  'tasks/list': { direction: 'call', eras: BOTH, answeredBy: 'tasks', alwaysAllowed: true },

  // What a backend asks the caller of one of its calls: the return path.
  'sampling/createMessage': {
    direction: 'ask',
    eras: BOTH,
    answeredBy: 'switchboard',
    capability: 'sampling',
  },
  'elicitation/create': {
    direction: 'ask',
    eras: BOTH,
    answeredBy: 'switchboard',
    capability: 'elicitation',
  },
  'roots/list': { direction: 'ask', eras: BOTH, answeredBy: 'switchboard', capability: 'roots' },
} as const satisfies Record<string, MethodSpec>;

export type McpMethod = keyof typeof METHODS;

/** Any method that is not MCP's: a handler an extension registered (`vault.sign`, `context.get`). */
export const HANDLER: MethodSpec = { direction: 'call', eras: BOTH, answeredBy: 'handler' };

const TABLE: ReadonlyMap<string, MethodSpec> = new Map(Object.entries(METHODS));

/** The entry for an MCP method; undefined for anything else (a handler, or a method nobody serves). */
export function methodSpec(method: string): MethodSpec | undefined {
  return TABLE.get(method);
}

/** The methods whose entries say `test` holds. */
export function methodsWhere(test: (spec: MethodSpec) => boolean): ReadonlySet<string> {
  return new Set([...TABLE].filter(([, spec]) => test(spec)).map(([m]) => m));
}

export type ListSpec = NonNullable<MethodSpec['list']> & { readonly method: string };

/** Each catalog list with the method that reads it. */
export const LISTS = Object.fromEntries(
  [...TABLE].flatMap(([method, s]) => (s.list ? [[s.list.kind, { ...s.list, method }]] : [])),
) as Readonly<Record<ListName, ListSpec>>;

/** The string a target is named by in these params (exposed name, URI, reference or task id). */
export function namedBy(spec: MethodSpec | undefined, params: Params): unknown {
  switch (spec?.names) {
    case 'name':
      return params.name;
    case 'uri':
      return params.uri;
    case 'taskId':
      return params.taskId;
    case 'ref': {
      const ref = params.ref as { name?: unknown; uri?: unknown } | undefined;
      return ref?.name ?? ref?.uri;
    }
    default:
      return undefined;
  }
}

/**
 * What a call's argument conditions (policy) and its audit record judge: a tool's or prompt's
 * arguments, a resource's URI (as `uri`, the owner's own when resolved), a completion's argument
 * and context, or, for anything else, the params without `_meta`.
 */
export function argumentsOf(method: string, params: Params, resolvedName?: string): unknown {
  const spec = methodSpec(method);
  if (spec?.target === 'tool' || spec?.target === 'prompt') return params.arguments ?? {};
  if (spec?.target === 'resource') return { uri: resolvedName ?? params.uri };
  if (spec?.target === 'completion') return { argument: params.argument, context: params.context };
  const { _meta: _, ...rest } = params;
  return rest;
}

/** A method of the legacy era only (the modern era removed it): unknown on the modern wire. */
export function removedInModern(method: string): boolean {
  const spec = methodSpec(method);
  return spec !== undefined && !(spec.eras as readonly string[]).includes('modern');
}
