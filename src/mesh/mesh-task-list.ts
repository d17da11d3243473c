// tasks/list across the mesh: each live node's list of a server's tasks (every page of it, read for
// the same caller), merged into one. A node that cannot answer is left out, as a backend that
// cannot is left out of the gateway's merged list.
import { classify, isFailure, type JsonRpcMessage, type JsonRpcRequest } from '../jsonrpc/message.js';
import { followPages, TASK_LIST_BOUNDS } from '../protocol/list-pages.js';

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
      const first = message.params?.cursor;
      let page = 0;
      const stopped = await followPages(
        typeof first === 'string' ? first : undefined,
        async (cursor) => {
          const params = { ...message.params, ...(cursor === undefined ? {} : { cursor }) };
          const id = `${String(message.id)}/${node}/${page++}`;
          // Read as any answer is: a node's answer that JSON-RPC does not allow is no list.
          const answer = classify(await o.ask(node, { ...message, id, params }));
          if (answer.kind !== 'response') return void o.left(node, 'not a JSON-RPC answer');
          if (isFailure(answer.message)) return void o.left(node, answer.message.error.message);
          return answer.message.result;
        },
        (result) => {
          const listed = Array.isArray(result.tasks) ? (result.tasks as unknown[]) : [];
          tasks.push(...listed);
          return listed.length;
        },
        TASK_LIST_BOUNDS,
      );
      if (stopped) o.left(node, `read in part: ${stopped}`);
      return tasks;
    }),
  );
  return lists.flat();
}
