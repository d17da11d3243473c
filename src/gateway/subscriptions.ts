// Resource subscriptions of all host sessions, counted per backend URI: the backend is asked
// once for the first subscriber and released after the last, and updates reach only subscribers.
export class Subscriptions {
  /** backend → backend URI → session ids */
  private readonly byBackend = new Map<string, Map<string, Set<string>>>();

  /** Returns true when this is the first subscriber (the backend must be asked). */
  add(backend: string, uri: string, session: string): boolean {
    let uris = this.byBackend.get(backend);
    if (!uris) this.byBackend.set(backend, (uris = new Map()));
    let sessions = uris.get(uri);
    const first = !sessions;
    if (!sessions) uris.set(uri, (sessions = new Set()));
    sessions.add(session);
    return first;
  }

  /** Returns true when the last subscriber left (the backend may be released). */
  remove(backend: string, uri: string, session: string): boolean {
    const uris = this.byBackend.get(backend);
    const sessions = uris?.get(uri);
    if (!uris || !sessions?.delete(session)) return false;
    if (sessions.size > 0) return false;
    uris.delete(uri);
    return true;
  }

  /** Drops every subscription of a session; returns the backend URIs nobody holds any more. */
  removeSession(session: string): { backend: string; uri: string }[] {
    const released: { backend: string; uri: string }[] = [];
    for (const [backend, uris] of this.byBackend) {
      for (const [uri, sessions] of uris) {
        if (sessions.delete(session) && sessions.size === 0) {
          uris.delete(uri);
          released.push({ backend, uri });
        }
      }
    }
    return released;
  }

  subscribers(backend: string, uri: string): ReadonlySet<string> {
    return this.byBackend.get(backend)?.get(uri) ?? new Set();
  }

  /** The backend URIs someone holds a subscription to (re-established when the backend returns). */
  uris(backend: string): string[] {
    return [...(this.byBackend.get(backend)?.keys() ?? [])];
  }

  /** Forgets a backend's subscriptions (it went away; its new instance starts with none). */
  dropBackend(backend: string): Map<string, Set<string>> {
    const uris = this.byBackend.get(backend) ?? new Map<string, Set<string>>();
    this.byBackend.delete(backend);
    return uris;
  }
}
