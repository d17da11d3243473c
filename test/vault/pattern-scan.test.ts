// Redaction patterns on the linear-time engine: what is hidden, how overlapping matches of several
// patterns are named, where non-ASCII text puts the offsets, and which patterns the config refuses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import {
  linearPattern,
  linearPatternProblem,
  matchesEmpty,
  SearchBudget,
} from '../../src/encoding/linear-pattern.js';
import { PatternScan } from '../../src/vault/pattern-scan.js';
import { Redactor } from '../../src/vault/redactor.js';

const EMAIL = '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}';

test('every match of every pattern is hidden; text without one is returned as it is', () => {
  const scan = new PatternScan(['ghp_[A-Za-z0-9]{8}', EMAIL]);
  const clean = 'nothing to see here: ghp_short, at@, x.io';
  assert.equal(scan.replace(clean), clean);
  assert.equal(
    scan.replace('a ghp_ABCDefgh and ann@corp.example, then ghp_12345678.'),
    'a [REDACTED:pattern-1] and [REDACTED:pattern-2], then [REDACTED:pattern-1].',
  );
});

test('overlapping and touching matches of several patterns are one span, named by the first to start', () => {
  // "sk-…" is a key; the same characters with "@x.io" after them are also an address.
  const scan = new PatternScan(['sk-[a-z0-9]{6}', EMAIL, 'ZZ[0-9]+']);
  assert.equal(scan.replace('see sk-abc123@x.io now'), 'see [REDACTED:pattern-1] now');
  assert.equal(scan.replace('see a.sk-abc123@x.io now'), 'see [REDACTED:pattern-2] now');
  assert.equal(scan.replace('sk-abc123ZZ42!'), '[REDACTED:pattern-1]!');
  // Pattern order decides only between matches that start at the same place.
  assert.equal(new PatternScan([EMAIL, 'sk-[a-z0-9]{6}']).replace('sk-abc123@x.io'), '[REDACTED:pattern-1]');
});

test('a pattern’s own match names a span before the alternation’s, whose context it lacks', () => {
  assert.equal(
    new PatternScan(['^tok[0-9]+', 'tok[0-9]+']).replace('tok1 tok2'),
    '[REDACTED:pattern-1] [REDACTED:pattern-2]',
  );
});

test('offsets are UTF-16 units: text before a match may hold any character', () => {
  const scan = new PatternScan([EMAIL]);
  assert.equal(
    scan.replace('héllo 😀 bob@example.com — ünï ali.ce@x.io\u2028end'),
    'héllo 😀 [REDACTED:pattern-1] — ünï [REDACTED:pattern-1]\u2028end',
  );
  // A pattern's `.` takes a whole code point, never half of a surrogate pair.
  assert.equal(new PatternScan(['key=.']).replace('key=😀!'), '[REDACTED:pattern-1]!');
});

test('patterns searched as one alternation too: a key split between two patterns is hidden whole', () => {
  // Alone, the key pattern takes the first 20 characters and the 40-character one finds no 40 in
  // what is left; as one alternation the 40 start where the key ends.
  const key = 'AKIAIOSFODNN7EXAMPLE';
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
  const scan = new PatternScan(['AKIA[0-9A-Z]{16}', '[A-Za-z0-9/+=]{40}']);
  assert.equal(scan.replace(`${key}${secret}`), '[REDACTED:pattern-1]');
  assert.equal(
    scan.replace(`id ${key} secret ${secret}.`),
    'id [REDACTED:pattern-1] secret [REDACTED:pattern-2].',
  );
});

test('a text whose search reads on past each match is hidden from where its budget ran out', () => {
  // Each header matches; the optional tail is looked for to the end of the text from every one.
  const scan = new PatternScan([
    '-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----)?',
  ]);
  const text = `intro ${'-----BEGIN RSA PRIVATE KEY-----\n'.repeat(30_000)}`;
  const out = scan.replace(text);
  assert.ok(!out.includes('BEGIN'), out.slice(0, 200));
  assert.ok(out.startsWith('intro [REDACTED:pattern-1]'));
  // With a budget of nothing, the first match is kept and the rest hidden in one span.
  // With a budget of nothing, the first match is kept and the rest hidden in one span, but only
  // where the pattern is still found in the rest.
  assert.deepEqual(linearPattern('ab').spans('ab ab ab', new SearchBudget(0, -1)), [
    [0, 2],
    [2, 8],
  ]);
  assert.deepEqual(linearPattern('ab').spans('ab then nothing', new SearchBudget(0, -1)), [[0, 2]]);
  // A key with its END is hidden whole, body included.
  const pem = 'k: -----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n';
  assert.equal(scan.replace(pem), 'k: [REDACTED:pattern-1]\n');
});

test('a pattern whose only matches are empty hides nothing and leaves the text whole', () => {
  const scan = new PatternScan(['\\b', 'x+']);
  assert.equal(scan.replace('word boundaries, xx'), 'word boundaries, [REDACTED:pattern-2]');
  assert.deepEqual(linearPattern('\\b').spans('a b'), []);
});

test('a run of a pattern’s own characters costs one pass: the match at its end is found', () => {
  // Quadratic on a backtracking engine (each start in the run scans to its end): linear here.
  const run = 'a1'.repeat(200_000);
  const scan = new PatternScan([EMAIL, '[0-9a-z]+@evil\\.example']);
  assert.equal(scan.replace(`${run}`), run);
  assert.equal(scan.replace(`${run} z@evil.example`), `${run} [REDACTED:pattern-1]`);
  assert.equal(linearPattern('[0-9a-z]+@evil\\.example').test(`${run}@evil.example`), true);
});

test('JavaScript spellings are read; lookaround and backreferences are refused with the reason', () => {
  assert.equal(new PatternScan(['caf\\u00e9=[^]{3}']).replace('un café=abc!'), 'un [REDACTED:pattern-1]!');
  assert.equal(linearPatternProblem('(?<name>a)b'), undefined);
  const refused: [string, string][] = [
    ['(?=x)a', 'lookahead'],
    ['a(?!x)', 'lookahead'],
    ['(?<=x)a', 'lookbehind'],
    ['(?<!x)a', 'lookbehind'],
    ['(a)\\1', 'a backreference'],
    ['(?<n>a)\\k<n>', 'a backreference'],
  ];
  assert.equal(
    linearPatternProblem('\\Qa/b\\E'),
    'not a linear-time (RE2) regular expression: \\Q…\\E quoting is not read (escape each character instead)',
  );
  assert.equal(linearPatternProblem('a\\\\Q'), undefined);
  for (const [source, what] of refused)
    assert.equal(
      linearPatternProblem(source),
      `not a linear-time (RE2) regular expression: ${what} cannot run in time linear in the text`,
    );
  assert.match(linearPatternProblem('([') ?? '', /missing closing \]/);
  assert.equal(matchesEmpty('a*'), true);
  assert.equal(matchesEmpty('a+'), false);
  // Quoted to the end of the pattern: no closing group can follow it, and nothing is thrown.
  assert.equal(matchesEmpty('\\Qfoo'), false);
});

test('the config names each refused pattern, and two patterns that cannot be searched together', () => {
  const refused = (yaml: string) => {
    try {
      parseConfig(yaml, 'sb.yaml', { env: {} });
    } catch (err) {
      return (err as Error).message;
    }
    assert.fail('the config was accepted');
  };
  const one = refused(`redaction:\n  patterns: ['ok-[0-9]+', '(?<!x)y', '(a)\\1', 'z*']\n`);
  assert.match(one, /sb\.yaml: redaction\.patterns\[1\]: not a linear-time \(RE2\) regular expression/);
  assert.match(one, /redaction\.patterns\[2\]: not a linear-time \(RE2\) regular expression/);
  assert.match(one, /redaction\.patterns\[3\]: a pattern that matches empty text hides nothing/);
  assert.doesNotMatch(one, /patterns\[0\]/);
  const both = refused(`redaction:\n  patterns: ['(?<k>a)', '(?<k>b)']\n`);
  assert.match(both, /sb\.yaml: redaction\.patterns: the patterns together: .*k/);
  const policy = refused(`policy:\n  rules: [{ effect: deny, when: { path: { matches: '^(?!/tmp)' } } }]\n`);
  assert.match(
    policy,
    /policy\.rules\[0\]\.when\.path\.matches: not a linear-time \(RE2\) regular expression/,
  );
});

test('the redactor applies vault secrets first, then the patterns, over keys and values', () => {
  const r = new Redactor({ secrets: [{ name: 'tok', forms: ['s3cr3t-value-x'] }], patterns: [EMAIL] });
  assert.deepEqual(r.deep({ 'ann@corp.example': 'key s3cr3t-value-x of bob@corp.example' }), {
    '[REDACTED:pattern-1]': 'key [REDACTED:tok] of [REDACTED:pattern-1]',
  });
});
