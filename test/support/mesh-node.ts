// A switchboard node of a test mesh on a real nats-server: the given servers, keyed mesh
// membership (every node of `keys` trusted, 200 ms heartbeats), no audit trail or pinning.
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { keyedMesh, type NodeKeys } from './nats.js';
import { launchSwitchboard } from './start-switchboard.js';

export function meshNode(
  natsUrl: string,
  keys: Record<string, NodeKeys>,
  name: string,
  servers: ConfigInput['servers'],
): Promise<Switchboard> {
  return launchSwitchboard({
    servers,
    audit: { enabled: false },
    pinning: { enabled: false },
    mesh: keyedMesh(natsUrl, keys, name, 200),
  } as ConfigInput);
}
