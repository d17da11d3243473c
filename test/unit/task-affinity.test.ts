// The task → replica map: bounded (the oldest task is forgotten first), expiring (by the task's
// own ttl, else a default), and honest about tasks whose replica went down.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskAffinity, createdTask } from '../../src/backends/task-affinity.js';

test('a task is found on its replica until its ttl, or the default, runs out', () => {
  let now = 0;
  const tasks = new TaskAffinity({ max: 10, defaultTtlMs: 1000 }, () => now);
  tasks.remember('a', 1, 100);
  tasks.remember('b', 0, null);
  assert.equal(tasks.find('a')?.replica, 1);
  now = 100;
  assert.equal(tasks.find('a'), undefined, 'expired with its own ttl');
  assert.equal(tasks.find('b')?.replica, 0);
  now = 1000;
  assert.equal(tasks.find('b'), undefined, 'expired with the default');
  assert.equal(tasks.size, 0);
});

test('past the bound the oldest task is forgotten first', () => {
  const tasks = new TaskAffinity({ max: 2, defaultTtlMs: 1000 });
  tasks.remember('a', 0, undefined);
  tasks.remember('b', 1, undefined);
  tasks.remember('c', 0, undefined);
  assert.equal(tasks.size, 2);
  assert.equal(tasks.find('a'), undefined);
  assert.equal(tasks.find('c')?.replica, 0);
});

test("a replica's tasks are marked lost when it goes down, the others' are not", () => {
  const tasks = new TaskAffinity();
  tasks.remember('a', 0, undefined);
  tasks.remember('b', 1, undefined);
  assert.equal(tasks.lose(0), 1);
  assert.equal(tasks.find('a')?.lost, true);
  assert.equal(tasks.find('b')?.lost, undefined);
  assert.equal(tasks.find(42), undefined, 'a task id that is not a string is never found');
});

test('only a CreateTaskResult creates a task', () => {
  assert.deepEqual(createdTask({ task: { taskId: 't1', ttl: 5, status: 'working' } }), {
    taskId: 't1',
    ttl: 5,
  });
  assert.deepEqual(createdTask({ resultType: 'task', taskId: 't2', ttlMs: 9 }), { taskId: 't2', ttl: 9 });
  assert.equal(createdTask({ content: [] }), undefined);
  assert.equal(createdTask({ task: { status: 'working' } }), undefined);
});
