// The JavaScript that runs inside the interpreter before a script: it binds the tools and the
// console, and gives the host `run` and `describe`. Everything it needs from the language it
// takes before the script runs, so a script that replaces JSON, String or Promise methods changes
// its own world, not how its calls, its result or its errors reach switchboard.

/** Where a script's lines are counted from: the script is the body of `(async () => {\n…\n})`. */
export const SCRIPT_FILE = 'script.js';
export const LINE_OFFSET = 1;
export const asFunction = (source: string) => `(async () => {\n${source}\n})`;

/** The longest error name, message and stack that leave the interpreter (in characters). */
export const ERROR_TEXT_MAX = { name: 100, message: 2_000, stack: 2_000 };

/**
 * Evaluates to `{ run, describe }`. It reads, then deletes, these globals the host set:
 * `__sb_call(name, argsJson)` → Promise of the answer's JSON; `__sb_print(level, text)`;
 * `__sb_done(ok, text)`, told once how the script ended: its result as JSON text (undefined
 * when it returned nothing), or JSON { name, message, stack, line } describing its error;
 * `__sb_names` (JSON array of tool names); `__sb_max_args` (longest arguments, in characters).
 */
export const PRELUDE = `(() => {
  const g = globalThis;
  const call = g.__sb_call, print = g.__sb_print, done = g.__sb_done, maxArgs = g.__sb_max_args;
  const stringify = JSON.stringify, parse = JSON.parse, apply = Reflect.apply, toText = String;
  const cutText = String.prototype.slice, join = Array.prototype.join, map = Array.prototype.map;
  const freeze = Object.freeze, create = Object.create, ErrorOf = Error, RangeErrorOf = RangeError;
  const names = parse(g.__sb_names);
  delete g.__sb_call; delete g.__sb_print; delete g.__sb_done; delete g.__sb_names; delete g.__sb_max_args;
  const cut = (s, n) => apply(cutText, s, [0, n]);
  const show = (v) => {
    if (typeof v === 'string') return v;
    try { const j = stringify(v); return j === undefined ? toText(v) : j; } catch { return toText(v); }
  };
  const line = (level) => (...a) => { print(level, apply(join, apply(map, a, [show]), [' '])); };
  g.console = freeze({ log: line('log'), info: line('info'), warn: line('warn'), error: line('error'), debug: line('debug') });
  const invoke = async (n, args) => {
    const text = stringify(args === undefined ? {} : args);
    if (typeof text !== 'string') throw new ErrorOf('tool arguments must be a JSON value');
    if (text.length > maxArgs) throw new RangeErrorOf('the arguments of ' + n + ' are longer than ' + maxArgs + ' characters');
    const r = parse(await call(n, text));
    if (r.error) { const e = new ErrorOf(r.error.message); e.name = 'ToolError'; e.code = r.error.code; e.tool = n; throw e; }
    return r.value;
  };
  const tools = create(null);
  for (const n of names) tools[n] = (args) => invoke(n, args);
  g.tools = freeze(tools);
  g.callTool = (name, args) => invoke(toText(name), args);
  const textOf = (v, n) => { try { return typeof v === 'string' ? cut(v, n) : undefined; } catch { return undefined; } };
  // A description with no prototype, of strings and a number: stringify finds no toJSON on it.
  const description = (name, message, stack, line) => {
    const d = create(null);
    d.name = name; d.message = message; d.stack = stack; d.line = line;
    return stringify(d);
  };
  const describe = (e) => {
    try {
      if (e === null || (typeof e !== 'object' && typeof e !== 'function'))
        return description('Error', 'uncaught: ' + cut(toText(e), ${ERROR_TEXT_MAX.message}), '', undefined);
      const message = textOf(e.message, ${ERROR_TEXT_MAX.message});
      return description(
        textOf(e.name, ${ERROR_TEXT_MAX.name}) ?? 'Error',
        message ?? cut(toText(show(e)), ${ERROR_TEXT_MAX.message}),
        textOf(e.stack, ${ERROR_TEXT_MAX.stack}) ?? '',
        typeof e.lineNumber === 'number' ? e.lineNumber : undefined,
      );
    } catch {
      return description('Error', 'the script threw a value that cannot be read', '', undefined);
    }
  };
  const run = async (script) => {
    let text;
    try {
      const v = await script();
      text = v === undefined ? undefined : stringify(v);
    } catch (e) {
      done(false, describe(e));
      return;
    }
    done(true, typeof text === 'string' ? text : undefined);
  };
  return { run, describe };
})()`;
