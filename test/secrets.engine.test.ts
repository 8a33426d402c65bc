/**
 * The redaction engine on the corpus (test/secrets/corpus.ts): no secret survives, what
 * identifies it stays, benign look-alikes come back byte-identical, redacting twice changes
 * nothing; each rule's documented example behaves as documented; modes, allowlist, `<private>`.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RULE_DOCS, RULE_IDS, redact, redactJson, redactJsonValue, redactionMemo, type RedactionPolicy } from '../skills/bazinga-db/scripts/lib/redact.ts';
import { redactPrinted } from '../skills/context-assembler/scripts/lib/print.ts';
import { ruleTable } from '../scripts/redaction-rules.ts';
import { BENIGN_CASES, SECRET_CASES } from './secrets/corpus.ts';
import { REPO_ROOT } from './helpers.ts';

const BOTH: RedactionPolicy = { mode: 'both', allowlist: [] };
const PATTERNS: RedactionPolicy = { mode: 'pattern_only', allowlist: [] };

describe('corpus size', () => {
  it('holds at least 120 secret formats and 80 benign look-alikes', () => {
    expect(SECRET_CASES.length).toBeGreaterThanOrEqual(120);
    expect(BENIGN_CASES.length).toBeGreaterThanOrEqual(80);
    expect(new Set(SECRET_CASES.map((c) => c.family)).size).toBeGreaterThanOrEqual(25);
  });
});

describe('every secret is removed, what identifies it is kept', () => {
  it.each(SECRET_CASES.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const r = redact(c.text, BOTH);
    for (const secret of c.secrets) expect(r.text, `leaked ${secret}`).not.toContain(secret);
    for (const keep of c.keeps ?? []) expect(r.text, `lost ${keep}`).toContain(keep);
    expect(r.redacted).toBe(true);
    expect(r.text).toMatch(/\[REDACTED:[a-z0-9_]+\]/);
    expect(redact(r.text, BOTH).text).toBe(r.text);
  });
});

describe("the product's own messages are never redacted into nonsense", () => {
  // A path that ends in a key word, then the message (was: `--params-file /tmp/password: [REDACTED:password] valid JSON`).
  it.each([
    '--params-file /tmp/password: not valid JSON at line 1, column 1',
    '--content-file /srv/app/token: is a FIFO, not a regular file',
    '--content-file /home/u/secret: lies outside the project root and the temp folder',
    '--params-file /tmp/passwd: holds more than 1000000 bytes, over the cap of 1000000 bytes',
    '--params-file /tmp/api_key: does not exist',
  ])('%s', (text) => {
    expect(redact(text, BOTH).text).toBe(text);
  });
});

describe('benign look-alikes come back byte-identical', () => {
  it.each(BENIGN_CASES.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    for (const policy of [BOTH, PATTERNS]) {
      const r = redact(c.text, policy);
      expect(r.text).toBe(c.text);
      expect(r.hits).toEqual({});
    }
  });
});

describe('printed documents', () => {
  it('a JSON document is redacted value by value and stays valid JSON in the same layout', () => {
    for (const c of SECRET_CASES) {
      const doc = JSON.stringify({ task: c.text, nested: [{ summary: c.text }] }, null, 2) + '\n';
      const printed = redactPrinted(doc, BOTH);
      const parsed = JSON.parse(printed) as { task: string };
      for (const secret of c.secrets) expect(printed).not.toContain(secret);
      expect(printed.endsWith('}\n')).toBe(true);
      expect(parsed.task).toBe(redact(c.text, BOTH).text);
    }
  });

  it('plain text is redacted as a whole', () => {
    const all = SECRET_CASES.map((c) => c.text).join('\n\n');
    const printed = redactPrinted(all, BOTH);
    for (const c of SECRET_CASES) for (const secret of c.secrets) expect(printed).not.toContain(secret);
  });

  it('a value under a secret key is redacted in JSON even when the string alone would not be', () => {
    expect(redactJson({ password: 'hunter2', note: 'hunter2' }).value).toEqual({ password: '[REDACTED:password]', note: 'hunter2' });
    expect(redactJson({ password: '${DB_PASSWORD}', secrets: 'inherit' }).value).toEqual({ password: '${DB_PASSWORD}', secrets: 'inherit' });
  });
});

describe('rules', () => {
  it('every rule the engine names has a documented example', () => {
    expect(RULE_DOCS.map((d) => d.id).sort()).toEqual([...RULE_IDS].sort());
  });

  it.each(RULE_DOCS.map((d) => [d.id, d] as const))('%s removes its example and keeps its look-alike', (id, doc) => {
    const removed = redact(doc.example.removes, BOTH);
    expect(removed.text).toContain(`[REDACTED:${id}]`);
    expect(removed.hits[id]).toBeGreaterThan(0);
    expect(redact(doc.example.keeps, BOTH).text).toBe(doc.example.keeps);
  });

  it('references/redaction.md lists every rule, as generated from the rule table', () => {
    const md = fs.readFileSync(path.join(REPO_ROOT, 'references', 'redaction.md'), 'utf8');
    expect(md).toContain(ruleTable());
  });
});

describe('code and tool output around secret-named keys stay as written', () => {
  it.each([
    'if (password == null) return;',
    'if (token === undefined || secret !== expected) throw err;',
    'at validate (src/auth/password.ts:12:5)',
    'src/auth/password.ts:12:5 - error TS2322',
    'pass: 12 fail: 0',
    '"password": {"type": "string", "minLength": 12}',
    'password: { type: String, required: true }',
    'password: user.password',
    'UPDATE users SET password = ? WHERE id = ?',
    'environment: password: ${DB_PASSWORD:-changeme}',
    'Action: secretsmanager:GetSecretValue',
    'private_ip: 10.0.0.12 and private_repo: acme/shop',
    'DB_PASSWORD=[REDACTED:password]\nREADME.md',
    'Cookie: theme=darkmode; lang=en',
  ])('%s', (text) => {
    expect(redact(text).text).toBe(text);
  });

  it('a token used as the user of a URL leaves one whole marker', () => {
    expect(redact('git clone https://ghp_Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7Iy4T@github.com/acme/shop').text).toBe(
      'git clone https://[REDACTED:github_token]@github.com/acme/shop',
    );
  });
});

describe('markers, modes, allowlist, private blocks', () => {
  it('the marker keeps the key and names the rule, the same on every run', () => {
    const text = 'password = "correct-horse-battery-9" and eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXZhbHVl';
    const once = redact(text).text;
    expect(once).toBe('password = "[REDACTED:password]" and [REDACTED:jwt]');
    expect(redact(text).text).toBe(once);
  });

  it('a key word repeated before its value does not hide the value', () => {
    expect(redact('password: password = "correct-horse-battery-9"').text).toBe('password: password = "[REDACTED:password]"');
  });

  it('the redacted flag is true when a rule fired on a value already removed (the original meaning)', () => {
    expect(redact('password=REDACTED')).toEqual({ text: 'password=REDACTED', redacted: true, hits: {} });
    expect(redact('nothing here').redacted).toBe(false);
  });

  it('pattern_only skips the entropy check; entropy skips the patterns', () => {
    const random = 'use Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG for the webhook';
    expect(redact(random, PATTERNS).text).toBe(random);
    expect(redact(random, { mode: 'entropy', allowlist: [] }).text).toBe('use [REDACTED:high_entropy] for the webhook');
    expect(redact('password=hunter2', { mode: 'entropy', allowlist: [] }).text).toBe('password=hunter2');
  });

  it('an allowlisted match is kept as written, everything else on the line is still redacted', () => {
    const text = 'fixture key AKIAZ7Q4RW2LMX8NC5TB and password=hunter2';
    expect(redact(text, { mode: 'both', allowlist: [/AKIAZ7Q4RW2LMX8NC5TB/g] }).text).toBe('fixture key AKIAZ7Q4RW2LMX8NC5TB and password=[REDACTED:password]');
  });

  it('<private> blocks are removed whole, unterminated ones to the end, whatever the allowlist says', () => {
    expect(redact('keep <private>my notes, hunter2</private> this').text).toBe('keep [REDACTED:private] this');
    expect(redact('a <PRIVATE>x</Private> b <private>y').text).toBe('a [REDACTED:private] b [REDACTED:private]');
    expect(redact('<private>allowed</private>', { mode: 'both', allowlist: [/allowed/g] }).text).toBe('[REDACTED:private]');
  });

  it('a private key block without its END line is cut to the end of the text', () => {
    expect(redact('key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAv3Xy9Zk2\nmore').text).toBe('key:\n[REDACTED:private_key]');
  });
});

describe('idempotence, and the memo that relies on it', () => {
  const texts = [...SECRET_CASES, ...BENIGN_CASES].map((c) => c.text);
  const SEPARATORS = [' ', '\n', '=', ':', '"', "'", '@', '/', '', '\t', '|', '-', '.', ',', ';', '&', '?'];
  // Pieces of corpus texts cut anywhere and glued with the characters rules key on.
  const glued = fc
    .array(fc.tuple(fc.nat(texts.length - 1), fc.nat(400), fc.nat(160), fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 4 })
    .map((parts) => parts.map(([i, at, len, sep]) => { const t = texts[i] as string; const a = at % t.length; return t.slice(a, a + 1 + len) + sep; }).join(''));

  it('on the corpus, redacting the output again changes nothing, for cut and glued texts under every mode', () => {
    fc.assert(
      fc.property(glued, fc.constantFrom<RedactionPolicy>(BOTH, PATTERNS, { mode: 'entropy', allowlist: [] }), (text, policy) => {
        const once = redact(text, policy).text;
        expect(redact(once, policy).text).toBe(once);
      }),
      { numRuns: 3000, seed: 11 },
    );
  });

  it('the memo gives what redact gives, for a text, for its output, and past its size bound', () => {
    for (const maxChars of [4_000_000, 300]) {
      const memo = redactionMemo(maxChars);
      for (const c of SECRET_CASES) {
        const expected = redact(c.text, BOTH).text;
        expect(memo(c.text, BOTH)).toBe(expected);
        expect(memo(c.text, BOTH)).toBe(expected);
        expect(memo(expected, BOTH)).toBe(expected);
        // Per policy: pattern_only's result is its own.
        expect(memo(c.text, PATTERNS)).toBe(redact(c.text, PATTERNS).text);
      }
    }
  });

  it('a text whose second pass changes it (a marker exposing what follows) is redacted again at the door, as without the memo', () => {
    const text = 'curl -u Zq8vL2mX9pR4tY7wK1nB6cF3hJ5sD0gA%3Ahunter2 https://api.example.com';
    const once = redact(text, BOTH).text;
    const twice = redact(once, BOTH).text;
    expect(twice).not.toBe(once);
    expect(twice).not.toContain('hunter2');
    const memo = redactionMemo();
    expect(memo(text, BOTH)).toBe(once);
    expect(memo(once, BOTH)).toBe(twice);
  });

  it('an allowlist that reads context redaction changed: the door redacts again, as without the memo', () => {
    const policy: RedactionPolicy = { mode: 'both', allowlist: [/api_key=\w+(?= and \w{20})/g] };
    const text = 'api_key=hunter2secretvalue and AKIAZ7Q4RW2LMX8NC5TB';
    const once = redact(text, policy).text;
    expect(once).toBe('api_key=hunter2secretvalue and [REDACTED:aws_access_key_id]');
    expect(redact(once, policy).text).toBe('api_key=[REDACTED:api_key] and [REDACTED:aws_access_key_id]');
    const memo = redactionMemo();
    expect(memo(text, policy)).toBe(once);
    expect(memo(once, policy)).toBe(redact(once, policy).text);
  });

  it('a printed JSON document redacted through the memo equals redactJson, the secret-key rule included', () => {
    const doc = { note: SECRET_CASES[0]?.text, password: 'hunter2', items: SECRET_CASES.slice(1, 20).map((c) => ({ summary: c.text })), clean: BENIGN_CASES.slice(0, 10).map((c) => c.text) };
    const memo = redactionMemo();
    expect(redactJsonValue(doc, BOTH, memo)).toEqual(redactJson(doc, BOTH).value);
    // Again, now from memory (the texts and their outputs are known).
    expect(redactJsonValue(redactJson(doc, BOTH).value, BOTH, memo)).toEqual(redactJson(doc, BOTH).value);
  });
});
