// tasks/list across the mesh: each live node's list of a server's tasks (every page of it, read for
// the same caller), merged into one. A node that cannot answer is left out, as a backend that
// cannot is left out of the gateway's merged list.
import { classify, isFailure, type JsonRpcMessage, type JsonRpcRequest } from '../jsonrpc/message.js';

/** Pages of one node's tasks/list read at most for one merged list. */
const MAX_LIST_PAGES = 100;

export interface TaskListing {
  /** Sends one page request to one node; resolves with its answer (an error if the node is lost). */
  ask(node: string, page: JsonRpcRequest): Promise<JsonRpcMessage>;
  /** A node's list could not be read (whatever it gave before is kept). */
  left(node: string, why: string): void;
}

export async function mergedTaskList(
  nodes: readonly string[],
  message: JsonRpcRequest,
  o: TaskListing,
): Promise<unknown[]> {
  const lists = await Promise.all(
    nodes.map(async (node) => {
      const tasks: unknown[] = [];
      let cursor: unknown = message.params?.cursor;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const params = { ...message.params, ...(cursor === undefined ? {} : { cursor }) };
        const id = `${String(message.id)}/${node}/${page}`;
        // Read as any answer is: a node's answer that JSON-RPC does not allow is no list.
        const answer = classify(await o.ask(node, { ...message, id, params }));
        if (answer.kind !== 'response') {
          o.left(node, 'not a JSON-RPC answer');
          break;
        }
        if (isFailure(answer.message)) {
          o.left(node, answer.message.error.message);
          break;
        }
        const { result } = answer.message;
        if (Array.isArray(result.tasks)) tasks.push(...(result.tasks as unknown[]));
        cursor = result.nextCursor;
        if (typeof cursor !== 'string' || cursor.length === 0) break;
      }
      return tasks;
    }),
  );
  return lists.flat();
}
