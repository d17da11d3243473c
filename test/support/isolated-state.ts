// Each test file's own state directory. The suite runs files two at a time under one
// XDG_STATE_HOME (the test script's), and a switchboard started without audit.path or state.path
// uses the default files there: two files' switchboards opening one audit database at once (its
// schema, its pins, its retention) could wait past its busy timeout and fail to start with
// "database is locked". A directory per test process keeps each file's switchboards, and the
// processes they spawn (which inherit it), to their own.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';

const shared = process.env.XDG_STATE_HOME;
if (shared) process.env.XDG_STATE_HOME = mkdtempSync(join(shared, 'file-'));
