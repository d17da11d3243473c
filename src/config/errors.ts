// The error a configuration that cannot be used raises: every problem at once, each naming the file, the path in it and what was expected.

/** One problem (or, in a warnings list, one thing ignored) in a configuration source. */
export interface ConfigIssue {
  /** The file as the caller named it, or the label of a non-file source such as command-line overrides. */
  readonly file: string;
  /** Dotted path inside the file (`servers.memory.args[0]`); empty when the problem is the file itself. */
  readonly path: string;
  /** What was expected, and what was found. */
  readonly message: string;
  /** 1-based line in the file, when known. */
  readonly line?: number;
  /** 1-based column, given only for syntax errors (which have no path). */
  readonly column?: number;
}

/** `servers.memory.args[0]`; names that are not plain words are quoted: `servers["my.server"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment))
      out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/** Renders an issue as `<file>: <path>: <message>`, with the line when it is known. */
export function formatIssue(issue: ConfigIssue): string {
  if (issue.column !== undefined) {
    // Only syntax errors have a column: they have no path yet, and the position is the only address there is.
    return `${issue.file}: line ${issue.line ?? 1}, column ${issue.column}: ${issue.message}`;
  }
  const where = issue.path === '' ? issue.file : `${issue.file}: ${issue.path}`;
  const line = issue.line === undefined ? '' : ` (line ${issue.line})`;
  return `${where}: ${issue.message}${line}`;
}

export type ConfigErrorCode = 'config_not_found' | 'config_unreadable' | 'config_invalid';

export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];

  constructor(
    readonly code: ConfigErrorCode,
    issues: readonly ConfigIssue[],
    options?: { cause?: unknown },
  ) {
    super(issues.map(formatIssue).join('\n'), options);
    this.name = 'ConfigError';
    this.issues = Object.freeze([...issues]);
  }
}

/** A YAML or JSON parser's message as one clause of ours: its first line, without its position. */
export function parserSentence(message: string): string {
  const first =
    message
      .split('\n')[0]
      ?.replace(/ at line \d+, column \d+:?$/, '')
      .replace(/\.$/, '') ?? '';
  return first.charAt(0).toLowerCase() + first.slice(1);
}

/** Said of a configuration file with nothing in it (or only comments). */
export const EMPTY_CONFIG =
  'the file is empty (or only comments): expected a configuration such as servers: { … } (servers: {} for none)';
