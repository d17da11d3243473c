// Names across backends: a tool named to pass for another backend's tool, and a definition that
// points the model at another backend's tool. Two servers that both serve `read_file` are common and
// harmless on their own, so a shared name is a weak signal; a look-alike name is a strong one.
import { CONFUSABLE, isInvisible } from './normalise.js';

const SEPARATORS = /[-_.\s]/g;

/** A name in any naming convention: lowercase, separators and invisible characters dropped. */
export function nameFold(name: string): string {
  return [...name.normalize('NFKC').toLowerCase()]
    .filter((c) => !isInvisible(c))
    .join('')
    .replace(SEPARATORS, '');
}

/** A name reduced to what a reader sees: folded, look-alike letters and digits mapped to the letters they imitate. */
export function nameSkeleton(name: string): string {
  return [...nameFold(name)]
    .map((c) => CONFUSABLE[c] ?? DIGIT_LOOKALIKE[c] ?? c)
    .join('')
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w');
}

const DIGIT_LOOKALIKE: Readonly<Record<string, string>> = { '0': 'o', '1': 'l', '3': 'e', '5': 's' };

export interface NameFinding {
  rule: 'look-alike-name' | 'non-ascii-name' | 'same-name' | 'names-other-tool';
  kind: string;
  weight: number;
  reason: string;
}

/**
 * What the name and the texts say about other backends' tools. `texts` are normalised. A tool is
 * taken as referred to only in the forms a reference takes (quoted, called, "the X tool", "when X
 * is …"), never because a word happens to match.
 */
export function nameFindings(
  name: string,
  texts: readonly string[],
  others: ReadonlyMap<string, readonly string[]>,
): NameFinding[] {
  const found: NameFinding[] = [];
  if (/[^\x20-\x7E]/.test(name))
    found.push({
      rule: 'non-ascii-name',
      kind: 'confusable-name',
      weight: 10,
      reason: `the name "${name}" has characters outside printable ASCII`,
    });
  const fold = nameFold(name);
  const skeleton = nameSkeleton(name);
  for (const [backend, tools] of others) {
    for (const other of tools) {
      if (nameFold(other) === fold)
        found.push({
          rule: 'same-name',
          kind: 'shadowing',
          weight: 3,
          reason: `"${name}" is also a tool of ${backend}`,
        });
      else if (nameSkeleton(other) === skeleton)
        found.push({
          rule: 'look-alike-name',
          kind: 'confusable-name',
          weight: 10,
          reason: `"${name}" looks like ${backend}'s tool "${other}"`,
        });
      else if (refersTo(texts, other))
        found.push({
          rule: 'names-other-tool',
          kind: 'other-tool',
          weight: 6,
          reason: `the definition refers to ${backend}'s tool "${other}"`,
        });
    }
  }
  return found;
}

function refersTo(texts: readonly string[], tool: string): boolean {
  const t = tool.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // A plain word ("query", "search") is how descriptions talk, not a reference to a tool.
  if (t.length < 4 || !/[-_.\d]|[a-z][A-Z]/.test(tool)) return false;
  const forms = new RegExp(
    String.raw`[\x60'"]${t}[\x60'"]|(?:^|[^\w])${t}\(|\bthe ${t} (?:tool|function)\b|(?:^|[^\w])${t} (?:tool|function)\b|\b(?:call|calls|calling|invoke|use|using|run) (?:the )?${t}\b|\)\s*${t}\b|\bwhen ${t} (?:is|are)\b`,
  );
  return texts.some((text) => forms.test(text));
}
