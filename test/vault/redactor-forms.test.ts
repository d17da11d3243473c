// The redactor's reach: object keys as well as values, a secret's bytes in base64 and base64url
// wherever they sit in the encoded input, in hex of either case and URL-encoded, and bridge
// tokens as they come and go.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { BRIDGE_TOKEN_NAME, Redactor } from '../../src/vault/redactor.js';

const only = (name: string, secret: string) =>
  new Redactor({ secrets: [{ name, forms: [secret] }], patterns: [] });

test('keys are redacted like values, in place, and a key named __proto__ stays an own key', () => {
  const r = only('s', 'secret-value');
  const shared = { untouched: true };
  const value = JSON.parse(
    '{"a":1,"secret-value":{"x":"secret-value"},"__proto__":{"secret-value":2},"z":{"untouched":true}}',
  ) as Record<string, unknown>;
  value.z = shared;
  const out = r.deep(value);
  assert.deepEqual(Object.keys(out), ['a', '[REDACTED:s]', '__proto__', 'z']);
  assert.deepEqual(out['[REDACTED:s]'], { x: '[REDACTED:s]' });
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { '[REDACTED:s]': 2 });
  assert.equal(out.z, shared, 'what needs no change is shared');
  assert.ok(Object.keys(value).includes('secret-value'), 'the input is not mutated');
});

test('base64 and base64url of a secret are found at every byte alignment, whatever surrounds it', () => {
  for (let length = 4; length <= 24; length++) {
    const secret = randomBytes(length)
      .toString('latin1')
      .replace(/[^\x20-\x7e]/g, 'q');
    const r = only('s', secret);
    for (let before = 0; before <= 4; before++) {
      for (let after = 0; after <= 3; after++) {
        const blob = Buffer.concat([randomBytes(before), Buffer.from(secret), randomBytes(after)]);
        for (const encoding of ['base64', 'base64url'] as const) {
          const encoded = blob.toString(encoding);
          const out = r.text(`<${encoded}>`);
          const at = out.indexOf('[REDACTED:s]');
          assert.ok(at > 0, `${encoding} of ${before}+${length}+${after} bytes: ${out}`);
          // Left of the secret: only characters that carry surrounding bits (at most one of its own).
          assert.ok(at - 1 <= Math.ceil((8 * before) / 6), out);
          const left = out.length - at - '[REDACTED:s]'.length - 1;
          assert.ok(left <= encoded.length - Math.floor((8 * (before + length)) / 6), out);
        }
      }
    }
  }
});

test('a periodic secret is hidden whole, whichever alignment its encoding is first seen at', () => {
  // 'qqqqq' encoded after two other bytes also reads like its encoding at another alignment,
  // starting one character early and ending one character short of the secret's last bits.
  const r = only('s', 'qqqqq');
  const blob = Buffer.from('26e17171717171', 'hex');
  assert.equal(r.text(`<${blob.toString('base64')}>`), '<Ju[REDACTED:s]Q==>');
  assert.equal(r.text(`<${blob.toString('base64url')}>`), '<Ju[REDACTED:s]Q>');
});

test('secrets whose occurrences overlap are replaced as one span, leaving no tail of either', () => {
  const r = new Redactor({
    secrets: [
      { name: 'a', forms: ['alpha-beta'] },
      { name: 'b', forms: ['beta-gamma'] },
    ],
    patterns: [],
  });
  assert.equal(r.text('x alpha-beta-gamma y'), 'x [REDACTED:a] y');
  assert.equal(r.text('x alpha-beta y beta-gamma z'), 'x [REDACTED:a] y [REDACTED:b] z');
});

test('hex in either case, URL-encoded text and the whole padded base64 are replaced', () => {
  const secret = 'p@ss word/42';
  const r = only('s', secret);
  const hex = Buffer.from(secret).toString('hex');
  assert.equal(r.text(`x${hex}y`), 'x[REDACTED:s]y');
  assert.equal(r.text(`x${hex.toUpperCase()}y`), 'x[REDACTED:s]y');
  assert.equal(r.text(`?q=${encodeURIComponent(secret)}&`), '?q=[REDACTED:s]&');
  // JSON quoted in JSON: a secret with a quote or backslash escaped twice.
  const tricky = only('t', 'pa"ss\\wo\nrd');
  const twice = JSON.stringify(JSON.stringify({ k: 'pa"ss\\wo\nrd' }));
  assert.equal(tricky.text(twice).includes('REDACTED:t'), true, tricky.text(twice));
  // In a URL's path, as URL parsing writes it (a redirect's target in an error): space encoded, @ and / not.
  assert.equal(r.text(new URL(`http://h.example/${secret}`).href), 'http://h.example/[REDACTED:s]');
  assert.equal(r.text(Buffer.from(secret).toString('base64')), '[REDACTED:s]');
});

test('a secret is hidden as each part of a URL, form encoding and lower-case escapes write it', () => {
  // Characters each encoder treats its own way: `|` and `%` kept in a path, `!'()~` and a space
  // as `+` in a form, `/`, `:`, `=` and `@` escaped in userinfo.
  for (const secret of ['pa ss|word!12', 'sec ret%41zz', "p@ss w0rd~(x)'", 'tok+en/with=chars:@']) {
    const r = only('s', secret);
    const url = (set: (u: URL) => void) => {
      const u = new URL('http://h.example/');
      set(u);
      return u.href;
    };
    const written = [
      url((u) => (u.pathname = `/${secret}`)),
      url((u) => (u.search = `?${secret}`)),
      url((u) => (u.hash = `#${secret}`)),
      url((u) => (u.password = secret)),
      `a=1&${new URLSearchParams([['k', secret]]).toString()}&z=2`,
      encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    ];
    for (const text of written) {
      const out = r.text(text);
      assert.ok(out.includes('[REDACTED:s]'), `${JSON.stringify(secret)} not hidden in ${out}`);
    }
  }
  // A path resolves dot segments: what "x1/../password" leaves there is not this secret's form.
  const dotted = only('d', 'x1/../password');
  assert.equal(dotted.text('the password field'), 'the password field');
});

test('bridge tokens are hidden while they work, and only then', () => {
  const r = only('s', 'secret-value');
  const token = randomBytes(32).toString('base64url');
  r.setTokens([token]);
  assert.equal(
    r.text(`SWITCHBOARD_BRIDGE_TOKEN=${token}`),
    `SWITCHBOARD_BRIDGE_TOKEN=[REDACTED:${BRIDGE_TOKEN_NAME}]`,
  );
  assert.equal(
    r.text(Buffer.from(`t=${token}`).toString('base64')).includes('[REDACTED:bridge-token]'),
    true,
  );
  assert.equal(r.text('secret-value'), '[REDACTED:s]', 'the vault stays hidden beside them');
  r.setTokens([]);
  assert.equal(r.text(token), token);
  const none = new Redactor();
  none.setTokens([token]);
  assert.equal(none.active, true);
  assert.deepEqual(none.deep({ [token]: token }), { '[REDACTED:bridge-token]': '[REDACTED:bridge-token]' });
});
