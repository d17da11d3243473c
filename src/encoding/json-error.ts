// What a JSON parse error may say of the text it failed on: where, never what. V8's messages quote
// up to ten characters either side of the fault ("Unexpected token 'Z', ..."k":Zq9canaryS"..."):
// the piece of a secret such a quote cuts matches no redaction needle, so it would pass the
// redactor into an error answer or a log line. Peers' bytes are parsed with this in between.

/** A SyntaxError saying where the text stopped being JSON, without quoting any of it. */
export function blindJsonError(err: unknown): SyntaxError {
  const message = err instanceof Error ? err.message : String(err);
  const at = /at position (\d+)/.exec(message);
  if (at) return new SyntaxError(`not valid JSON (at position ${at[1]})`);
  if (/end of JSON input/i.test(message)) return new SyntaxError('not valid JSON (it ends too soon)');
  return new SyntaxError('not valid JSON');
}
