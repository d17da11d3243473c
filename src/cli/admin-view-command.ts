// The shape `switchboard status` and `switchboard tools` share: read one view of the admin API,
// print it as it is with --json, else as text for a person; plus the column layout they print.
import { AdminClient, AdminClientError, ADMIN_OPTIONS } from './admin-client.js';
import { parseCommand, type CommandIo } from './io.js';

export async function runAdminView<View>(
  name: string,
  usage: string,
  apiPath: string,
  argv: string[],
  io: CommandIo,
  render: (view: View) => void,
): Promise<number> {
  const parsed = parseCommand(name, usage, argv, ADMIN_OPTIONS, io);
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  if (v.help) {
    io.out(usage);
    return 0;
  }
  if (positionals.length) {
    io.err(`switchboard ${name}: unexpected argument "${positionals[0]}"\n\n${usage}`);
    return 2;
  }
  let view: View;
  try {
    view = (await AdminClient.find(v).get(apiPath)) as View;
  } catch (err) {
    if (!(err instanceof AdminClientError)) throw err;
    io.err(`switchboard ${name}: ${err.message}`);
    return 1;
  }
  if (v.json) io.out(JSON.stringify(view, null, 2));
  else render(view);
  return 0;
}

/** Left-aligned columns two spaces apart, the last one unpadded. */
export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}
