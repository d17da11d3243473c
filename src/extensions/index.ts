// The extensions built into switchboard, set up in this order at start.
import type { Extension } from './extension.js';
import { vaultExtension } from './vault.js';

export const builtInExtensions: readonly Extension[] = [vaultExtension];
