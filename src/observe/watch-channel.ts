// Subscribing to the pipeline's diagnostics channels without putting the process at risk. Node
// turns an exception thrown by a subscriber into an uncaught exception after the publish, which
// ends switchboard and every connection with it; a call carrying a value one observer cannot
// read (a request id or trace state a host made up) must cost at most that observer's view of it.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Logger } from '../log.js';
import { messageOf } from '../jsonrpc/outgoing.js';

/** Subscribes `fn` to the channel `name`; what it throws is logged. Returns the unsubscribe. */
export function watchChannel(name: string | symbol, fn: (message: unknown) => void, log: Logger): () => void {
  let warned = false;
  const watcher = (message: unknown) => {
    try {
      fn(message);
    } catch (err) {
      // Once per subscription: a value that breaks an observer tends to come again and again.
      if (warned) return;
      warned = true;
      log.warn(
        { channel: String(name), err: messageOf(err) },
        'an observer could not read a call (further failures not logged)',
      );
    }
  };
  subscribe(name, watcher);
  return () => void unsubscribe(name, watcher);
}
