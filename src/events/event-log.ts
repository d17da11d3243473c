// The durable topics' log in the state database: events numbered by one increasing sequence, and
// each named subscription's cursor (the last event it acknowledged), so a subscriber that comes
// back gets what it has not acknowledged (at least once).
import { migrate, type StateDb } from '../state/state-db.js';

const MIGRATIONS = [
  `CREATE TABLE events_log (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     topic TEXT NOT NULL,
     json TEXT NOT NULL,
     publisher TEXT NOT NULL,
     at INTEGER NOT NULL
   );
   CREATE INDEX events_by_topic ON events_log (topic, seq);
   CREATE TABLE events_cursors (
     subscriber TEXT NOT NULL,
     name TEXT NOT NULL,
     topic TEXT NOT NULL,
     seq INTEGER NOT NULL,
     PRIMARY KEY (subscriber, name)
   ) WITHOUT ROWID;`,
];

/** Above every character a topic may hold: the end of a prefix range. */
const TOP = '\u{10FFFF}';

export interface LoggedEvent {
  seq: number;
  topic: string;
  json: string;
  publisher: string;
  at: number;
}

export interface Cursor {
  topic: string;
  seq: number;
}

export class EventLog {
  private readonly q;

  constructor(db: StateDb) {
    migrate(db, 'events', MIGRATIONS);
    this.q = {
      append: db.prepare('INSERT INTO events_log (topic, json, publisher, at) VALUES (?, ?, ?, ?)'),
      exact: db.prepare<[string, number, number], LoggedEvent>(
        'SELECT * FROM events_log WHERE topic = ? AND seq > ? ORDER BY seq LIMIT ?',
      ),
      prefix: db.prepare<[string, string, number, number], LoggedEvent>(
        'SELECT * FROM events_log WHERE topic >= ? AND topic < ? AND seq > ? ORDER BY seq LIMIT ?',
      ),
      cursor: db.prepare<[string, string], Cursor>(
        'SELECT topic, seq FROM events_cursors WHERE subscriber = ? AND name = ?',
      ),
      setCursor: db.prepare(
        `INSERT INTO events_cursors (subscriber, name, topic, seq) VALUES (?, ?, ?, ?)
         ON CONFLICT (subscriber, name) DO UPDATE SET seq = MAX(seq, excluded.seq), topic = excluded.topic`,
      ),
      nth: db.prepare<[string, number], { seq: number }>(
        'SELECT seq FROM events_log WHERE topic = ? ORDER BY seq DESC LIMIT 1 OFFSET ?',
      ),
      dropUpTo: db.prepare('DELETE FROM events_log WHERE topic = ? AND seq <= ?'),
      dropBefore: db.prepare('DELETE FROM events_log WHERE topic = ? AND at < ?'),
      topics: db.prepare<[], { topic: string }>('SELECT DISTINCT topic FROM events_log'),
    };
  }

  append(topic: string, json: string, publisher: string, at: number): number {
    return Number(this.q.append.run(topic, json, publisher, at).lastInsertRowid);
  }

  /** Events after `seq` on `topic` (exact, or a prefix when it ends in `*`), oldest first. */
  after(topic: string, seq: number, limit: number): LoggedEvent[] {
    if (topic === '*') return this.q.prefix.all('', TOP, seq, limit);
    if (topic.endsWith('*')) {
      const prefix = topic.slice(0, -1);
      return this.q.prefix.all(prefix, prefix + TOP, seq, limit);
    }
    return this.q.exact.all(topic, seq, limit);
  }

  cursor(subscriber: string, name: string): Cursor | undefined {
    return this.q.cursor.get(subscriber, name);
  }

  /** Moves a subscription's cursor forward (never back: an old ack changes nothing). */
  ack(subscriber: string, name: string, topic: string, seq: number): void {
    this.q.setCursor.run(subscriber, name, topic, seq);
  }

  /** Keeps the newest `maxEvents` of `topic`, and none older than `maxAgeMs`. */
  retain(topic: string, maxEvents: number, maxAgeMs: number | undefined, now: number): void {
    const edge = this.q.nth.get(topic, maxEvents);
    if (edge) this.q.dropUpTo.run(topic, edge.seq);
    if (maxAgeMs !== undefined) this.q.dropBefore.run(topic, now - maxAgeMs);
  }

  /** Topics with events kept (for the age sweep). */
  topics(): string[] {
    return this.q.topics.all().map((r) => r.topic);
  }
}
