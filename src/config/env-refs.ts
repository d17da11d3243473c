// Resolves `${VAR}` references in configuration strings, so secrets live in the environment rather than in the file.
//
// Grammar, inside any string value (never in keys):
//   ${NAME}            the variable; an error when it is not set (never an empty string by accident)
//   ${NAME:-default}   the variable, or the literal default when it is unset or empty
//   ${env:NAME}        the same as ${NAME}: the spelling VS Code and Cursor use, so their files work unchanged
//   $${                a literal `${`
//   ${secret:NAME}     kept as written: a vault secret, resolved by the vault where it is used
// Only the file itself names a secret: under `servers`, where secrets are resolved, the literal
// text `${secret:` (from the escape, or from a variable's value) stays escaped as `$${secret:`,
// which resolveSecretRefs turns back into the literal text once the references are replaced.
// `${workspaceFolder}` and `${userHome}` mean what they mean to VS Code and Cursor unless the
// environment sets a variable of that name. Other editor variables (`${input:…}`) cannot be
// resolved outside the editor and are errors that say so.

import { ownValue } from '../encoding/set-own.js';

export interface EnvContext {
  readonly env: NodeJS.ProcessEnv;
  /** What `${workspaceFolder}` means: the folder that holds `.vscode/` or `.cursor/`, else the file's folder. */
  readonly workspaceFolder: string;
  readonly userHome: string;
}

export type Interpolation =
  { ok: true; value: string; substituted: boolean } | { ok: false; message: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Expands one string; the first bad reference makes the whole string an error. With
 * `deferSecrets` (strings where `${secret:NAME}` will be resolved), every literal `${secret:` in the
 * result is kept escaped, so that only the file's own references remain references.
 */
export function interpolate(text: string, ctx: EnvContext, deferSecrets = false): Interpolation {
  if (!text.includes('${')) return { ok: true, value: text, substituted: false };
  let out = '';
  let substituted = false;
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      out += deferSecrets && text.startsWith('secret:', i + 3) ? '$${' : '${';
      i += 3;
      continue;
    }
    if (!text.startsWith('${', i)) {
      out += text[i];
      i += 1;
      continue;
    }
    const close = text.indexOf('}', i + 2);
    if (close === -1) {
      return { ok: false, message: "has '${' without a closing '}' (write '$${' for a literal '${')" };
    }
    if (text.startsWith('secret:', i + 2)) {
      // A vault secret, resolved where it is used (HTTP headers), never from the environment.
      if (deferSecrets && out.endsWith('$')) {
        return {
          ok: false,
          message:
            "has '$' right before '${secret:…}', which reads as the escape '$${secret:': put a character between them",
        };
      }
      out += text.slice(i, close + 1);
      i = close + 1;
      continue;
    }
    const resolved = resolveReference(text.slice(i + 2, close), ctx);
    if (!resolved.ok) return resolved;
    out += deferSecrets ? escapeSecretRefs(resolved.value) : resolved.value;
    substituted = true;
    i = close + 1;
  }
  return { ok: true, value: out, substituted };
}

function resolveReference(
  body: string,
  ctx: EnvContext,
): { ok: true; value: string } | { ok: false; message: string } {
  const dash = body.indexOf(':-');
  let name = dash === -1 ? body : body.slice(0, dash);
  const fallback = dash === -1 ? undefined : body.slice(dash + 2);
  if (name.startsWith('env:')) name = name.slice(4);

  if (!NAME.test(name)) {
    const editorVar = /^([A-Za-z]+):(.*)$/.exec(name);
    if (editorVar?.[1] === 'input') {
      return {
        ok: false,
        message: `references \${${body}}, a VS Code input that only the editor can prompt for: reference an environment variable instead, e.g. \${${suggestVarName(editorVar[2] ?? '')}}`,
      };
    }
    if (editorVar) {
      return { ok: false, message: `references \${${body}}, an editor variable switchboard cannot resolve` };
    }
    return {
      ok: false,
      message: `has '\${${body}}': expected \${NAME}, \${NAME:-default} or \${env:NAME} (NAME of letters, digits and _; write '$\${' for a literal '\${')`,
    };
  }
  if (fallback?.includes('${')) {
    return {
      ok: false,
      message: `has '\${${body}}': a default is literal text and cannot contain another reference`,
    };
  }

  const value = ownValue(ctx.env, name);
  if (fallback !== undefined)
    return { ok: true, value: value === undefined || value === '' ? fallback : value };
  if (value !== undefined) return { ok: true, value };
  if (name === 'workspaceFolder') return { ok: true, value: ctx.workspaceFolder };
  if (name === 'userHome') return { ok: true, value: ctx.userHome };
  return {
    ok: false,
    message: `references \${${name}}, but ${name} is not set in the environment (set it, or write \${${name}:-default})`,
  };
}

/** Text that must stay literal where secrets are resolved: each `${secret:` escaped. */
export function escapeSecretRefs(text: string): string {
  // A function, not a replacement string: there `$$` would mean one `$`.
  return text.includes('${secret:') ? text.replaceAll('${secret:', () => '$${secret:') : text;
}

/** A reference `${secret:NAME}`, or the escape `$${secret:` of the literal text (tried first). */
const SECRET_TOKEN = /\$\$\{secret:|\$\{secret:([^}]*)\}/g;

/**
 * Resolves a string in which `${secret:NAME}` is a reference and `$${secret:` the literal text
 * `${secret:`, in one pass (so a secret's own text is never read as either): each reference
 * becomes `lookup(NAME)`; without `lookup`, the string is only unescaped and `refs` counts the
 * references found.
 */
export function resolveSecretRefs(
  text: string,
  lookup?: (name: string) => string,
): { value: string; refs: number } {
  if (!text.includes('{secret:')) return { value: text, refs: 0 };
  let refs = 0;
  const value = text.replace(SECRET_TOKEN, (match, name: string | undefined) => {
    if (name === undefined) return '${secret:';
    refs++;
    return lookup ? lookup(name) : match;
  });
  return { value, refs };
}

function suggestVarName(inputId: string): string {
  const upper = inputId.toUpperCase().replace(/[^A-Z0-9_]+/g, '_');
  return NAME.test(upper) ? upper : 'NAME';
}

export interface EnvResolution {
  readonly value: unknown;
  readonly problems: { path: PropertyKey[]; message: string }[];
  /** Paths (as JSON arrays) of strings that took text from the environment: their values must not be echoed in messages. */
  readonly substituted: Set<string>;
}

/** Expands every string in a parsed document; a string that fails keeps its raw text so validation still runs on the rest. */
export function resolveEnvRefs(value: unknown, ctx: EnvContext): EnvResolution {
  const problems: { path: PropertyKey[]; message: string }[] = [];
  const substituted = new Set<string>();
  const walk = (node: unknown, path: PropertyKey[]): unknown => {
    if (typeof node === 'string') {
      // Secrets are resolved only in server entries (see withSecrets).
      const result = interpolate(node, ctx, path[0] === 'servers');
      if (!result.ok) {
        problems.push({ path, message: result.message });
        return node;
      }
      if (result.substituted) substituted.add(JSON.stringify(path));
      return result.value;
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...path, i]));
    if (isPlainObject(node)) {
      // fromEntries rather than assignment: a key named __proto__ stays an ordinary key.
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, [...path, k])]));
    }
    return node;
  };
  return { value: walk(value, []), problems, substituted };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
