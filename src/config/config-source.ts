// A configuration file's text as data: YAML, or JSON (with comments and trailing commas, as VS Code
// writes it), with the tree kept to say which line a path is on.
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { ConfigError, parserSentence, type ConfigIssue } from './errors.js';

export interface Source {
  readonly data: unknown;
  /** The YAML tree, kept only to turn paths into line numbers. */
  readonly doc: Document | undefined;
  readonly lines: LineCounter;
  readonly warnings: ConfigIssue[];
}

export function parseSource(text: string, file: string): Source {
  const json = /\.jsonc?$/i.test(file) || (!/\.ya?ml$/i.test(file) && text.trimStart().startsWith('{'));
  return json ? parseJson(text, file) : parseYaml(text, file);
}

function parseYaml(text: string, file: string): Source {
  const lines = new LineCounter();
  // merge: YAML users share env blocks between servers with anchors and `<<:`.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, merge: true, uniqueKeys: true });
  const position = (pos: readonly [number, number]): { line: number; column: number } => {
    const { line, col } = lines.linePos(pos[0]);
    return { line, column: col };
  };
  if (doc.errors.length > 0) {
    throw new ConfigError(
      'config_invalid',
      doc.errors.map((e) => ({
        file,
        path: '',
        ...position(e.pos),
        message: `invalid YAML: ${parserSentence(e.message)}`,
      })),
    );
  }
  const warnings = doc.warnings.map((w) => ({
    file,
    path: '',
    ...position(w.pos),
    message: parserSentence(w.message),
  }));
  try {
    return { data: doc.toJS({ maxAliasCount: 100 }), doc, lines, warnings };
  } catch (err) {
    // Aliases expanding beyond the limit (a "billion laughs" document) end here.
    throw new ConfigError('config_invalid', [
      { file, path: '', message: `invalid YAML: ${(err as Error).message}` },
    ]);
  }
}

function parseJson(text: string, file: string): Source {
  // VS Code's mcp.json is JSON with comments and trailing commas; blanking them keeps every offset where it was.
  const plain = blankJsonComments(text);
  let data: unknown;
  try {
    data = JSON.parse(plain);
  } catch (err) {
    const message = (err as Error).message;
    const offset = Number(/at position (\d+)/.exec(message)?.[1] ?? plain.length);
    const { line, column } = lineAndColumn(plain, offset);
    const reason = message
      .replace(/ in JSON at position \d+.*$/s, '')
      .replace(/ \(line \d+ column \d+\)$/, '');
    throw new ConfigError('config_invalid', [
      { file, path: '', line, column, message: `invalid JSON: ${parserSentence(reason)}` },
    ]);
  }
  // JSON is YAML, so the YAML parser can still say which line each value is on.
  const lines = new LineCounter();
  const doc = parseDocument(plain, { lineCounter: lines, uniqueKeys: true });
  // JSON.parse keeps the last of two equal keys without a word; a server named twice is a mistake
  // to show, as it is in YAML.
  const duplicates = doc.errors.filter((e) => e.code === 'DUPLICATE_KEY');
  if (duplicates.length > 0)
    throw new ConfigError(
      'config_invalid',
      duplicates.map((e) => {
        const { line, col } = lines.linePos(e.pos[0]);
        const key = /^"(?:[^"\\]|\\.)*"/.exec(plain.slice(e.pos[0]))?.[0] ?? 'here';
        return { file, path: '', line, column: col, message: `invalid JSON: the key ${key} is given twice` };
      }),
    );
  return { data, doc: doc.errors.length === 0 ? doc : undefined, lines, warnings: [] };
}

function blankJsonComments(text: string): string {
  const out = text.split('');
  const blank = (from: number, to: number): void => {
    for (let k = from; k < to; k++) if (out[k] !== '\n' && out[k] !== '\r') out[k] = ' ';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      blank(i, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else {
      i++;
    }
  }
  // Trailing commas: a comma outside strings whose next non-blank character closes the collection.
  let inString = false;
  for (let k = 0; k < out.length; k++) {
    const c = out[k];
    if (inString) {
      if (c === '\\') k++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === ',') {
      let n = k + 1;
      while (n < out.length && /\s/.test(out[n] ?? '')) n++;
      if (out[n] === '}' || out[n] === ']') out[k] = ' ';
    }
  }
  return out.join('');
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** Where a path of the file sits; the nearest existing ancestor when the path itself is missing. */
export function positionOf(source: Source, path: readonly PropertyKey[]): { line?: number } {
  let node: unknown = source.doc?.contents;
  let offset: number | undefined;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (pair === undefined) break;
      offset = isScalar(pair.key) ? pair.key.range?.[0] : offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      offset = (node as { range?: [number, number, number] } | undefined)?.range?.[0] ?? offset;
    } else {
      break;
    }
  }
  return offset === undefined ? {} : { line: source.lines.linePos(offset).line };
}
