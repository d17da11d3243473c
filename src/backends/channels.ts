// Picks the channel kind for a backend's config. Adding a kind adds a case here and a file
// beside this one; the `never` default makes a forgotten kind a compile error. The A2A kind loads
// its client library as it starts (loaded-channel.ts): a switchboard without such a backend
// carries none. Both MCP HTTP transports are switchboard's own clients.
import type { A2ABackendConfig, BackendConfig } from '../config/schema.js';
import { backendDestination, outboundFetch } from '../net/outbound.js';
import type { Channel } from '../jsonrpc/channel.js';
import { assertNever } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import { keptResponse } from './kept-response.js';
import { LoadedChannel } from './loaded-channel.js';
import { SseChannel } from './sse-channel.js';
import { StdioChannel, type Launcher } from './stdio-channel.js';
import { StreamableHttpChannel } from './streamable-http-channel.js';
import type { ProcessGroups } from './watchdog.js';
import type { StderrTail } from './stderr-tail.js';

export type BackendKind = 'stdio' | 'streamable-http' | 'sse' | 'a2a';

export function backendKind(config: BackendConfig): BackendKind {
  if ('command' in config) return 'stdio';
  if ('a2a' in config) return 'a2a';
  return config.type === 'sse' ? 'sse' : 'streamable-http';
}

export interface ChannelOptions {
  name: string;
  log: Logger;
  maxMessageBytes: number;
  extraEnv?: Record<string, string>;
  groups?: ProcessGroups | undefined;
  launch?: Launcher | undefined;
  stderrTail?: StderrTail | undefined;
  /**
   * Takes secrets out of what the backend says that is kept cut short (a line that is not JSON,
   * an HTTP error's body): before the cut, since a secret cut in two is found by no later redaction.
   */
  redact?: ((text: string) => string) | undefined;
}

export function createChannel(config: BackendConfig, options: ChannelOptions): Channel {
  const kind = backendKind(config);
  switch (kind) {
    case 'stdio':
      return new StdioChannel({ ...options, config: config as Extract<BackendConfig, { command: string }> });
    case 'streamable-http':
      return new StreamableHttpChannel(config as Extract<BackendConfig, { url: string }>, options);
    case 'sse':
      return new SseChannel(config as Extract<BackendConfig, { url: string }>, options);
    case 'a2a': {
      const agent = config as A2ABackendConfig;
      const { name, log, maxMessageBytes } = options;
      const outbound = outboundFetch({
        destination: backendDestination(name),
        url: new URL(agent.a2a),
        allowPrivateNetwork: agent.allowPrivateNetwork,
      });
      // Every answer is kept to the message limit before the A2A client reads it; a task's
      // update over it fails the call rather than leave it to end without that update.
      const keep = { backend: name, maxMessageBytes };
      const fetch = Object.assign(
        async (url: string | URL, init?: RequestInit) => keptResponse(await outbound(url, init), keep),
        { close: () => outbound.close() },
      );
      return new LoadedChannel(async () => {
        const { AgentChannel } = await import('../a2a/agent-channel.js');
        return new AgentChannel(agent, { name, log, fetch, maxMessageBytes });
      });
    }
    default:
      return assertNever(kind);
  }
}
