// The events extension: events.publish | subscribe | ack over the bridge (and in process). Each is
// a call through the pipeline, so policy judges the `topic` argument and every publish is audited.
// A subscription is a call that stays open, streaming notifications/events/event to its caller.
import { LocalError, WIRE, WireError } from '../errors/errors.js';
import type { Params, Result } from '../jsonrpc/message.js';
import { topicOf } from '../context/scopes.js';
import { EventBus, type Delivered } from '../events/bus.js';
import { EventLog } from '../events/event-log.js';
import type { Extension } from './extension.js';

export const EVENTS_METHODS = ['events.publish', 'events.subscribe', 'events.ack'] as const;

/** A named subscription: what its cursor is kept under, per caller. */
function subscriptionOf(params: Params, required: boolean): string | undefined {
  const s = params.subscription;
  if (s === undefined && !required) return undefined;
  if (typeof s !== 'string' || !/^[A-Za-z0-9_.:-]{1,100}$/.test(s))
    throw new WireError(
      WIRE.INVALID_PARAMS,
      'subscription must be a name of 1 to 100 letters, digits, _ . : -',
    );
  return s;
}

function eventParams(e: Delivered, subscription: string | undefined): Params {
  return {
    topic: e.topic,
    data: JSON.parse(e.json) as unknown,
    publisher: e.publisher,
    at: e.at,
    ...(e.seq !== undefined && { id: e.seq }),
    ...(subscription !== undefined && { subscription }),
  };
}

export const eventsExtension: Extension = {
  name: 'events',
  streaming: ['events.subscribe'],
  setup(api) {
    const config = api.config.events;
    if (!config.enabled) return;
    const log = new EventLog(api.state);
    const bus = new EventBus(config, log);
    const open = new Set<() => void>();

    api.handle('events.publish', (params, ctx) => {
      const topic = topicOf(params, false);
      if (!('data' in params) || params.data === undefined)
        throw new WireError(WIRE.INVALID_PARAMS, 'data is required (any JSON value)');
      const json = JSON.stringify(params.data);
      const bytes = Buffer.byteLength(json);
      if (bytes > config.maxPayloadBytes)
        throw new LocalError(
          'context_too_large',
          `Event data for ${topic} is ${bytes} bytes; events take at most ${config.maxPayloadBytes}`,
          { data: { topic, bytes, limit: config.maxPayloadBytes } },
        );
      const { seq, delivered } = bus.publish(topic, json, `${ctx.caller.kind}:${ctx.caller.id}`);
      return { topic, delivered, ...(seq !== undefined && { id: seq }) };
    });

    api.handle('events.subscribe', (params, ctx) => {
      const topic = topicOf(params, true);
      const subscription = subscriptionOf(params, false);
      const who = `${ctx.caller.kind}:${ctx.caller.id}`;
      const send = (e: Delivered) => ctx.notify('notifications/events/event', eventParams(e, subscription));
      // Replay and the live subscription are set up in one synchronous step: no event published
      // in between can be missed or delivered twice. The subscriber hears `subscribed` first (with
      // how many events are replayed), then the replayed events, then live ones.
      let pending: Delivered[] = [];
      let more = false;
      if (subscription !== undefined) {
        const cursor = log.cursor(who, subscription);
        if (cursor && cursor.topic !== topic)
          throw new WireError(
            WIRE.INVALID_PARAMS,
            `subscription ${subscription} is for topic ${cursor.topic}, not ${topic}`,
          );
        pending = bus.replay(topic, cursor?.seq ?? 0, config.maxReplay);
        more = pending.length === config.maxReplay;
      }
      const unsubscribe = bus.subscribe(topic, send);
      return new Promise<Result>((resolve) => {
        const end = (result: Result) => {
          unsubscribe();
          open.delete(stop);
          resolve(result);
        };
        const stop = () => end({ ended: 'switchboard stopping' });
        open.add(stop);
        ctx.signal.addEventListener('abort', () => end({}), { once: true });
        ctx.notify('notifications/events/subscribed', {
          topic,
          ...(subscription !== undefined && { subscription, replayed: pending.length, more }),
        });
        for (const e of pending) send(e);
      });
    });

    api.handle('events.ack', (params, ctx) => {
      const topic = topicOf(params, true);
      const subscription = subscriptionOf(params, true)!;
      const id = params.id;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
        throw new WireError(WIRE.INVALID_PARAMS, 'id must be the id of an event received (an integer >= 1)');
      const who = `${ctx.caller.kind}:${ctx.caller.id}`;
      const cursor = log.cursor(who, subscription);
      if (cursor && cursor.topic !== topic)
        throw new WireError(
          WIRE.INVALID_PARAMS,
          `subscription ${subscription} is for topic ${cursor.topic}, not ${topic}`,
        );
      log.ack(who, subscription, topic, id);
      return { subscription, acked: Math.max(id, cursor?.seq ?? 0) };
    });

    const sweeper = setInterval(() => {
      try {
        bus.sweep();
      } catch (err) {
        api.log.warn({ err }, 'events: retention sweep failed; will retry');
      }
    }, 60_000);
    sweeper.unref();
    return {
      close: () => {
        clearInterval(sweeper);
        for (const stop of [...open]) stop();
      },
    };
  },
};
