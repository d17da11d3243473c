// The `audit` section: the hash-chained record of every call, its signed checkpoints and retention.
import { z } from 'zod';
import { LONGEST_TIMER_SECONDS } from './durations.js';

export const AuditSection = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe('Write one hash-chained record per call (host or bridge, allowed or refused).'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe(
        'SQLite file of the audit chain and the tool pins (default: $XDG_STATE_HOME/switchboard/audit.sqlite, else ~/.local/state/switchboard/audit.sqlite).',
      ),
    values: z
      .boolean()
      .default(false)
      .describe('Also store the canonical arguments of each call, not only their SHA-256.'),
    onFailure: z
      .enum(['deny', 'allow'])
      .default('deny')
      .describe(
        "A call that cannot be recorded: its arguments nested too deep or not encodable, or the trail's writes failing (a full disk) since the last batch. deny refuses it before it reaches its target (and, while writes fail, /readyz answers 503); allow lets it go on, with a record whose args_sha256 says unrecordable:<reason>, or none while writes fail (a call nested past 512 levels is still refused, by the protocol stage).",
      ),
    checkpoint: z
      .object({
        everyRecords: z
          .number()
          .int()
          .min(1)
          .default(1000)
          .describe(
            'Sign a checkpoint of the chain head once this many records were written since the last one.',
          ),
        everySeconds: z
          .number()
          .min(1)
          .max(LONGEST_TIMER_SECONDS)
          .default(60)
          .describe(
            'Sign a checkpoint of the chain head this long after the first record it does not cover.',
          ),
      })
      .strict()
      .prefault({})
      .describe(
        'Signed checkpoints (Ed25519) of the chain head, kept in the database and in <audit.path>.checkpoint; also signed at clean shutdown.',
      ),
    retention: z
      .object({
        days: z
          .number()
          .positive()
          .optional()
          .describe('Delete records older than this many days (fractions allowed).'),
        records: z.number().int().min(1).optional().describe('Keep at most this many of the latest records.'),
      })
      .strict()
      .prefault({})
      .describe(
        'Pruning of the oldest records, by age and/or count (either limit prunes). Each prune signs where the chain now starts, so audit verify still proves the rest; unset keeps every record.',
      ),
  })
  .strict()
  .prefault({});
