// The bridge's first exchange: bridge/authenticate with the token, and the session its answer
// establishes (who this connection is, and the server's message size limit).
import type { Socket } from 'node:net';
import { classify, isFailure, type Result } from '../../jsonrpc/message.js';
import { AUTH_ID, BRIDGE_PROTOCOL, DEFAULT_MAX_MESSAGE_BYTES } from './constants.js';
import { BridgeError } from './errors.js';
import type { Inbox } from './inbox.js';

/** What authentication established. */
export interface BridgeSession {
  identity: string;
  protocol: string;
  /** The server's limit: larger outgoing messages are refused here rather than dropped there. */
  maxMessageBytes: number;
}

/**
 * Sends bridge/authenticate and reads lines up to its answer. Reading then pauses; lines already
 * read after the answer wait in `inbox` for the connection's listener, read under `receiveLimit`
 * (default: the limit the server announced).
 */
export function authenticate(
  socket: Socket,
  inbox: Inbox,
  token: string,
  receiveLimit: number | undefined,
): Promise<BridgeSession> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      socket.pause();
      inbox.readInto(undefined);
      socket.off('close', onClose);
      socket.off('error', onError);
    };
    const fail = (err: BridgeError) => {
      stop();
      reject(err);
    };
    inbox.readInto({
      message: (value) => {
        const c = classify(value);
        // Anything before the answer is not ours to interpret yet; the answer carries our id (or null if unmatched).
        if (c.kind !== 'response' || (c.message.id !== AUTH_ID && c.message.id !== null)) return;
        stop();
        if (isFailure(c.message)) {
          const { code, message, data } = c.message.error;
          return reject(new BridgeError(code, message, data));
        }
        try {
          const session = sessionOf(c.message.result);
          inbox.limit = receiveLimit ?? session.maxMessageBytes;
          resolve(session);
        } catch (err) {
          reject(err);
        }
      },
      notJson: () =>
        fail(new BridgeError('protocol', 'the bridge answered authentication with a line that is not JSON')),
      oversized: () => fail(new BridgeError('protocol', 'the authentication answer exceeds the size limit')),
    });
    const onClose = () =>
      fail(new BridgeError('closed', 'the bridge closed the connection before answering authentication'));
    const onError = (err: Error) =>
      fail(
        new BridgeError(
          'unavailable',
          `bridge socket failed during authentication: ${err.message}`,
          undefined,
          {
            cause: err,
          },
        ),
      );
    socket.on('close', onClose);
    socket.on('error', onError);
    const auth = { jsonrpc: '2.0', id: AUTH_ID, method: 'bridge/authenticate', params: { token } };
    socket.write(JSON.stringify(auth) + '\n');
  });
}

function sessionOf(result: Result): BridgeSession {
  const { identity, protocol, maxMessageBytes } = result;
  if (typeof identity !== 'string' || !identity) {
    throw new BridgeError('protocol', 'the bridge authenticated without naming an identity', result);
  }
  if (typeof protocol === 'string' && protocol !== BRIDGE_PROTOCOL) {
    throw new BridgeError(
      'protocol',
      `the bridge speaks ${protocol}, this client ${BRIDGE_PROTOCOL}`,
      result,
    );
  }
  return {
    identity,
    protocol: typeof protocol === 'string' ? protocol : BRIDGE_PROTOCOL,
    maxMessageBytes:
      typeof maxMessageBytes === 'number' && Number.isSafeInteger(maxMessageBytes) && maxMessageBytes > 0
        ? maxMessageBytes
        : DEFAULT_MAX_MESSAGE_BYTES,
  };
}
