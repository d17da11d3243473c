// The target node's side of a listen stream from another node: the server's own resource URIs
// the entry node names become this node's exposed ones, and what the stream carries back
// (the acknowledgement, resource updates) names them in the server's own form again.
import type { Catalog } from '../catalog/catalog.js';
import type { JsonRpcNotification, Params } from '../jsonrpc/message.js';

export interface DoorListen {
  params: Params;
  /** A notification of the stream, as the entry node expects it. */
  back(n: JsonRpcNotification): JsonRpcNotification;
}

export function doorListen(catalog: Catalog, server: string, params: Params): DoorListen {
  const notifications = (params.notifications ?? {}) as Record<string, unknown>;
  const wanted = notifications.resourceSubscriptions;
  const own = new Map<string, string>();
  for (const uri of Array.isArray(wanted) ? wanted : [])
    if (typeof uri === 'string') own.set(catalog.exposeUri(server, uri), uri);
  const ownOf = (uri: unknown) => (typeof uri === 'string' ? (own.get(uri) ?? uri) : uri);
  return {
    params: { ...params, notifications: { ...notifications, resourceSubscriptions: [...own.keys()] } },
    back(n) {
      const p = n.params;
      if (!p) return n;
      if (n.method === 'notifications/resources/updated')
        return { ...n, params: { ...p, uri: ownOf(p.uri) } };
      if (n.method !== 'notifications/subscriptions/acknowledged') return n;
      const honoured = (p.notifications ?? {}) as Record<string, unknown>;
      const taken = honoured.resourceSubscriptions;
      if (!Array.isArray(taken)) return n;
      return {
        ...n,
        params: { ...p, notifications: { ...honoured, resourceSubscriptions: taken.map(ownOf) } },
      };
    },
  };
}
