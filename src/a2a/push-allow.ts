// Which webhook URLs clients of switchboard's agent may register (a2a.serve.pushNotifications.allow)
// and how they are reached. A URL is matched on its parsed parts (scheme, host, port, path prefix),
// never as text, so a user part (`https://allowed.example@127.0.0.1/`), another spelling of an
// address (decimal, hex, IPv6) or a longer host name cannot pass for an allowed one. Every request
// goes through the guarded outbound fetch: no redirects, and no private address the entry does not
// name outright.
import { lookup as dnsLookup } from 'node:dns';
import type { Config } from '../config/schema.js';
import {
  PrivateAddressError,
  checkedLookup,
  namedOutright,
  outboundFetch,
  type Destination,
  type FetchLike,
  type LookupFunction,
} from '../net/outbound.js';

type PushSettings = Config['a2a']['serve']['pushNotifications'];

/** One allow-list entry, parsed. */
export interface AllowedWebhook {
  readonly prefix: URL;
  /** Its host may resolve to a private address (a literal address or localhost in it counts too). */
  readonly privateNetwork: boolean;
}

export type WebhookVerdict = { url: URL; entry: AllowedWebhook } | { problem: string };

/** A webhook URL longer than this is refused (it is stored, and sent on every update). */
export const MAX_WEBHOOK_URL = 2048;

const WEBHOOK: Destination = {
  label: 'A2A push webhook',
  wayOut:
    'Name the address itself (or localhost) in a2a.serve.pushNotifications.allow, or give the entry privateNetwork: true, if webhooks are meant to be on that network',
};

/**
 * The most connections open at once to the webhooks of one allow-list entry: each config sends one
 * update at a time, and this bounds how many configs' requests one slow receiver holds open.
 */
export const WEBHOOK_SOCKETS = 16;

/**
 * An encoded slash, backslash or dot in a path: a receiver that decodes them before it normalises
 * the path would take `/a2a/..%2Fadmin` out of the allowed prefix.
 */
const ENCODED_SEPARATOR = /%(2f|5c|2e)/i;

function underPath(path: string, prefix: string): boolean {
  if (prefix.endsWith('/')) return path.startsWith(prefix);
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Whether `url`, were its scheme `protocol`, is under `entry`: same scheme, host and port, path below. */
function matches(entry: AllowedWebhook, url: URL, protocol: string): boolean {
  const p = entry.prefix;
  return (
    p.protocol === protocol &&
    p.hostname === url.hostname &&
    p.port === url.port &&
    underPath(url.pathname, p.pathname)
  );
}

export class WebhookGuard {
  readonly allow: readonly AllowedWebhook[];
  private readonly fetches = new Map<AllowedWebhook, FetchLike & { close(): void }>();
  private closed = false;

  /** @param resolve resolves host names (default dns.lookup); tests inject one. */
  constructor(
    settings: Pick<PushSettings, 'allow'>,
    private readonly resolve: LookupFunction = dnsLookup,
  ) {
    this.allow = settings.allow.map((a) => {
      const { url, privateNetwork } = typeof a === 'string' ? { url: a, privateNetwork: false } : a;
      const prefix = new URL(url);
      return { prefix, privateNetwork: privateNetwork || namedOutright(prefix) };
    });
  }

  /** The allow-list entry `text` falls under, or why it is refused (words for the client). */
  judge(text: string): WebhookVerdict {
    if (!text) return { problem: 'A push notification config needs a webhook url' };
    if (text.length > MAX_WEBHOOK_URL)
      return { problem: `The webhook URL is longer than ${MAX_WEBHOOK_URL} characters` };
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return { problem: 'The webhook URL is not an absolute URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      return {
        problem: `The webhook URL must be https:// (or http:// where allowed), not ${url.protocol}//`,
      };
    if (url.username || url.password)
      return {
        problem:
          'The webhook URL carries a user or password (user@host): send credentials in the config’s authentication instead',
      };
    // Problems quote the origin only: a webhook's path may hold a secret, and errors reach the log.
    if (ENCODED_SEPARATOR.test(url.pathname))
      return {
        problem: `The webhook URL for ${url.origin} has an encoded slash, backslash or dot (%2F, %5C, %2E) in its path: write them plainly`,
      };
    const entry = this.allow.find((e) => matches(e, url, url.protocol));
    if (entry) return { url, entry };
    const plain = url.protocol === 'http:' && this.allow.some((e) => matches(e, url, 'https:'));
    return {
      problem: plain
        ? `The webhook URL ${url.origin} is plain http://: this agent allows it over https:// only`
        : `The webhook URL for ${url.origin} is not allowed: it is under none of the webhook prefixes this agent's operator allows (a2a.serve.pushNotifications.allow)`,
    };
  }

  /**
   * Whether the verdict's host resolves to an address its entry does not allow (undefined: it may
   * be registered). Said at registration, for a clear answer; each connection is checked anyway.
   */
  async resolvesPrivate(verdict: { url: URL; entry: AllowedWebhook }): Promise<string | undefined> {
    // An entry with a literal address is privateNetwork already: what is left is a host name.
    if (verdict.entry.privateNetwork) return undefined;
    const host = verdict.url.hostname;
    // The very check each connection makes: every address the name resolves to must be public.
    const err = await new Promise<Error | null>((done) =>
      checkedLookup(WEBHOOK, this.resolve)(host, { all: true }, (e, addresses) =>
        done(e ?? (addresses.length === 0 ? new Error('no address') : null)),
      ),
    );
    if (!err) return undefined;
    if (err instanceof PrivateAddressError)
      return `The webhook host ${host} resolves to a ${err.reason} address, which this agent's allow list does not name`;
    return `The webhook host ${host} does not resolve`;
  }

  /** The fetch requests under `entry` go through (one per entry, its connections kept alive). */
  fetchFor(entry: AllowedWebhook): FetchLike {
    // Closed when switchboard stops: a fresh connection pool now would outlive it.
    if (this.closed) throw new Error('the webhook guard is closed: switchboard is stopping');
    let fetch = this.fetches.get(entry);
    if (!fetch) {
      fetch = outboundFetch({
        destination: WEBHOOK,
        url: entry.prefix,
        allowPrivateNetwork: entry.privateNetwork,
        lookup: this.resolve,
        maxSockets: WEBHOOK_SOCKETS,
      });
      this.fetches.set(entry, fetch);
    }
    return fetch;
  }

  close(): void {
    this.closed = true;
    for (const f of this.fetches.values()) f.close();
    this.fetches.clear();
  }
}
