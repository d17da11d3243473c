// `switchboard call TOOL --args JSON`: calls a tool through the running switchboard's pipeline as
// the caller admin:<credential> (policy, approval and audit apply) and prints the result. Exit 0
// on success, 1 on a tool error, a refusal or any other failure: for scripts and smoke tests.
import { AdminClient, AdminClientError, ADMIN_OPTIONS, ADMIN_OPTIONS_USAGE } from './admin-client.js';
import { processIo, parseCommand, type CommandIo } from './io.js';

export const CALL_USAGE = `Usage: switchboard call TOOL [--args JSON] [--json] [options]

Calls TOOL (its exposed name, as in switchboard tools) through the running switchboard, as the
caller admin:token (or admin:<key name> with an admin key). The policy judges it like a host's
call unless a rule names admin callers; the audit records it.

  --args JSON   the arguments, a JSON object (default {})
  --json        print the whole answer ({ caller, result } or { caller, error }) as JSON

Prints the result's text content (or its JSON when it has none). Exit codes: 0 the tool
succeeded; 1 the tool returned an error, the call was refused or failed; 2 wrong command line.

${ADMIN_OPTIONS_USAGE}`;

interface Answer {
  caller: string;
  result?: { content?: { type: string; text?: string }[]; isError?: boolean; structuredContent?: unknown };
  error?: { code: number; message: string; data?: unknown };
}

export async function runCall(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand('call', CALL_USAGE, argv, { ...ADMIN_OPTIONS, args: { type: 'string' } }, io);
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  if (v.help) {
    io.out(CALL_USAGE);
    return 0;
  }
  const [tool, ...extra] = positionals;
  if (!tool || extra.length) {
    io.err(`switchboard call: give one TOOL\n\n${CALL_USAGE}`);
    return 2;
  }
  let args: unknown = {};
  if (v.args !== undefined) {
    try {
      args = JSON.parse(v.args);
    } catch (err) {
      io.err(`switchboard call: --args is not JSON: ${(err as Error).message}`);
      return 2;
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      io.err('switchboard call: --args must be a JSON object');
      return 2;
    }
  }
  let answer: Answer;
  try {
    answer = (await AdminClient.find(v).post('/api/v1/call', { tool, arguments: args })) as Answer;
  } catch (err) {
    if (!(err instanceof AdminClientError)) throw err;
    io.err(`switchboard call: ${err.message}`);
    return 1;
  }
  if (v.json) io.out(JSON.stringify(answer, null, 2));
  if (answer.error) {
    if (!v.json) io.err(`switchboard call: ${tool} failed: ${answer.error.message} (${answer.error.code})`);
    return 1;
  }
  const result = answer.result ?? {};
  if (!v.json) {
    const texts = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text ?? '');
    const printed = texts.length
      ? texts.join('\n')
      : JSON.stringify(result.structuredContent ?? result, null, 2);
    (result.isError ? io.err : io.out)(printed);
  }
  return result.isError ? 1 : 0;
}
