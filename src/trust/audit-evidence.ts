// What `audit verify` holds the chain against: the signed checkpoints in the database and in the
// file beside it, each checked against the key in trust-keys.json. Any that is missing where it
// must exist, unreadable or not signed by that key is itself a failure, never a silent pass.
import {
  checkpointFilePath,
  checkpointSigned,
  readCheckpointFile,
  readCheckpointTable,
  type Checkpoint,
} from './audit-checkpoints.js';
import type { TrustDb } from './trust-db.js';
import { readTrustKeys, trustKeysPath } from './trust-keys.js';
import { prunePointSigned, readPrunePoint, type PrunePoint } from './audit-retention.js';

export type Evidence =
  | {
      ok: true;
      checkpoints: Checkpoint[];
      latest: Checkpoint | undefined;
      signer: string | undefined;
      /** Where retention left the chain's start, its signature checked. */
      pruned: PrunePoint | undefined;
    }
  | { ok: false; problem: string };

/** The checkpoints of the file at `dbPath` (its database `db`, when it still exists), all verified. */
export function checkpointEvidence(dbPath: string, db: TrustDb | undefined): Evidence {
  let keys;
  try {
    keys = readTrustKeys(dbPath);
  } catch (err) {
    return {
      ok: false,
      problem: `the key file ${trustKeysPath(dbPath)} is unreadable: ${(err as Error).message}`,
    };
  }
  const file = readCheckpointFile(dbPath);
  if (file === 'unreadable')
    return {
      ok: false,
      problem: `the checkpoint file ${checkpointFilePath(dbPath)} is not a checkpoint (altered)`,
    };
  const table = db ? readCheckpointTable(db) : [];
  const all = file ? [...table, file] : table;
  const pruned = db ? readPrunePoint(db) : undefined;
  if (!keys) {
    if (pruned)
      return {
        ok: false,
        problem: `records were pruned but the key file ${trustKeysPath(dbPath)} is gone: where the chain starts cannot be checked`,
      };
    if (all.length)
      return {
        ok: false,
        problem: `signed checkpoints exist but the key file ${trustKeysPath(dbPath)} is gone: they cannot be checked`,
      };
    return { ok: true, checkpoints: [], latest: undefined, signer: undefined, pruned: undefined };
  }
  const forged = all.find((c) => !checkpointSigned(c, keys));
  if (forged)
    return {
      ok: false,
      problem: `checkpoint #${forged.seq} is not signed by this switchboard's key ${keys.keyId} (forged or altered)`,
    };
  if (pruned && !prunePointSigned(pruned, keys))
    return {
      ok: false,
      problem: `the prune point (records through #${pruned.seq}) is not signed by this switchboard's key ${keys.keyId} (forged or altered)`,
    };
  if (table.length && !file)
    return { ok: false, problem: `the checkpoint file ${checkpointFilePath(dbPath)} is missing (deleted)` };
  if (!all.length && !pruned && db && hasRecords(db))
    return {
      ok: false,
      problem: 'the chain has records but no signed checkpoint exists (the checkpoints were deleted)',
    };
  const latest = all.reduce<Checkpoint | undefined>((a, c) => (a && a.seq >= c.seq ? a : c), undefined);
  return { ok: true, checkpoints: all, latest, signer: keys.keyId, pruned };
}

function hasRecords(db: TrustDb): boolean {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").get();
  return table !== undefined && db.prepare('SELECT 1 FROM audit LIMIT 1').get() !== undefined;
}
