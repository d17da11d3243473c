// Opening a session with a backend: its connection opened within the start's limit, the era probe
// (`server/discover` in the modern envelope), and the legacy `initialize` handshake for a backend
// that is not modern.
import { BackendWireError, WIRE } from '../errors/errors.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { messageOf, type RpcPeer } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import {
  CLIENT_CAPABILITIES_TO_BACKENDS,
  LATEST_LEGACY,
  LATEST_MODERN,
  LEGACY_VERSIONS,
  META,
  SERVER_INFO,
  isModernVersion,
} from '../protocol/versions.js';
import type { ServerDescription } from './upstream.js';

export interface ProbeOptions {
  /** The backend is configured (or was found) modern: no answer is a failure, not a legacy verdict. */
  forced: boolean;
  /** How long to wait for the answer. */
  timeoutMs: number;
  /** The params of `server/discover`: switchboard's own envelope. */
  envelope: Params;
  log: Logger;
}

/**
 * The era probe. A discover result naming a modern version switchboard speaks, or a modern version
 * error, means modern; any other answer, or none within the timeout, means legacy (undefined), as
 * the 2026-07-28 versioning rules say.
 */
export async function probeModern(
  peer: RpcPeer,
  probe: ProbeOptions,
): Promise<ServerDescription | undefined> {
  const { forced } = probe;
  let found: Result;
  const signal = AbortSignal.timeout(probe.timeoutMs);
  try {
    found = await peer.request('server/discover', probe.envelope, { signal });
  } catch (err) {
    if (forced && signal.aborted)
      throw new Error(
        `backend did not answer server/discover within ${probe.timeoutMs} ms (limits.startupTimeoutMs)`,
        { cause: err },
      );
    const body = err instanceof BackendWireError ? err : undefined;
    const supported = (body?.data as { supported?: unknown } | undefined)?.supported;
    if (forced || (body?.code === WIRE.UNSUPPORTED_PROTOCOL_VERSION && Array.isArray(supported))) {
      throw new Error(
        Array.isArray(supported)
          ? `backend supports protocol versions ${supported.join(', ')}; switchboard speaks ${LATEST_MODERN} and ${LEGACY_VERSIONS.join(', ')}`
          : `backend did not answer server/discover: ${messageOf(err)}`,
        { cause: err },
      );
    }
    probe.log.debug({ err: messageOf(err) }, 'no modern answer to server/discover; speaking legacy');
    return undefined;
  }
  const versions = Array.isArray(found.supportedVersions) ? (found.supportedVersions as unknown[]) : [];
  const version = versions.find(isModernVersion);
  if (version === undefined) {
    if (forced) throw new Error(`backend offers no modern protocol version (${versions.join(', ')})`);
    return undefined;
  }
  return {
    era: 'modern',
    protocolVersion: String(version),
    capabilities: (found.capabilities as Record<string, unknown>) ?? {},
    serverInfo: (found._meta?.[META.serverInfo] as Record<string, unknown>) ?? {},
    instructions: typeof found.instructions === 'string' ? found.instructions : undefined,
  };
}

/** The legacy handshake: initialize, then notifications/initialized. */
export async function initializeLegacy(
  peer: RpcPeer,
  channel: Channel,
  timeoutMs: number,
): Promise<ServerDescription> {
  const signal = AbortSignal.timeout(timeoutMs);
  let init: Result;
  try {
    init = await peer.request(
      'initialize',
      {
        protocolVersion: LATEST_LEGACY,
        capabilities: CLIENT_CAPABILITIES_TO_BACKENDS,
        clientInfo: SERVER_INFO,
      },
      { signal },
    );
  } catch (err) {
    // Not "Request cancelled": the backend never answered, and the setting says how long it had.
    if (signal.aborted)
      throw new Error(`backend did not answer initialize within ${timeoutMs} ms (limits.startupTimeoutMs)`, {
        cause: err,
      });
    throw err;
  }
  const version = String(init.protocolVersion);
  if (!(LEGACY_VERSIONS as readonly string[]).includes(version)) {
    throw new Error(`backend answered with protocol version ${version}, which switchboard does not speak`);
  }
  channel.setProtocolVersion?.(version);
  await peer.notify('notifications/initialized');
  return {
    era: 'legacy',
    protocolVersion: version,
    capabilities: (init.capabilities as Record<string, unknown>) ?? {},
    serverInfo: (init.serverInfo as Record<string, unknown>) ?? {},
    instructions: typeof init.instructions === 'string' ? init.instructions : undefined,
  };
}

/** `opening`, or a failure once `ms` have passed without it (the caller closes the connection). */
export function openedWithin(opening: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the connection did not open within ${ms} ms (limits.startupTimeoutMs)`)),
      ms,
    );
  });
  // Its own failure, once the time has run out, is nobody's to handle.
  opening.catch(() => {});
  return Promise.race([opening, late]).finally(() => clearTimeout(timer));
}
