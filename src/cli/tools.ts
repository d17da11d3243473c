// `switchboard tools`: the catalog as a host sees it (exposed name, server, title), with what the
// trust layer knows of each tool (pinned, held and why, scanner findings), from the admin API.
import { ADMIN_OPTIONS_USAGE } from './admin-client.js';
import { runAdminView, table } from './admin-view-command.js';
import type { toolsView } from '../admin/admin-views.js';
import { processIo, type CommandIo } from './io.js';

export const TOOLS_USAGE = `Usage: switchboard tools [--json] [options]

Lists the tools of the running switchboard's catalog: the exposed name a host calls, the server
that owns it, what the policy lets you (admin:<credential>) do with it (allow, approve, deny, or
by-arguments where a rule's conditions decide at the call), its pin state (pinned, held:<why>,
unpinned, off), scanner findings and title, then the definitions held for review.

  --json    the admin API's answer as it is (GET /api/v1/tools)

${ADMIN_OPTIONS_USAGE}`;

type Tools = ReturnType<typeof toolsView>;

export async function runTools(argv: string[], io: CommandIo = processIo): Promise<number> {
  return runAdminView<Tools>('tools', TOOLS_USAGE, '/api/v1/tools', argv, io, (tools) => {
    io.out(
      table(
        ['TOOL', 'SERVER', 'YOU', 'PIN', 'FLAGS', 'TITLE'],
        tools.tools.map((t) => [
          t.name,
          t.backend ?? '',
          t.call,
          t.pin,
          t.flags.map((f) => f.kind).join(',') || '-',
          t.title ?? '',
        ]),
      ),
    );
    const refused = tools.tools.filter((t) => t.call === 'deny').length;
    if (refused > 0)
      io.out(
        `${refused} tool${refused === 1 ? ' is' : 's are'} refused to ${tools.caller} by policy` +
          ' (switchboard call answers them as unknown; switchboard policy test explains why)',
      );
    for (const h of tools.held)
      io.out(
        `held: ${h.backend}/${h.name} (${h.reason})${h.flags.length ? `: ${h.flags.map((f) => f.reason).join('; ')}` : ''}` +
          ` — review with switchboard pins diff ${h.backend} ${h.name}`,
      );
  });
}
