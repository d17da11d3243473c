// The log options every long-running command shares: --log-level and --log-format, each with an
// environment variable (the flag wins), checked before anything starts.
import {
  LOG_FORMATS,
  LOG_LEVELS,
  isLogFormat,
  isLogLevel,
  type LogFormat,
  type LogLevelName,
} from '../log.js';

export const LOG_OPTIONS = {
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
} as const;

export const LOG_OPTIONS_HELP = `  --log-level L      ${LOG_LEVELS.join(', ')} (default: SWITCHBOARD_LOG_LEVEL, else log.level, else info)
  --log-format F     pretty or json (default: SWITCHBOARD_LOG_FORMAT, else pretty on a terminal, json otherwise)`;

export interface LogSettings {
  /** Undefined: the configuration's log.level decides. */
  level: LogLevelName | undefined;
  format: LogFormat;
}

/** The log settings from flags and environment, or what is wrong with them (a usage error). */
export function logSettings(
  flags: { 'log-level'?: string | undefined; 'log-format'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
  terminal: boolean = process.stderr.isTTY === true,
): LogSettings | string {
  const level = pick(flags['log-level'], env.SWITCHBOARD_LOG_LEVEL, '--log-level', 'SWITCHBOARD_LOG_LEVEL');
  if (level && !isLogLevel(level.value))
    return `${level.from} expects one of ${LOG_LEVELS.join(', ')}, got "${level.value}"`;
  const format = pick(
    flags['log-format'],
    env.SWITCHBOARD_LOG_FORMAT,
    '--log-format',
    'SWITCHBOARD_LOG_FORMAT',
  );
  if (format && !isLogFormat(format.value))
    return `${format.from} expects one of ${LOG_FORMATS.join(', ')}, got "${format.value}"`;
  return {
    level: level?.value as LogLevelName | undefined,
    format: (format?.value as LogFormat | undefined) ?? (terminal ? 'pretty' : 'json'),
  };
}

function pick(
  flag: string | undefined,
  env: string | undefined,
  flagName: string,
  envName: string,
): { value: string; from: string } | undefined {
  if (flag !== undefined) return { value: flag, from: flagName };
  if (env !== undefined && env !== '') return { value: env, from: envName };
  return undefined;
}
