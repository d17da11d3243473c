// The strings redaction looks for, derived once from each secret: its text as written, as a JSON
// string writes it, as URL encoders and URL parsing write it, and its bytes in hex (either case)
// and in base64 and base64url. An encoder that starts the secret at byte 1 or 2 of its input writes different
// characters than one that starts it at byte 0, and whatever follows the secret changes the last
// character or two, so for each alignment the needle is the run of characters that the secret's
// bytes alone determine: found whatever surrounds the secret in the encoded input.

/** A named value redaction must hide, in every form it could take. */
export interface SecretForms {
  readonly name: string;
  /** Texts hidden as they are (and as JSON and URL components write them). */
  readonly forms: readonly string[];
  /** Byte strings hidden in their encodings; default: the UTF-8 bytes of each of `forms`. */
  readonly bytes?: readonly Buffer[] | undefined;
}

/** Forms shorter than this are not redacted: they would rewrite unrelated text everywhere. */
export const MIN_REDACTED_LENGTH = 4;

/** Every needle of each secret, mapped to the name its occurrences are replaced with. */
export function needlesOf(secrets: readonly SecretForms[]): Map<string, string> {
  const needles = new Map<string, string>();
  const add = (needle: string, name: string) => {
    if (needle.length >= MIN_REDACTED_LENGTH && !needles.has(needle)) needles.set(needle, name);
  };
  for (const { name, forms, bytes } of secrets) {
    for (const form of forms) {
      if (form.length < MIN_REDACTED_LENGTH) continue;
      add(form, name);
      // As a JSON string writes it (log lines, stored definitions), as a URL component does, and
      // as a whole URL (a path, a redirect's target as URL parsing writes it) does.
      const json = JSON.stringify(form).slice(1, -1);
      add(json, name);
      // ... and as JSON quoted in JSON writes it (a structured log line in a log line, arguments
      // quoted in a prompt): a secret with a quote, a backslash or a newline reads otherwise there.
      add(JSON.stringify(json).slice(1, -1), name);
      for (const encoded of urlForms(form)) add(encoded, name);
    }
    for (const b of bytes ??
      forms.filter((f) => f.length >= MIN_REDACTED_LENGTH).map((f) => Buffer.from(f))) {
      for (const needle of encodedNeedles(b)) add(needle, name);
    }
  }
  return needles;
}

/**
 * The text as percent-encoders write it: encodeURIComponent and encodeURI, URL parsing in each part
 * of a URL (each leaves other characters as they are: a path keeps `|` and `%`, a query `'` in some
 * schemes, userinfo escapes `/`, `:`, `=`, `@`), form encoding (a space as `+`), and each of these
 * with its escapes in lower-case hex, as some encoders write them.
 */
function urlForms(form: string): Set<string> {
  const forms = new Set([encodeURIComponent(form), encodeURI(form)]);
  const url = new URL('http://host/');
  const parts: [(u: URL) => void, (u: URL) => string][] = [
    [(u) => (u.pathname = `/${form}`), (u) => u.pathname.slice(1)],
    [(u) => (u.search = `?${form}`), (u) => u.search.slice(1)],
    [(u) => (u.hash = `#${form}`), (u) => u.hash.slice(1)],
    [(u) => (u.password = form), (u) => u.password],
  ];
  for (const [set, get] of parts) {
    set(url);
    // A path also resolves dot segments: what "a/../word" leaves ("word") is some other text, not
    // this secret's form. Percent-encoding only lengthens a text; removing segments shortens it.
    const written = get(url);
    if (written.length >= form.length) forms.add(written);
  }
  forms.add(new URLSearchParams([['k', form]]).toString().slice(2));
  for (const f of [...forms]) forms.add(f.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
  return forms;
}

/** Hex in both cases, whole base64 and base64url, and the aligned runs of each. */
export function encodedNeedles(bytes: Buffer): string[] {
  const hex = bytes.toString('hex');
  const out = [hex, hex.toUpperCase(), bytes.toString('base64'), bytes.toString('base64url')];
  for (const offset of [0, 1, 2]) {
    // What precedes the secret only decides the characters before `first`; its value is moot.
    const shifted = Buffer.concat([Buffer.alloc(offset), bytes]);
    // Character j encodes bits [6j, 6j+6); the secret's bits are [8·offset, 8·length).
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * shifted.length) / 6);
    if (end - first < MIN_REDACTED_LENGTH) continue;
    out.push(shifted.toString('base64').slice(first, end), shifted.toString('base64url').slice(first, end));
  }
  return out;
}

/** Lines of a secret shorter than this are not looked for on their own (`}`, a blank line). */
export const MIN_LINE_LENGTH = 8;

/**
 * Each line of each secret written over several lines (a PEM key, a credentials file), as it is
 * and as a JSON string writes it: text read a line at a time (a backend's stderr) never holds such
 * a secret whole, only its lines.
 */
export function lineNeedlesOf(secrets: readonly SecretForms[]): Map<string, string> {
  const needles = new Map<string, string>();
  for (const { name, forms } of secrets)
    for (const form of forms) {
      if (!/[\r\n]/.test(form)) continue;
      for (const line of form.split(/\r?\n|\r/)) {
        const text = line.trim();
        if (text.length < MIN_LINE_LENGTH) continue;
        for (const needle of [text, JSON.stringify(text).slice(1, -1)])
          if (!needles.has(needle)) needles.set(needle, name);
      }
    }
  return needles;
}
