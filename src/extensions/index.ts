// The extensions built into switchboard, set up in this order at start.
import type { Extension } from './extension.js';
import { vaultExtension } from './vault.js';
import { contextExtension } from './context.js';
import { eventsExtension } from './events.js';

export const builtInExtensions: readonly Extension[] = [vaultExtension, contextExtension, eventsExtension];

/** The built-in handlers only backends may call (what `validate` and `policy test` know of them). */
export const backendOnlyHandlers: readonly string[] = builtInExtensions.flatMap((e) => e.backendOnly ?? []);
