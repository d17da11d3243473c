// The thread a code-mode script runs in, one script at a time. Tool calls go to switchboard's
// thread as messages and come back as JSON text; a stop is read from a shared flag while the
// interpreter runs, and from a message while the script waits on its tools.
import { parentPort } from 'node:worker_threads';
import { interpret } from './script-interpreter.js';
import { STOP_CODES, type FromWorker, type StopReason, type ToWorker } from './script-types.js';

const REASONS = new Map<number, StopReason>(
  Object.entries(STOP_CODES).map(([why, code]) => [code, why as StopReason]),
);

const port = parentPort;
if (port !== null) {
  const send = (message: FromWorker) => port.postMessage(message);
  const answers = new Map<number, (json: string) => void>();
  let stop: AbortController | undefined;
  let nextId = 1;

  port.on('message', (message: ToWorker) => {
    if (message.type === 'answer') {
      send({ type: 'took', chars: message.json.length });
      answers.get(message.id)?.(message.json);
      answers.delete(message.id);
    } else if (message.type === 'stop') stop?.abort();
    else void run(message);
  });

  const run = async (message: Extract<ToWorker, { type: 'run' }>) => {
    const flag = new Int32Array(message.stop);
    stop = new AbortController();
    const relay = (name: string, args: string) =>
      new Promise<string>((resolve) => {
        const id = nextId++;
        answers.set(id, resolve);
        send({ type: 'call', id, name, args });
      });
    const control = {
      stopRequested: () => REASONS.get(Atomics.load(flag, 0)),
      signal: stop.signal,
      running: (on: boolean) => send({ type: 'running', on }),
    };
    try {
      const outcome = await interpret(message.source, message.toolNames, relay, message.limits, control);
      send({ type: 'done', outcome });
    } catch (err) {
      // The interpreter could not be set up or torn down: this thread is not used again.
      const why = err instanceof Error ? err.message : String(err);
      const error = { name: 'InternalError', message: `the script could not be run: ${why}` };
      send({ type: 'done', outcome: { ok: false, console: [], calls: 0, error }, threadBroken: true });
    } finally {
      // Answers still owed belong to this script: they are not waited for.
      answers.clear();
      stop = undefined;
    }
  };
}
