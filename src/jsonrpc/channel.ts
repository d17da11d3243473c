// The message channel a peer talks over: a backend's stdio pipes, its HTTP transport, a mesh
// node's subjects. Structurally the MCP SDK's Transport, so an SDK Client can talk over one too.
import type { JsonRpcMessage, RequestId } from './message.js';

/** The call a request is sent for, as the entry side identified it. */
export interface RequestOrigin {
  caller: { readonly kind: string; readonly id: string };
  callId: string;
  /**
   * Told where the request went when the channel crosses to another switchboard (a mesh node) and,
   * once it answers, the call id it was served under there: what the audit record names.
   */
  served?: ((node: string, remoteCallId: string | undefined) => void) | undefined;
}

export interface Channel {
  start(): Promise<void>;
  /**
   * `requestSignal` is the call's own signal, for a transport with one HTTP exchange per request
   * to end it when the caller cancels (how the modern era cancels over HTTP: the Streamable HTTP
   * channel does); a time limit withdraws the request by id instead.
   */
  send(
    message: JsonRpcMessage,
    options?: {
      relatedRequestId?: RequestId;
      requestSignal?: AbortSignal | undefined;
      headers?: Record<string, string> | undefined;
      /**
       * The request's own response stream ended for good (closed without a resumable id, or its
       * resumption failed): no answer can come that way any more.
       */
      onRequestStreamEnd?: (() => void) | undefined;
      /**
       * Whether the request's answer is still awaited: not once it came, or the request failed or
       * was withdrawn (its time limit ran out). A transport resuming its stream stops then.
       */
      awaited?: (() => boolean) | undefined;
      /**
       * The call a request is forwarded for (who made it, its call id), for a channel that must
       * vouch for the caller to the other side (a mesh channel signs it); the others ignore it.
       */
      origin?: RequestOrigin | undefined;
    },
  ): Promise<void>;
  close(): Promise<void>;
  /** Parsed but not yet classified: the peer decides what it is. */
  onmessage?: ((message: unknown) => void) | undefined;
  onclose?: (() => void) | undefined;
  /** Why the channel closed, when it knows better than "connection closed" (a child's exit). */
  readonly closeReason?: string | undefined;
  onerror?: ((error: Error) => void) | undefined;
  sessionId?: string | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
}
