// The context extension: the shared context store's handlers (context.get | put | cas | delete |
// list | watch). Every operation is a call through the pipeline (policy per scope, audit); a write
// is proposed, validated (the scope's JSON Schema, then its validator through the pipeline) and
// only then committed.
import { LocalError, WIRE, WireError } from '../errors/errors.js';
import { HANDLER_METHOD, type HandlerContext } from '../handlers/handler-chain.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { keyOf, scopeOf, ScopeSettingsTable, type ScopeRules } from '../context/scopes.js';
import { SqliteContextStore } from '../context/sqlite-store.js';
import { ContextStoreError, type Change, type Entry } from '../context/store.js';
import type { AnyContextStore } from '../context/any-store.js';
import type { Extension, Running } from './extension.js';
import { ContextResources } from './context-resources.js';

export const CONTEXT_METHODS = [
  'context.get',
  'context.put',
  'context.cas',
  'context.delete',
  'context.list',
  'context.watch',
] as const;

/** What the context extension holds while switchboard runs: the store, for layers built on it. */
export interface RunningContext extends Running {
  readonly store: AnyContextStore;
}

const LIST_MAX = 1000;

const valueOf = (e: Pick<Entry, 'json'>): unknown => JSON.parse(e.json) as unknown;

function described(e: Entry, withValue = true): Result {
  return {
    scope: e.scope,
    key: e.key,
    version: e.version,
    updatedAt: e.updatedAt,
    ...(e.expiresAt !== undefined && { expiresAt: e.expiresAt }),
    ...(withValue && { value: valueOf(e) }),
  };
}

function optionalInt(params: Params, field: string, min: number): number | undefined {
  const v = params[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
    throw new WireError(WIRE.INVALID_PARAMS, `${field} must be an integer >= ${min}`);
  return v;
}

function storeFailure(err: unknown): unknown {
  if (!(err instanceof ContextStoreError)) return err;
  const code = err.reason === 'conflict' ? 'context_conflict' : 'context_scope_full';
  return new LocalError(code, err.message, { data: err.data });
}

function rejected(scope: string, key: string, why: string): LocalError {
  return new LocalError('context_rejected', `Write to ${scope}/${key} rejected: ${why}`, {
    data: { scope, key, why },
  });
}

export const contextExtension: Extension = {
  name: 'context',
  streaming: ['context.watch'],
  setup(api) {
    const config = api.config.context;
    if (!config.enabled) return;
    // The mesh's shared store when mesh.state is jetstream; this node's state database otherwise.
    const store: AnyContextStore = api.contextStore ?? new SqliteContextStore(api.state);
    const scopes = new ScopeSettingsTable(config);
    const watches = new Set<() => void>();

    /** Proposes, validates and commits one write (put, or cas when `ifVersion` is required). */
    const write = async (params: Params, ctx: HandlerContext, cas: boolean): Promise<Result> => {
      const scope = scopeOf(params);
      const key = keyOf(params);
      if (!('value' in params) || params.value === undefined)
        throw new WireError(WIRE.INVALID_PARAMS, 'value is required (any JSON value)');
      const ifVersion = optionalInt(params, 'ifVersion', 0);
      if (cas && ifVersion === undefined)
        throw new WireError(WIRE.INVALID_PARAMS, 'ifVersion is required (0: the key must not exist yet)');
      const rules = scopes.rules(scope);
      const ttlMs = optionalInt(params, 'ttlMs', 1) ?? rules.ttlMs;
      if (ttlMs !== undefined && config.maxTtlMs !== undefined && ttlMs > config.maxTtlMs)
        throw new WireError(WIRE.INVALID_PARAMS, `ttlMs may be at most ${config.maxTtlMs}`);
      const json = JSON.stringify(params.value);
      const bytes = Buffer.byteLength(json);
      if (bytes > rules.maxValueBytes)
        throw new LocalError(
          'context_too_large',
          `Value for ${scope}/${key} is ${bytes} bytes; the scope takes at most ${rules.maxValueBytes}`,
          { data: { scope, key, bytes, limit: rules.maxValueBytes } },
        );
      // With no validator to ask, the write is queued at once, with no await before it: its group
      // commits in the turn it was asked in, and it is answered within it (handler-deadline.ts).
      const asking = validate(rules, scope, key, params.value, ctx);
      if (asking) await asking;
      try {
        const options = { ifVersion, ttlMs, limits: rules.limits };
        // Grouped when the store can: the answer waits for the commit its write shares with others.
        const entry = store.putGrouped
          ? await store.putGrouped(scope, key, json, options)
          : await store.put(scope, key, json, options);
        return described(entry, false);
      } catch (err) {
        throw storeFailure(err);
      }
    };

    /** Checks the scope's schema; asks its validator, if it has one (the promise of that answer). */
    const validate = (
      rules: ScopeRules,
      scope: string,
      key: string,
      value: unknown,
      ctx: HandlerContext,
    ): Promise<void> | undefined => {
      if (rules.validate && !rules.validate(value)) {
        const e = rules.validate.errors?.[0];
        throw rejected(
          scope,
          key,
          `schema: ${e ? `${e.instancePath || '/'} ${e.message ?? 'is invalid'}` : 'invalid'}`,
        );
      }
      return rules.validator === undefined
        ? undefined
        : askValidator(rules.validator, scope, key, value, ctx);
    };

    const askValidator = async (
      validator: string,
      scope: string,
      key: string,
      value: unknown,
      ctx: HandlerContext,
    ): Promise<void> => {
      const proposal = {
        scope,
        key,
        value,
        version: (await store.get(scope, key))?.version ?? 0,
        caller: `${ctx.caller.kind}:${ctx.caller.id}`,
      };
      // The validator is asked by switchboard itself (caller extension:context), through the
      // pipeline: it is audited, and the writer needs no grant to it.
      let answer: Result;
      try {
        answer = HANDLER_METHOD.test(validator)
          ? await api.dispatch(validator, proposal, ctx.signal)
          : await api.dispatch('tools/call', { name: validator, arguments: proposal }, ctx.signal);
      } catch (err) {
        throw rejected(scope, key, `validator ${validator} failed: ${(err as Error).message}`);
      }
      const why = verdictOf(answer);
      if (why !== undefined) throw rejected(scope, key, `validator ${validator}: ${why}`);
    };

    api.handle('context.get', (params) => {
      const scope = scopeOf(params);
      const key = keyOf(params);
      const got = (e: Entry | undefined): Result =>
        e ? { found: true, ...described(e) } : { found: false, scope, key, version: 0 };
      // The embedded store answers at once; the mesh's later.
      const e = store.get(scope, key);
      return e instanceof Promise ? e.then(got) : got(e);
    });
    api.handle('context.put', (params, ctx) => write(params, ctx, false));
    api.handle('context.cas', (params, ctx) => write(params, ctx, true));
    api.handle('context.delete', async (params) => {
      const scope = scopeOf(params);
      const key = keyOf(params);
      try {
        return { deleted: await store.delete(scope, key, optionalInt(params, 'ifVersion', 0)) };
      } catch (err) {
        throw storeFailure(err);
      }
    });
    api.handle('context.list', async (params) => {
      const scope = scopeOf(params);
      const prefix = keyOf(params, 'prefix', true);
      const after = params.cursor === undefined ? undefined : keyOf(params, 'cursor');
      const limit = Math.min(optionalInt(params, 'limit', 1) ?? 100, LIST_MAX);
      const page = await store.list(scope, prefix, limit, after);
      const values = params.values !== false;
      return {
        scope,
        entries: page.entries.map((e) => {
          const { scope: _s, ...rest } = described(e, values);
          return rest;
        }),
        ...(page.next !== undefined && { nextCursor: page.next }),
      };
    });
    api.handle('context.watch', (params, ctx) => {
      const scope = scopeOf(params);
      const prefix = keyOf(params, 'prefix', true);
      return new Promise<Result>((resolve, reject) => {
        const send = (c: Change) =>
          ctx.notify('notifications/context/changed', {
            scope: c.scope,
            key: c.key,
            op: c.op,
            version: c.version,
            ...(c.json !== undefined && { value: valueOf({ json: c.json }) }),
          });
        let unwatch: (() => void) | undefined;
        let ended = false;
        const end = (result: Result) => {
          ended = true;
          unwatch?.();
          watches.delete(stop);
          resolve(result);
        };
        const stop = () => end({ ended: 'switchboard stopping' });
        watches.add(stop);
        ctx.signal.addEventListener('abort', () => end({}), { once: true });
        Promise.resolve(store.watch(scope, prefix, send)).then(
          (off) => {
            if (ended) return off();
            unwatch = off;
            // Tells the caller the watch is in place: changes from here on reach it.
            ctx.notify('notifications/context/watching', { scope, prefix });
          },
          (err: unknown) => {
            watches.delete(stop);
            reject(err as Error);
          },
        );
      });
    });

    const sweeper = setInterval(() => {
      const failed = (err: unknown) =>
        api.log.warn({ err }, 'context: sweeping expired keys failed; will retry');
      try {
        Promise.resolve(store.sweep()).catch(failed);
      } catch (err) {
        failed(err);
      }
    }, config.sweepMs);
    sweeper.unref();
    // Hosts reach the scopes `context.resources.scopes` names as MCP resources (context://).
    let resources: ContextResources | undefined;
    if (config.resources.scopes.length > 0) {
      let changed = (): void => {};
      resources = new ContextResources(store, config.resources, () => changed());
      changed = api.addSource(resources);
    }
    const running: RunningContext = {
      store,
      close: () => {
        resources?.close();
        clearInterval(sweeper);
        for (const stop of [...watches]) stop();
      },
    };
    return running;
  },
};

/** Why a validator's answer rejects the value (undefined: it accepts). */
function verdictOf(answer: Result): string | undefined {
  if (answer.isError === true) {
    const content = Array.isArray(answer.content) ? (answer.content as { text?: unknown }[]) : [];
    return (
      content
        .map((c) => (typeof c.text === 'string' ? c.text : ''))
        .join(' ')
        .trim() || 'rejected'
    );
  }
  const verdict = (answer.structuredContent ?? answer) as { valid?: unknown; reason?: unknown };
  if (verdict.valid === false) return typeof verdict.reason === 'string' ? verdict.reason : 'rejected';
  return undefined;
}
