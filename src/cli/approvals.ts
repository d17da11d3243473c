// `switchboard approvals list|approve|deny`: the operator's side of human approval. A call a rule
// marked `approve` whose host cannot be asked waits in the trust database; the switchboard
// running it notices the verdict within policy.approval.pollMs.
import { userInfo } from 'node:os';
import { ApprovalStore, type ApprovalRecord, type VerdictRefusal } from '../trust/approval-store.js';
import { readTrustKeys } from '../trust/trust-keys.js';
import { processIo, type CommandIo, parseCommand } from './io.js';
import { DB_OPTIONS, openForCommand } from './trust-db-path.js';

export const APPROVALS_USAGE = `Usage: switchboard approvals <list|approve|deny> [id] [options]

  list            Calls waiting for approval: id, caller, target, arguments, rule, time left
  approve <id>    Let that one call go on (once; only with the arguments shown)
  deny <id>       Refuse it (the caller gets an error naming the rule)

Options: --db FILE (default: audit.path of --config FILE, else $XDG_STATE_HOME/switchboard/audit.sqlite,
         ~/.local/state/switchboard/audit.sqlite without it),
         --json (list as one JSON object per approval)`;

const REFUSED: Record<VerdictRefusal, string> = {
  unknown: 'no such approval',
  expired: 'it expired; the call has failed',
  tampered:
    'its record no longer matches the call it was made for (edited, or not written by switchboard); refusing to decide it',
  approved: 'it was already approved',
  denied: 'it was already denied',
  used: 'it was already used: an approval lets one call through, once',
  withdrawn: 'the call was cancelled meanwhile',
};

export async function runApprovals(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand(
    'approvals',
    APPROVALS_USAGE,
    argv,
    { ...DB_OPTIONS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    io,
  );
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  const [sub, id] = positionals;
  const decides = sub === 'approve' || sub === 'deny';
  if (v.help || !(sub === 'list' || decides) || (decides && !id)) {
    (v.help ? io.out : io.err)(APPROVALS_USAGE);
    return v.help ? 0 : 2;
  }
  const opened = await openForCommand(v);
  if (typeof opened === 'string') {
    io.err(`switchboard approvals: ${opened}`);
    return 1;
  }
  const { db, path } = opened;
  try {
    // The operator runs as switchboard's user and can read the key; a backend that cannot, cannot decide.
    const keys = readTrustKeys(path);
    const store = new ApprovalStore(db, { keys });
    if (sub === 'list') {
      const pending = store.pending();
      if (pending.length === 0 && !v.json) io.out('no calls are waiting for approval');
      for (const a of pending) {
        const genuine = store.genuine(a);
        io.out(v.json ? JSON.stringify({ ...a, genuine }) : describe(a, genuine));
      }
      return 0;
    }
    if (!keys) {
      io.err(`switchboard approvals: no key file beside ${path} (trust-keys.json): nothing to decide with`);
      return 1;
    }
    const verdict = store.decide(id!, sub === 'approve' ? 'approved' : 'denied', operatorName());
    if (typeof verdict === 'string') {
      io.err(`switchboard approvals: cannot ${sub} ${id}: ${REFUSED[verdict]}`);
      return 1;
    }
    io.out(
      `${verdict.id}: ${sub === 'approve' ? 'approved' : 'denied'} (${verdict.caller} -> ${verdict.exposed})`,
    );
    return 0;
  } finally {
    db.close();
  }
}

function describe(a: ApprovalRecord, genuine: boolean): string {
  const left = Math.max(0, Math.round((a.expiresAt - Date.now()) / 1000));
  const owner = a.backend ? ` (${a.target} of ${a.backend})` : '';
  const forged = genuine ? '' : '  NOT WRITTEN BY SWITCHBOARD (its MAC does not verify): cannot be decided';
  return `${a.id}  ${a.caller} -> ${a.method} ${a.exposed}${owner}  rule ${a.rule}  ${left}s left${forged}\n    arguments (redacted): ${a.args}\n    sha256: ${a.binding}`;
}

function operatorName(): string {
  try {
    return `operator:${userInfo().username}`;
  } catch {
    return 'operator';
  }
}
