// Text as UTF-8 can carry it. A lone surrogate is valid in a JavaScript string but has no UTF-8
// form, so whatever stores or sends the text (SQLite, a socket, a file) writes U+FFFD in its place;
// where a hash must match what was stored, the text is made well-formed first, the same way.

interface WellFormable {
  toWellFormed(): string;
}

/** `text` with each lone surrogate replaced by U+FFFD (the same string when there is none). */
export function wellFormed(text: string): string {
  // String.prototype.toWellFormed: native in every Node this runs on (>= 20.19), not yet in ES2023's lib.
  return (text as unknown as WellFormable).toWellFormed();
}
