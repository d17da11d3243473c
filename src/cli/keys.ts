// `switchboard keys new|hash [--admin]`: API keys for HTTP hosts, or for operators of the admin listener. The key is printed once; the configuration
// keeps only its SHA-256, so a leaked config file does not leak a usable key.
import { BACKEND_NAME } from '../config/schema.js';
import { newApiKey, sha256Hex } from '../front/http-auth.js';
import { processIo, type CommandIo } from './io.js';

export const KEYS_USAGE = `Usage: switchboard keys <new|hash> <name> [--admin]

  new <name>     Print a fresh random API key (once: it is not stored) and the http.auth.keys entry
                 with its SHA-256 for the configuration
  hash <name>    Read an existing key from standard input and print its http.auth.keys entry
  --admin        An operator's key for the admin listener instead: the admin.keys entry. Admin
                 keys and host keys are separate sets; neither opens the other's listener.

The host sends the key as "Authorization: Bearer <key>" and is the caller key:<name>; an operator
sends it to the admin listener (or gives it to switchboard status --token) and is admin:<name>.`;

export async function runKeys(
  argv: string[],
  io: CommandIo = processIo,
  input: AsyncIterable<Buffer | string> = process.stdin,
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(KEYS_USAGE);
    return 0;
  }
  const admin = argv.includes('--admin');
  const [sub, name, ...rest] = argv.filter((a) => a !== '--admin');
  const unknown = argv.find((a) => a.startsWith('-') && a !== '--admin');
  if ((sub !== 'new' && sub !== 'hash') || !name || rest.length > 0 || unknown) {
    io.err(
      `switchboard keys: ${unknown ? `unknown option '${unknown}'` : 'expected new or hash, and a name'}\n\n${KEYS_USAGE}`,
    );
    return 2;
  }
  if (!BACKEND_NAME.test(name)) {
    io.err(`switchboard keys: invalid name "${name}": expected letters, digits, _ . - (at most 64)`);
    return 2;
  }
  let key: string;
  if (sub === 'new') {
    key = newApiKey();
  } else {
    let text = '';
    for await (const chunk of input) text += chunk.toString();
    key = text.trim();
    if (!key || /\s/.test(key)) {
      io.err('switchboard keys hash: expected one key on standard input');
      return 2;
    }
  }
  const entry = `{ name: ${name}, sha256: ${sha256Hex(key)} }`;
  if (sub === 'new') {
    io.err(`The key (shown once; give it to the ${admin ? 'operator' : 'host'}, it is not stored anywhere):`);
    io.out(key);
  }
  if (admin) {
    io.err(`Add to the configuration (the operator is admin:${name}):`);
    io.out(`admin:\n  keys:\n    - ${entry}`);
  } else {
    io.err(`Add to the configuration (the caller is key:${name}):`);
    io.out(`http:\n  auth:\n    keys:\n      - ${entry}`);
  }
  return 0;
}
