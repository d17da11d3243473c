// What the push-notification tests share: push configs, a SendMessage that registers one, a
// switchboard agent with two API keys (alice, bob) and push notifications to a given allow list.
import assert from 'node:assert/strict';
import type test from 'node:test';
import { TaskState, type SendMessageRequest, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { dataPart, messageOf } from '../../src/a2a/parts.js';
import { probe } from '../gateway/harness.js';
import { captureLog } from '../support/log-capture.js';
import { startGateway } from '../support/start-switchboard.js';
import { agentClient, asTask, skillCall, type Binding } from './agent-clients.js';

export const BINDINGS: Binding[] = ['JSONRPC', 'HTTP+JSON'];

export const pushConfig = (
  url: string,
  more: Partial<TaskPushNotificationConfig> = {},
): TaskPushNotificationConfig => ({
  tenant: '',
  id: '',
  taskId: '',
  url,
  token: '',
  authentication: undefined,
  ...more,
});

/** A SendMessage calling `skill` that registers `config` for its task. */
export const withPush = (
  skill: string,
  args: Record<string, unknown>,
  config: TaskPushNotificationConfig,
): SendMessageRequest => ({
  ...skillCall(skill, args),
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: config,
    historyLength: undefined,
    returnImmediately: false,
  },
});

/** Switchboard with two API keys (alice, bob) and push notifications to `allow`. */
export async function agents(t: test.TestContext, allow: string[], path?: string, log = captureLog('debug')) {
  const alice = newApiKey();
  const bob = newApiKey();
  const sb = await startGateway(
    t,
    {
      servers: { p: probe('p') },
      http: {
        auth: {
          keys: [
            { name: 'alice', sha256: sha256Hex(alice) },
            { name: 'bob', sha256: sha256Hex(bob) },
          ],
        },
      },
      a2a: {
        serve: {
          enabled: true,
          ...(path && { tasks: { path } }),
          pushNotifications: { enabled: true, allow },
        },
      },
    },
    { log: log.logger },
  );
  const origin = new URL(sb.http!.url).origin;
  return {
    origin,
    log,
    alice,
    client: (binding: Binding, key: 'alice' | 'bob' = 'alice') =>
      agentClient(origin, binding, key === 'alice' ? alice : bob),
  };
}

/** A task of `client`'s waiting on a question (input-required): it goes on once answered. */
export async function waitingTask(client: Client): Promise<Task> {
  const task = asTask(await client.sendMessage(skillCall('elicit', { message: 'Which colour?' })));
  assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

export const answer = (task: Task): SendMessageRequest => ({
  tenant: '',
  message: messageOf('user', [dataPart({ action: 'accept', content: { answer: 'red' } })], {
    taskId: task.id,
    contextId: task.contextId,
  }),
  configuration: undefined,
  metadata: undefined,
});
