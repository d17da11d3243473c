// Task ids as hosts see them: a backend's own id namespaced by the backend (`<backend>:<taskId>`),
// in results and in the related-task key of messages, and back in the backend's form on the way in.
import type { Result } from '../jsonrpc/message.js';
import { RELATED_TASK } from '../protocol/versions.js';

export { RELATED_TASK };

/** Between the backend's name (letters, digits, `_ . -`) and its own task id. */
const SEPARATOR = ':';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function exposeTaskId(backend: string, taskId: string): string {
  return `${backend}${SEPARATOR}${taskId}`;
}

/** The owning backend and its own id, for an id switchboard issued; undefined for any other. */
export function splitTaskId(exposed: string): { backend: string; taskId: string } | undefined {
  const at = exposed.indexOf(SEPARATOR);
  if (at <= 0 || at === exposed.length - 1) return undefined;
  return { backend: exposed.slice(0, at), taskId: exposed.slice(at + 1) };
}

/** A backend message's related-task key, with the backend's id namespaced for hosts. */
export function exposeRelated<T extends Result>(backend: string, message: T): T {
  const related = message._meta?.[RELATED_TASK];
  if (!isObj(related) || typeof related.taskId !== 'string') return message;
  return {
    ...message,
    _meta: {
      ...message._meta,
      [RELATED_TASK]: { ...related, taskId: exposeTaskId(backend, related.taskId) },
    },
  };
}

/** A host's answer to a backend's request, with the related-task key back in the backend's form. */
export function unwrapRelated<T extends Result>(backend: string, message: T): T {
  const related = message._meta?.[RELATED_TASK];
  if (!isObj(related) || typeof related.taskId !== 'string') return message;
  const split = splitTaskId(related.taskId);
  if (split?.backend !== backend) return message;
  return { ...message, _meta: { ...message._meta, [RELATED_TASK]: { ...related, taskId: split.taskId } } };
}
