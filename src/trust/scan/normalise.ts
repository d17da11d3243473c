// Text as a model reads it: the scanner matches on this form, so an instruction split by
// zero-width characters, spelled with Cyrillic look-alikes or full-width letters, escaped as HTML
// entities, or smuggled in invisible tag characters reads the same as its plain spelling.

/** Zero-width characters, bidirectional controls, tag characters and variation selectors, as code point ranges. */
const INVISIBLE_RANGES: readonly (readonly [number, number])[] = [
  [0xad, 0xad],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x2069],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xe0000, 0xe007f],
  [0xe0100, 0xe01ef],
];

export function isInvisible(c: string): boolean {
  const cp = c.codePointAt(0)!;
  return INVISIBLE_RANGES.some(([from, to]) => cp >= from && cp <= to);
}

/** Control characters other than tab and line breaks: they carry nothing a reader sees. */
function isControl(c: string): boolean {
  const cp = c.codePointAt(0)!;
  return (cp < 0x20 && c !== '\n' && c !== '\t' && c !== '\r') || (cp >= 0x7f && cp <= 0x9f);
}

/** Letters from other scripts that look like Latin ones, mapped to the letter they imitate. */
export const CONFUSABLE: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ɡ: 'g',
  һ: 'h',
  ӏ: 'l',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  ο: 'o',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
};

const ENTITIES: Readonly<Record<string, string>> = {
  lt: '<',
  gt: '>',
  amp: '&',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  sol: '/',
  tilde: '~',
  period: '.',
};

/** The first invisible character of a text, if any (emoji joiners and presentation selectors aside). */
export function invisibleIn(text: string): string | undefined {
  let index = 0;
  for (const c of text) {
    const at = index;
    index += c.length;
    if (!isInvisible(c)) continue;
    const cp = c.codePointAt(0)!;
    const around = text.slice(Math.max(0, at - 2), at + 3);
    // A joiner or selector inside an emoji sequence, or tags completing a flag, are how emoji work.
    if ((cp === 0x200d || cp === 0xfe0f || cp === 0xfe0e) && /\p{Extended_Pictographic}/u.test(around))
      continue;
    if (cp >= 0xe0020 && cp <= 0xe007f && /\u{1F3F4}/u.test(text.slice(Math.max(0, at - 40), at))) continue;
    return c;
  }
  return undefined;
}

/**
 * What invisible characters spell: tag characters mirror ASCII, and variation selectors can carry
 * one byte each. A payload hidden that way is decoded so the rules read it like any other text.
 */
export function hiddenPayload(text: string): string {
  let tags = '';
  const bytes: number[] = [];
  for (const c of text) {
    const cp = c.codePointAt(0)!;
    if (cp >= 0xe0020 && cp <= 0xe007e) tags += String.fromCharCode(cp - 0xe0000);
    else if (cp >= 0xfe00 && cp <= 0xfe0f) bytes.push(cp - 0xfe00);
    else if (cp >= 0xe0100 && cp <= 0xe01ef) bytes.push(cp - 0xe0100 + 16);
  }
  const selectors = bytes.length >= 4 ? Buffer.from(bytes).toString('utf8') : '';
  return [tags, /^[\x20-\x7E]+$/.test(selectors) ? selectors : ''].filter(Boolean).join('\n');
}

/** Base64 runs that decode to readable text (an instruction a reviewer cannot read at a glance). */
export function decodedBase64(text: string): string[] {
  const found: string[] = [];
  for (const [run] of text.matchAll(/[A-Za-z0-9+/]{24,}={0,2}/g)) {
    const decoded = Buffer.from(run, 'base64').toString('utf8');
    // A word is tried from its first letter only: tried from each, a run of letters with no space
    // after it is read again from every one of them, in time growing with its square.
    if (/^[\x20-\x7E\n\t]{12,}$/.test(decoded) && /(?<![a-z])[a-z]{3,} [a-z~./]{2,}/i.test(decoded))
      found.push(decoded);
  }
  return found;
}

/** Words spelled out letter by letter ("r e a d   t h e") joined back into words. */
function joinSpacedLetters(text: string): string {
  return text.replace(/(?:\b\p{L}\b[ ]){3,}\b\p{L}\b/gu, (run) =>
    run
      .split(/ {2,}/)
      .map((word) => word.replace(/ /g, ''))
      .join(' '),
  );
}

/**
 * The matching form: entities decoded, NFKC, invisible and control characters removed, look-alike
 * letters folded to ASCII, letter-by-letter spelling joined, whitespace collapsed, lowercased.
 */
export function normalise(text: string): string {
  const decoded = text
    .replace(/&#x([0-9a-f]{1,6});/gi, (_, hex: string) => safeChar(parseInt(hex, 16)))
    .replace(/&#(\d{1,7});/g, (_, dec: string) => safeChar(parseInt(dec, 10)))
    .replace(/&([a-z]+);/gi, (whole, name: string) =>
      Object.hasOwn(ENTITIES, name.toLowerCase()) ? ENTITIES[name.toLowerCase()]! : whole,
    );
  const visible = [...decoded.normalize('NFKC')]
    .filter((c) => !isInvisible(c) && !isControl(c))
    .map((c) => CONFUSABLE[c] ?? c)
    .join('');
  return (
    joinSpacedLetters(visible)
      // Each run read once: whitespace but newlines to one space, then each newline with the spaces
      // and newlines around it to one newline (a pattern like \s*\n\s* is tried from every
      // character of a long run of \r or U+2028, in time growing with its square).
      .replace(/[^\S\n]+/g, ' ')
      .replace(/ ?\n[ \n]*/g, '\n')
      .toLowerCase()
  );
}

function safeChar(cp: number): string {
  return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
}
