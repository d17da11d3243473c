// `switchboard tools`: the catalog as a host sees it (exposed name, server, title), with what the
// trust layer knows of each tool (pinned, held and why, scanner findings), from the admin API.
import { ADMIN_OPTIONS_USAGE } from './admin-client.js';
import { runAdminView, table } from './admin-view-command.js';
import type { toolsView } from '../admin/admin-views.js';
import { processIo, type CommandIo } from './io.js';

export const TOOLS_USAGE = `Usage: switchboard tools [--json] [options]

Lists the tools of the running switchboard's catalog: the exposed name a host calls, the server
that owns it, its title, its pin state (pinned, held:<why>, unpinned, off) and scanner findings,
then the definitions held for review.

  --json    the admin API's answer as it is (GET /api/v1/tools)

${ADMIN_OPTIONS_USAGE}`;

type Tools = ReturnType<typeof toolsView>;

export async function runTools(argv: string[], io: CommandIo = processIo): Promise<number> {
  return runAdminView<Tools>('tools', TOOLS_USAGE, '/api/v1/tools', argv, io, (tools) => {
    io.out(
      table(
        ['TOOL', 'SERVER', 'PIN', 'FLAGS', 'TITLE'],
        tools.tools.map((t) => [
          t.name,
          t.backend ?? '',
          t.pin,
          t.flags.map((f) => f.kind).join(',') || '-',
          t.title ?? '',
        ]),
      ),
    );
    for (const h of tools.held)
      io.out(
        `held: ${h.backend}/${h.name} (${h.reason})${h.flags.length ? `: ${h.flags.map((f) => f.reason).join('; ')}` : ''}` +
          ` — review with switchboard pins diff ${h.backend} ${h.name}`,
      );
  });
}
