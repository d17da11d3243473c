// BENCH_PATH's reading of perf's system call trace: each write paired with the read before it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { heldTimes } from '../../bench/lib/path-time.js';

// As `perf script -F time,event,trace` prints raw_syscalls of a stdio process in the middle: a
// request read on fd 0 and written to the backend (fd 0x20), its answer read on fd 0x22 and
// written to fd 1, with epoll_pwait (281) between, a read that found nothing, and a writev (20).
const TRACE = `
 8403.070816:  raw_syscalls:sys_exit: NR 281 = 1
 8403.070834: raw_syscalls:sys_enter: NR 0 (0, 1de95d90, 10000, 1db626b0, 0, 1db62680)
 8403.070838:  raw_syscalls:sys_exit: NR 0 = 104
 8403.070873: raw_syscalls:sys_enter: NR 0 (0, 1de95d90, 10000, 1db626b0, 0, 1db62680)
 8403.070875:  raw_syscalls:sys_exit: NR 0 = -11
 8403.070953: raw_syscalls:sys_enter: NR 1 (20, 7ffc311acf40, b3, 219, 0, 0)
 8403.071005:  raw_syscalls:sys_exit: NR 1 = 179
 8403.071019: raw_syscalls:sys_enter: NR 281 (d, 7ffc311ae740, 400, 3, 0, 8)
 8403.071245:  raw_syscalls:sys_exit: NR 281 = 1
 8403.071353: raw_syscalls:sys_enter: NR 0 (22, 1de95d90, 10000, 1db626b0, 0, 1db62680)
 8403.071360:  raw_syscalls:sys_exit: NR 0 = 82
 8403.071495: raw_syscalls:sys_enter: NR 20 (1, 7ffc311acf40, 2, f6, 0, 0)
 8403.071507:  raw_syscalls:sys_exit: NR 20 = 82
 8403.071530: raw_syscalls:sys_enter: NR 1 (1, 7ffc311ae740, 52, 2, 0, 8)
 8403.071540:  raw_syscalls:sys_exit: NR 1 = 82
`;

test('a write is paired with the read before it that took bytes; fd 0 makes a request, any other a response', () => {
  const { request, response } = heldTimes(TRACE);
  assert.equal(request.count, 1);
  assert.equal(Math.round(request.p50Us), 115, 'from the read that took 104 bytes, not the empty one');
  assert.equal(response.count, 1, 'the second write follows no new read: not a message of its own');
  assert.equal(Math.round(response.p50Us), 135);
});

test('a trace with no messages gives counts of zero, not figures', () => {
  const { request } = heldTimes('');
  assert.equal(request.count, 0);
  assert.ok(Number.isNaN(request.p50Us));
});

test("a message's write is timed, and the time after it runs to the next wait that may sleep", () => {
  // The response's writev ends at .071507; libuv then polls with a timeout of 0 (callbacks still
  // queued, not a wait) and only at .071580 waits with a timeout of 0xa.
  const trace = `${TRACE}
 8403.071550: raw_syscalls:sys_enter: NR 281 (d, 7ffc311ae740, 400, 0, 0, 8)
 8403.071552:  raw_syscalls:sys_exit: NR 281 = 0
 8403.071580: raw_syscalls:sys_enter: NR 281 (d, 7ffc311ae740, 400, a, 0, 8)
`;
  const { request, response } = heldTimes(trace);
  assert.equal(Math.round(request.write.p50Us), 52, 'the write to the backend, enter to exit');
  assert.equal(Math.round(request.after.p50Us), 14, 'from its return to the epoll_pwait at .071019');
  assert.equal(Math.round(response.write.p50Us), 12, 'the writev, not the unpaired write after it');
  assert.equal(Math.round(response.after.p50Us), 73, 'the poll with a timeout of 0 is not a wait');
});

test('a write with no wait after it in the trace has no time after', () => {
  const { response } = heldTimes(TRACE);
  assert.equal(response.write.count, 1);
  assert.equal(response.after.count, 0);
});
