// Renders docs/errors.md from the error catalogue, so the documented codes are the ones sent.
// Run as a script (`npm run docs:errors`) it rewrites docs/errors.md; a test fails when they differ.
import { realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GROUPS, LOCAL_ERRORS, PROTOCOL_ERRORS, type CatalogueEntry, type LocalEntry } from './catalogue.js';

const INTRO = `# Errors

<!-- Generated from src/errors/catalogue.ts by \`npm run docs:errors\`: edit the catalogue, not this file. -->

Every error a caller can get from switchboard is in the tables below. A host sees them as JSON-RPC
errors; a backend calling over the bridge sees the same ones.

- **Protocol errors** (JSON-RPC, MCP, bridge and policy) are sent with their own message, which
  says what was wrong.
- **Switchboard's own failures** carry a stable name in \`data.reason\`, and \`data.backend\` when
  a backend is involved. Several share a wire code: -32001 is a backend that is unavailable
  (\`backend_unavailable\`, \`backend_closed\`, \`backend_start_failed\`) or that timed out
  (\`timeout\`) — the MCP SDKs read -32001 as a request timeout — so read \`data.reason\` to tell
  them apart.
- **A backend's own errors** reach the caller as the backend sent them (redacted), with one
  exception: a backend that answers a forwarded call with -32700 or -32600 says the request it got
  was malformed, and that request was switchboard's, so the caller gets -32603 with
  \`data: { reason: 'backend_protocol_error', backend, error }\` (\`error\` is the backend's answer).
- **HTTP status**: where the status carries the error, that is on the modern (2026-07-28) wire and
  when the HTTP transport refuses a request, the status is the one in the table; a blank means 200
  with the error in the body. Legacy (2025-11-25) answers inside a session are always 200 (or on
  the SSE stream).
- **Exposed**: whether the caller gets the error's own message. When it does not, it gets
  \`Internal error\` and \`data.reason\`, and the details go to switchboard's log.
- **Whose doing**: whose request, limit or failure it is, and so who can act on it: the caller
  (its request, its rate, its rights), a backend, or switchboard itself.
`;

/** The exact text committed as docs/errors.md. */
export function renderErrorsDoc(): string {
  const sections = Object.entries(GROUPS).flatMap(([group, title]) => {
    const protocol = Object.entries(PROTOCOL_ERRORS).filter(([, e]) => e.group === group);
    const local = Object.entries(LOCAL_ERRORS).filter(([, e]) => e.group === group);
    const parts: string[] = [];
    if (protocol.length > 0) {
      parts.push(
        table(
          'name',
          protocol.map(([name, e]) => row(e, `\`${name}\``, 'yes')),
        ),
      );
    }
    if (local.length > 0) {
      parts.push(
        table(
          '`data.reason`',
          local.map(([reason, e]: [string, LocalEntry]) => row(e, `\`${reason}\``, e.expose ? 'yes' : 'no')),
        ),
      );
    }
    return parts.length === 0 ? [] : [`## ${title}\n\n${parts.join('\n')}`];
  });
  return `${INTRO}\n${sections.join('\n')}`;
}

function row(e: CatalogueEntry, name: string, exposed: string): string[] {
  return [String(e.code), name, e.http === undefined ? '' : String(e.http), exposed, e.fault, e.description];
}

/** A markdown table laid out as prettier lays it out, so `prettier --check` passes on the file. */
function table(nameHeader: string, rows: string[][]): string {
  const all = [['code', nameHeader, 'HTTP', 'exposed', 'whose doing', 'meaning'], ...rows];
  const widths = all[0]!.map((_, i) => Math.max(3, ...all.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const [head, ...body] = all;
  return [line(head!), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n') + '\n';
}

const entry = process.argv[1];
if (entry !== undefined && realpathSync(entry) === fileURLToPath(import.meta.url)) {
  // dist/src/ → the repository's docs/.
  writeFileSync(new URL('../../../docs/errors.md', import.meta.url), renderErrorsDoc());
}
