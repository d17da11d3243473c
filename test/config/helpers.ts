// Shared helpers of the configuration tests: parse and expect failure, find an issue by path.
import assert from 'node:assert/strict';
import { ConfigError, type ConfigIssue } from '../../src/config/errors.js';
import { parseConfig, type LoadOptions } from '../../src/config/load.js';

/** Parses text that must be rejected, and returns the error. */
export function rejects(text: string, file: string, options: LoadOptions = { env: {} }): ConfigError {
  try {
    parseConfig(text, file, options);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected ${file} to be rejected`);
}

/** The one issue at `path`; fails listing every issue when there is not exactly one. */
export function issueAt(err: ConfigError, path: string): ConfigIssue {
  const found = err.issues.filter((i) => i.path === path);
  assert.equal(found.length, 1, `expected one issue at ${path}, got:\n${err.message}`);
  return found[0] as ConfigIssue;
}

/** The named fields of a value: tests compare these so a field another feature adds does not break them. */
export function pick(value: unknown, keys: readonly string[]): Record<string, unknown> {
  assert.ok(value !== null && typeof value === 'object', `expected an object, got ${String(value)}`);
  return Object.fromEntries(
    keys.filter((k) => k in value).map((k) => [k, (value as Record<string, unknown>)[k]]),
  );
}

export const STDIO_FIELDS = [
  'type',
  'command',
  'args',
  'cwd',
  'env',
  'disabled',
  'priority',
  'prefix',
] as const;
export const REMOTE_FIELDS = ['type', 'url', 'headers', 'disabled', 'priority', 'prefix'] as const;
