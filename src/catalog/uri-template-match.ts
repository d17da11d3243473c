// Whether a concrete URI is one a resource template (RFC 6570, level 1 and the + and # operators)
// describes: what decides which backend a URI read belongs to. Both sides come from outside (the
// template from a backend, the URI from whoever reads), so matching runs in time bounded by their
// lengths' product, never more (a regular expression built from `{+a}{+b}…` backtracks without
// end), and that product is capped: past it a template claims nothing.

/** The most URI characters × template characters compared in one match. */
export const MAX_MATCH_WORK = 4_000_000;

/** One part of a compiled template: a literal character, or an expression's gap. */
type Part = string | { any: boolean };

const compiled = new Map<string, Part[]>();
const MAX_COMPILED = 1_000;

/** The most work one backend's templates get for one URI, all together. */
export const MAX_LIST_WORK = 4 * MAX_MATCH_WORK;

/** True when `uri` is one of the URIs `template` describes (and not too long to tell). */
export function templateMatches(template: string, uri: string): boolean {
  return matchTemplate(template, uri) === 'yes';
}

/**
 * True when one of a backend's `templates` describes `uri`, tried in order within MAX_LIST_WORK:
 * each is bounded, but a backend listing a thousand long ones made every read of a URI no
 * template claims cost seconds, for every host. Past the bound the rest claim nothing.
 */
export function someTemplateMatches(templates: readonly string[], uri: string): boolean {
  let work = 0;
  for (const template of templates) {
    work += (uri.length + 1) * (template.length + 1);
    if (work > MAX_LIST_WORK) return false;
    if (templateMatches(template, uri)) return true;
  }
  return false;
}

/**
 * Whether `uri` is one of the URIs `template` describes, or too long to tell (over MAX_MATCH_WORK):
 * routing takes that as no, a hold as yes.
 */
export function matchTemplate(template: string, uri: string): 'yes' | 'no' | 'too long' {
  if ((uri.length + 1) * (template.length + 1) > MAX_MATCH_WORK) return 'too long';
  const parts = partsOf(template);
  // The positions in `parts` the URI read so far can have reached (a Thompson simulation).
  let now = new Uint8Array(parts.length + 1);
  let next = new Uint8Array(parts.length + 1);
  now[0] = 1;
  closeOver(parts, now);
  for (let k = 0; k < uri.length; k++) {
    const c = uri[k]!;
    next.fill(0);
    let alive = false;
    for (let s = 0; s < parts.length; s++) {
      if (!now[s]) continue;
      const part = parts[s]!;
      if (typeof part === 'string') {
        if (part === c) {
          next[s + 1] = 1;
          alive = true;
        }
      } else if (part.any || (c !== '/' && c !== '?' && c !== '#')) {
        next[s] = 1;
        alive = true;
      }
    }
    if (!alive) return 'no';
    closeOver(parts, next);
    [now, next] = [next, now];
  }
  return now[parts.length] === 1 ? 'yes' : 'no';
}

/** An expression may match nothing: a state at a gap also stands after it. */
function closeOver(parts: Part[], states: Uint8Array): void {
  for (let s = 0; s < parts.length; s++) if (states[s] && typeof parts[s] !== 'string') states[s + 1] = 1;
}

/**
 * The template as parts: each `{…}` a gap (`{+x}` and `{#x}` take any character, `{x}` none of
 * `/?#`), adjacent gaps as one (the wider), each other character itself. Kept for the next match.
 */
function partsOf(template: string): Part[] {
  const known = compiled.get(template);
  if (known) return known;
  const parts: Part[] = [];
  for (let i = 0; i < template.length;) {
    const close = template[i] === '{' ? template.indexOf('}', i) : -1;
    if (close === -1) {
      parts.push(template[i++]!);
      continue;
    }
    const any = template[i + 1] === '+' || template[i + 1] === '#';
    const last = parts.at(-1);
    if (last !== undefined && typeof last !== 'string') last.any ||= any;
    else parts.push({ any });
    i = close + 1;
  }
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(template, parts);
  return parts;
}
