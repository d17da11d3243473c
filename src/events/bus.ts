// Publish/subscribe by topic inside one switchboard: live subscribers get each event once, as it
// is published (at most once); events of durable topics are logged first (EventLog), so a named
// subscription replays what it has not acknowledged.
import type { EventsSection, TopicSettings } from '../config/context-schema.js';
import { globTest } from '../encoding/glob.js';
import type { EventLog, LoggedEvent } from './event-log.js';

export interface Delivered {
  topic: string;
  json: string;
  publisher: string;
  at: number;
  /** The event's sequence number: durable topics only (what events.ack takes). */
  seq?: number | undefined;
}

export type EventListener = (event: Delivered) => void;

interface Subscriber {
  matches: (topic: string) => boolean;
  listener: EventListener;
}

/** Whether a subscription's topic (exact, `prefix*`, or `*`) covers `topic`. */
export function topicMatcher(pattern: string): (topic: string) => boolean {
  if (pattern === '*') return () => true;
  if (pattern.endsWith('*')) {
    const prefix = pattern.slice(0, -1);
    return (t) => t.startsWith(prefix);
  }
  return (t) => t === pattern;
}

export class EventBus {
  private readonly subscribers = new Set<Subscriber>();
  private readonly durable: { match: (t: string) => boolean; settings: TopicSettings }[];
  private readonly published = new Map<string, number>();

  constructor(
    config: EventsSection,
    private readonly log: EventLog,
  ) {
    this.durable = Object.entries(config.topics)
      .filter(([, s]) => s.durable)
      .map(([pattern, settings]) => ({ match: globTest(pattern), settings }));
  }

  /** The durable settings of a topic, or undefined when it is live only. */
  durableSettings(topic: string): TopicSettings | undefined {
    return this.durable.find((d) => d.match(topic))?.settings;
  }

  /** Logs (durable topics) and delivers an event; how many live subscribers it reached. */
  publish(
    topic: string,
    json: string,
    publisher: string,
    now = Date.now(),
  ): { seq?: number; delivered: number } {
    const settings = this.durableSettings(topic);
    let seq: number | undefined;
    if (settings) {
      seq = this.log.append(topic, json, publisher, now);
      // Retention runs every tenth of maxEvents publishes: a topic holds at most 10% more.
      const n = (this.published.get(topic) ?? 0) + 1;
      this.published.set(topic, n % Math.max(1, Math.floor(settings.maxEvents / 10)));
      if (n >= Math.max(1, Math.floor(settings.maxEvents / 10)))
        this.log.retain(topic, settings.maxEvents, settings.maxAgeMs, now);
    }
    const event: Delivered = { topic, json, publisher, at: now, ...(seq !== undefined && { seq }) };
    let delivered = 0;
    for (const s of [...this.subscribers]) {
      if (!s.matches(topic)) continue;
      try {
        s.listener(event);
        delivered++;
      } catch {
        // One subscriber's failure is its own.
      }
    }
    return { ...(seq !== undefined && { seq }), delivered };
  }

  /** Live events on `pattern` from now on; returns the unsubscribe. */
  subscribe(pattern: string, listener: EventListener): () => void {
    const s: Subscriber = { matches: topicMatcher(pattern), listener };
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  /** Logged events after `seq` on durable topics that `pattern` covers, oldest first. */
  replay(pattern: string, seq: number, limit: number): LoggedEvent[] {
    return this.log.after(pattern, seq, limit).filter((e) => this.durableSettings(e.topic) !== undefined);
  }

  /** Applies each durable topic's age and count limits (the periodic sweep). */
  sweep(now = Date.now()): void {
    for (const topic of this.log.topics()) {
      const s = this.durableSettings(topic);
      if (s) this.log.retain(topic, s.maxEvents, s.maxAgeMs, now);
    }
  }
}
