// The dashboard's page, style sheet and script, served from the package itself (nothing fetched
// at run time): the page and the style sheet are strings here, the script is the compiled modules
// of dashboard/ beside this module (/dashboard/<name>.js, entered by /dashboard.js). Served under a
// Content-Security-Policy of 'self' only.
import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';

/** Only this listener's own files: no inline script or style, no other origin, no framing. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const VIEWS: [id: string, title: string][] = [
  ['topology', 'Topology'],
  ['backends', 'Backends'],
  ['catalog', 'Catalog'],
  ['calls', 'Live calls'],
  ['approvals', 'Approvals'],
  ['audit', 'Audit'],
  ['workflows', 'Workflows'],
];

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>switchboard</title>
<link rel="stylesheet" href="/dashboard.css">
<script type="module" src="/dashboard.js"></script>
</head>
<body>
<header>
<h1>switchboard</h1>
<span id="summary" class="muted">loading…</span>
<nav>${VIEWS.map(([id, title]) => `<a href="#${id}" data-view="${id}">${title}${id === 'approvals' ? ' <span id="approvals-badge" class="badge" hidden></span>' : ''}</a>`).join('')}</nav>
</header>
<main>
<noscript><p>The dashboard needs JavaScript (its own script, served by this listener). The JSON API under /api/v1 works without it.</p></noscript>
${VIEWS.map(([id, title]) => `<section id="view-${id}" hidden><h2>${title}</h2><div class="body" id="${id}-body"></div></section>`).join('\n')}
</main>
</body>
</html>
`;

const CSS = `:root { color-scheme: light dark; --fg: #1d2330; --muted: #667085; --bg: #f6f7f9; --card: #fff;
  --line: #d9dde3; --accent: #2457c5; --ok: #18794e; --bad: #c0362c; --warn: #a15c00; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --muted: #98a2b3; --bg: #111418; --card: #1a1f26;
  --line: #2c333d; --accent: #7aa2ff; --ok: #4cc38a; --bad: #ff6b61; --warn: #f5a524; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.5rem 1.5rem; padding: 0.75rem 1.25rem;
  background: var(--card); border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.15rem; margin: 0; }
nav { display: flex; flex-wrap: wrap; gap: 0.25rem; margin-left: auto; }
nav a { padding: 0.3rem 0.7rem; border-radius: 6px; color: var(--fg); text-decoration: none; }
nav a.active { background: var(--accent); color: #fff; }
main { padding: 1rem 1.25rem; }
section h2 { font-size: 1.05rem; margin: 0 0 0.75rem; }
h3 { font-size: 0.95rem; margin: 1.25rem 0 0.5rem; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); }
th, td { text-align: left; padding: 0.35rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 0.85rem; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; }
pre { background: var(--card); border: 1px solid var(--line); padding: 0.6rem; overflow: auto; margin: 0.25rem 0; }
.muted { color: var(--muted); }
.ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
.badge[hidden] { display: none; }
.badge { display: inline-block; min-width: 1.3em; padding: 0 0.35em; border-radius: 9px; background: var(--bad);
  color: #fff; font-size: 0.75rem; text-align: center; }
.pill { display: inline-block; padding: 0 0.45em; border-radius: 4px; border: 1px solid var(--line); font-size: 0.8rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 0.75rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 0.75rem; min-width: 0; }
.card th, .card td { padding: 0.3rem 0.4rem; }
.card th { white-space: nowrap; }
.card .bad, .card pre { overflow-wrap: anywhere; white-space: pre-wrap; }
.card h4 { margin: 0 0 0.35rem; font-size: 0.95rem; }
button { font: inherit; padding: 0.25rem 0.75rem; border-radius: 6px; border: 1px solid var(--line);
  background: var(--card); color: var(--fg); cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { border-color: var(--bad); color: var(--bad); }
form.filters { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: end; margin-bottom: 0.75rem; }
form.filters label { display: flex; flex-direction: column; font-size: 0.8rem; color: var(--muted); }
input, select { font: inherit; padding: 0.2rem 0.4rem; border: 1px solid var(--line); border-radius: 5px;
  background: var(--card); color: var(--fg); }
.diff .add { color: var(--ok); } .diff .del { color: var(--bad); }
svg.topology { width: 100%; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
svg.topology text { fill: var(--fg); font-size: 12px; }
svg.topology .node rect { fill: var(--bg); stroke: var(--line); }
svg.topology .node.down rect { stroke: var(--bad); }
svg.topology .node.up rect { stroke: var(--ok); }
svg.topology path { fill: none; stroke: var(--muted); }
svg.topology path.bridge { stroke: var(--accent); stroke-dasharray: 5 3; }
svg.topology .rate { fill: var(--muted); font-size: 11px; paint-order: stroke; stroke: var(--card); stroke-width: 4px; }
.row { display: flex; gap: 0.5rem; align-items: center; margin: 0.5rem 0; }
`;

const MODULES_DIR = new URL('./dashboard/', import.meta.url);
let modules: Map<string, string> | undefined;

/** The compiled dashboard modules by name (`app.js`, `page.js`, …), without source-map comments. */
function dashboardModules(): Map<string, string> {
  modules ??= new Map(
    readdirSync(MODULES_DIR)
      .filter((f) => /^[a-z-]+\.js$/.test(f))
      .map((f) => [
        f,
        readFileSync(new URL(f, MODULES_DIR), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'),
      ]),
  );
  return modules;
}

/** The page's script: the entry module, whose imports are its siblings under /dashboard/. */
const ENTRY = "import '/dashboard/app.js';\n";

const TYPES = {
  '/': ['text/html; charset=utf-8', () => PAGE],
  '/dashboard.css': ['text/css; charset=utf-8', () => CSS],
  '/dashboard.js': ['text/javascript; charset=utf-8', () => ENTRY],
} as const satisfies Record<string, readonly [string, () => string]>;

const MODULE_PATH = /^\/dashboard\/([a-z-]+\.js)$/;

/** Whether `path` is one of the dashboard's files: the page, the style sheet or a script module. */
export function isDashboardAsset(path: string): boolean {
  if (Object.hasOwn(TYPES, path)) return true;
  const name = MODULE_PATH.exec(path)?.[1];
  return name !== undefined && dashboardModules().has(name);
}

export function serveDashboardAsset(res: ServerResponse, path: string, head: boolean): void {
  const name = MODULE_PATH.exec(path)?.[1];
  const [type, text] =
    name === undefined
      ? [TYPES[path as keyof typeof TYPES][0], TYPES[path as keyof typeof TYPES][1]()]
      : ['text/javascript; charset=utf-8', dashboardModules().get(name)!];
  res.writeHead(200, {
    'content-type': type,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  });
  res.end(head ? undefined : text);
}
