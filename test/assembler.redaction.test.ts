/**
 * The redaction engine (spec/assembler.md §5) as the assembler runs it at emit. A table of secret formats that
 * must not survive (key names kept for key=value forms), a table of benign look-alikes that must
 * come back byte-identical, the three modes, and the allowlist.
 */
import { describe, expect, it } from 'vitest';
import { redact, shannonEntropy, type RedactionMode, type RedactionPolicy } from '../skills/bazinga-db/scripts/lib/redact.ts';

/** Text and number of replacements, the shape these tables were written against. */
const redactForOutput = (text: string, policy: RedactionPolicy) => {
  const r = redact(text, policy);
  return { text: r.text, count: Object.values(r.hits).reduce((a, b) => a + b, 0) };
};

const both = (text: string) => redactForOutput(text, { mode: 'both', allowlist: [] });
const PEM_BODY = 'MIIEowIBAAKCAQEAv3Xy9Zk2mQd8Lr4Tn6Wc1Hs0Pf7Ja5Gb2Ke9Uo3Ri8Ny4Mx\nq7Vt2Bw5Cz1Dn6Em0Fo3Gp8Hq4Ir9Js2Kt7Lu1Mv6Nw0Ox5Py3Qz8Ra2Sb7Tc4Ud\n';

interface SecretRow {
  name: string;
  /** The text as it would appear in a summary or reasoning entry. */
  text: string;
  /** What must not survive. */
  secret: string;
  /** What must survive (the key name, for key=value forms). */
  keep?: string;
}

// Realistic-looking values; none is a live credential.
const SECRETS: SecretRow[] = [
  // ------------------------------------------------------------------ passwords / secrets in assignments
  { name: 'env password', text: 'DB_PASSWORD=s3cr3tP@ssw0rd!', secret: 's3cr3tP@ssw0rd!', keep: 'DB_PASSWORD' },
  { name: 'env secret, export', text: 'export CLIENT_SECRET=9aF3kLm2Qx7Zp0Rt', secret: '9aF3kLm2Qx7Zp0Rt', keep: 'CLIENT_SECRET' },
  { name: 'YAML key: value', text: 'database:\n  password: hunter2hunter2\n  user: app', secret: 'hunter2hunter2', keep: 'password' },
  { name: 'JSON "key": "value"', text: '{"user": "app", "password": "Tr0ub4dor&3"}', secret: 'Tr0ub4dor&3', keep: '"password"' },
  { name: 'quoted with spaces', text: 'secret = "correct horse battery staple"', secret: 'correct horse battery staple', keep: 'secret' },
  { name: 'single-quoted with spaces', text: "admin_passwd: 'my very long pass phrase'", secret: 'my very long pass phrase', keep: 'admin_passwd' },
  { name: 'pwd short form', text: 'mysql pwd=Xk29!aa then connect', secret: 'Xk29!aa', keep: 'pwd' },
  { name: 'CLI flag with =', text: 'run psql --password=Qz8pLm4Nv2 --host db', secret: 'Qz8pLm4Nv2', keep: '--password' },
  { name: 'passphrase', text: 'SSH_KEY_PASSPHRASE="open sesame 42"', secret: 'open sesame 42', keep: 'SSH_KEY_PASSPHRASE' },
  { name: 'arrow assignment', text: "'password' => 'l0ngP4ssword'", secret: 'l0ngP4ssword', keep: "'password'" },
  { name: 'DB_PASS style name', text: 'DB_PASS=S3cretPassw0rd', secret: 'S3cretPassw0rd', keep: 'DB_PASS' },
  { name: 'SMTP_PASS YAML', text: 'SMTP_PASS: mailpw123', secret: 'mailpw123', keep: 'SMTP_PASS' },
  // ------------------------------------------------------------------ api keys and tokens
  { name: 'api_key=', text: 'api_key=AbCdEf0123456789GhIjKlMn', secret: 'AbCdEf0123456789GhIjKlMn', keep: 'api_key' },
  { name: 'JSON apiKey', text: '{"apiKey": "9f8e7d6c5b4a39281706f5e4d3c2b1a0"}', secret: '9f8e7d6c5b4a39281706f5e4d3c2b1a0', keep: '"apiKey"' },
  { name: 'X-Api-Key header', text: 'X-Api-Key: 4f1c9e2b7a6d3f8e0b5c', secret: '4f1c9e2b7a6d3f8e0b5c', keep: 'X-Api-Key' },
  { name: 'auth_token YAML', text: 'auth_token: abcd1234efgh5678ijkl', secret: 'abcd1234efgh5678ijkl', keep: 'auth_token' },
  { name: 'access_token', text: 'access_token=ya29.a0AfH6SMBx3kL9qP2mN7', secret: 'ya29.a0AfH6SMBx3kL9qP2mN7', keep: 'access_token' },
  { name: 'api_key in a PHP array', text: '$cfg = ["api_key" => "AbCdEf0123456789GhIjKl"];', secret: 'AbCdEf0123456789GhIjKl', keep: '"api_key"' },
  { name: 'client_key', text: 'client_key: cK_9x8y7z6w5v4u3t', secret: 'cK_9x8y7z6w5v4u3t', keep: 'client_key' },
  { name: 'docker config auth', text: '{"auths": {"https://index.docker.io/v1/": {"auth": "dXNlcjpwYXNzd29yZDEyMw=="}}}', secret: 'dXNlcjpwYXNzd29yZDEyMw==', keep: '"auth"' },
  { name: 'SESSION_KEY', text: 'SESSION_KEY=7hG4kP1xQ9mZ2wR8', secret: '7hG4kP1xQ9mZ2wR8', keep: 'SESSION_KEY' },
  // ------------------------------------------------------------------ AWS
  { name: 'AWS access key id (bare)', text: 'using key AKIAIOSFODNN7EXAMPLE for s3', secret: 'AKIAIOSFODNN7EXAMPLE' },
  { name: 'AWS temporary key id', text: 'ASIAY34FZKBOKMUTVV7A in the logs', secret: 'ASIAY34FZKBOKMUTVV7A' },
  { name: 'AWS secret in assignment', text: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', keep: 'aws_secret_access_key' },
  { name: 'AWS secret (bare, high entropy)', text: 'the secret was wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY yesterday', secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
  // ------------------------------------------------------------------ PEM private keys
  { name: 'PEM RSA', text: `key:\n-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}-----END RSA PRIVATE KEY-----\ndone`, secret: 'MIIEowIBAAKCAQEAv3Xy9Zk2mQd8' },
  { name: 'PEM EC', text: `-----BEGIN EC PRIVATE KEY-----\n${PEM_BODY}-----END EC PRIVATE KEY-----`, secret: 'q7Vt2Bw5Cz1Dn6Em0Fo3' },
  { name: 'PEM OPENSSH', text: `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----`, secret: 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ' },
  { name: 'PEM PKCS8', text: `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}-----END PRIVATE KEY-----`, secret: 'MIIEowIBAAKCAQEAv3Xy9Zk2mQd8' },
  { name: 'PEM encrypted PKCS8', text: `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${PEM_BODY}-----END ENCRYPTED PRIVATE KEY-----`, secret: 'MIIEowIBAAKCAQEAv3Xy9Zk2mQd8' },
  { name: 'PEM in a JSON string (service account)', text: '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"}', secret: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC' },
  { name: 'PEM truncated (no END line)', text: `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}`, secret: 'MIIEowIBAAKCAQEAv3Xy9Zk2mQd8' },
  // ------------------------------------------------------------------ JWT, bearer, basic
  { name: 'JWT', text: 'cookie eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c sent', secret: 'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c' },
  { name: 'bearer token', text: 'Authorization: Bearer 8f2a7c1e9b4d6f3a0e5c7b9d1f2a4c6e', secret: '8f2a7c1e9b4d6f3a0e5c7b9d1f2a4c6e', keep: 'Authorization' },
  { name: 'bearer, lower case, curl', text: `curl -H "authorization: bearer abcDEF123ghiJKL456mno" https://api.example.com`, secret: 'abcDEF123ghiJKL456mno' },
  { name: 'basic auth header', text: 'Authorization: Basic dXNlcjpzM2NyM3RQYXNzd29yZA==', secret: 'dXNlcjpzM2NyM3RQYXNzd29yZA==', keep: 'Authorization: Basic' },
  // ------------------------------------------------------------------ connection strings
  { name: 'postgres', text: 'DATABASE_URL=postgres://app:Pg_s3cret!@db.internal:5432/app', secret: 'Pg_s3cret!', keep: 'postgres://app:' },
  { name: 'postgresql with params', text: 'postgresql://admin:VeryS3cure@10.0.0.5/prod?sslmode=require', secret: 'VeryS3cure', keep: 'postgresql://admin:' },
  { name: 'mysql', text: 'mysql://root:my5ql-pw@localhost:3306/shop', secret: 'my5ql-pw', keep: 'mysql://root:' },
  { name: 'mongodb+srv', text: 'mongodb+srv://svc:M0ng0Pass@cluster0.ab1cd.mongodb.net/db', secret: 'M0ng0Pass', keep: 'mongodb+srv://svc:' },
  { name: 'redis with user', text: 'redis://default:r3d1sPw@cache:6379/0', secret: 'r3d1sPw', keep: 'redis://default:' },
  { name: 'redis password only', text: 'REDIS_URL=redis://:r3d1sOnlyPw@cache.internal:6379/0', secret: 'r3d1sOnlyPw', keep: 'redis://' },
  { name: 'amqp', text: 'amqp://guest:rabb1tPw@mq:5672/vhost', secret: 'rabb1tPw', keep: 'amqp://guest:' },
  // ------------------------------------------------------------------ vendor prefixes
  { name: 'Anthropic', text: 'ANTHROPIC_KEY is sk-ant-api03-AbC1dEf2GhI3jKl4MnO5pQr6StU7vWx8YzA9bCd0', secret: 'sk-ant-api03-AbC1dEf2GhI3jKl4MnO5pQr6StU7vWx8YzA9bCd0' },
  { name: 'OpenAI project key', text: 'key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78', secret: 'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78' },
  { name: 'OpenAI legacy key', text: 'sk-3a9F0kLm2Qx7Zp0RtYb6Vn1Wc8Ue4Is5Oa7Hd2Jg9Kf3Lh', secret: 'sk-3a9F0kLm2Qx7Zp0RtYb6Vn1Wc8Ue4Is5Oa7Hd2Jg9Kf3Lh' },
  { name: 'GitHub ghp_', text: 'token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 pushed', secret: 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8' },
  { name: 'GitHub gho_', text: 'oauth gho_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2', secret: 'gho_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2' },
  { name: 'GitHub ghs_', text: 'ghs_16C7e42F292c6912E7710c838347Ae178B4a in CI', secret: 'ghs_16C7e42F292c6912E7710c838347Ae178B4a' },
  { name: 'GitHub fine-grained PAT', text: 'github_pat_11ABCDEFG0123456789abc_defGHIjklMNOpqrSTUvwxYZ0123456789abcdefghijklmnOPQRST', secret: 'github_pat_11ABCDEFG0123456789abc_defGHIjklMNOpqrSTUvwxYZ0123456789abcdefghijklmnOPQRST' },
  { name: 'Slack bot token', text: 'SLACK xoxb-2345678901-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx', secret: 'xoxb-2345678901-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx' },
  { name: 'Stripe secret key', text: 'stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc', secret: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc' },
  { name: 'Stripe restricted key', text: 'rk_test_51H8xYzAbCdEfGhIjKlMnOp', secret: 'rk_test_51H8xYzAbCdEfGhIjKlMnOp' },
  { name: 'Google AIza', text: 'maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY ok', secret: 'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY' },
  { name: 'GitLab glpat', text: 'glpat-xK9mP2qR7vT4wY8zB3nC used', secret: 'glpat-xK9mP2qR7vT4wY8zB3nC' },
  { name: 'npm token', text: '//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8', secret: 'npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8' },
  { name: 'SendGrid', text: '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', secret: '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' },
  { name: 'HuggingFace', text: 'HF hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', secret: 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789' },
  // ------------------------------------------------------------------ high entropy, no key name
  { name: 'high-entropy base64', text: 'use Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG for the webhook', secret: 'Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG' },
  { name: 'high-entropy base64 with padding', text: 'value: k7Jp2Qx9Lm4Zr8Wt1Vb6Nc3Yd0Hf5Gs+Ae/Ui7Oo==', secret: 'k7Jp2Qx9Lm4Zr8Wt1Vb6Nc3Yd0Hf5Gs+Ae/Ui7Oo==' },
  { name: 'high-entropy hex', text: 'signing with 3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a1c3e5b7d9f2a4c6e8b0d1f3a', secret: '3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a1c3e5b7d9f2a4c6e8b0d1f3a' },
  { name: 'Azure storage account key', text: 'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net', secret: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq', keep: 'AccountKey=' },
  { name: 'unnamed key=value, high entropy (key kept)', text: 'FOO_SALT_VALUE=Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG', secret: 'Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG', keep: 'FOO_SALT_VALUE=' },
  { name: 'Slack incoming webhook', text: 'post to https://hooks.slack.com/services/T024BE7LD/B024BE7LH/WXyZ1aBcDeFgHiJkLmNoPqRs', secret: 'WXyZ1aBcDeFgHiJkLmNoPqRs', keep: 'https://hooks.slack.com/services/' },
];

/** Benign look-alikes: must come back byte-identical in mode both. */
const BENIGN: { name: string; text: string }[] = [
  { name: 'UUID', text: 'package 123e4567-e89b-12d3-a456-426614174000 created' },
  { name: 'UUID upper case', text: 'ID 550E8400-E29B-41D4-A716-446655440000' },
  { name: 'git SHA after commit', text: 'fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 yesterday' },
  { name: 'git SHA in a URL', text: 'see https://github.com/acme/widgets/commit/9fceb02d0ae598e95dc970b74767f19372d61af8' },
  { name: 'git SHA in a path', text: 'objects at .git/refs/heads/9fceb02d0ae598e95dc970b74767f19372d61af8' },
  { name: 'git SHA after revert', text: 'Revert "x" This reverts commit 2b7e1a9c4f3d8e6b0a5c9f1d7e3b8a2c4f6d0e9b.' },
  { name: 'file path', text: 'edit src/components/settings/UserProfileSettingsPanel.tsx and tests' },
  { name: 'absolute path', text: 'at /home/runner/work/project/node_modules/@scope/package-name/dist/index.js:12:5' },
  { name: 'base64 of English text', text: 'payload VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw== decoded fine' },
  { name: 'npm integrity (lockfile JSON)', text: '"integrity": "sha512-Ox0LnTEd5TQZ6XhdxBh8L8CwuYSdzPWHfJ1Fb9n3S3vSIYqBlfjPKOmQ2QtknAaQXkA3oSqoqGqnT1XJ4gJw1A=="' },
  { name: 'yarn v1 integrity', text: '  integrity sha512-9NET910DNaIPngYnLLPeg+Ogzqsi9uM4mSboU5y6p8S5DzMTVEsJZrawi+BoDNUVBa2DhJqQYUFvMDfgU062LQ==' },
  { name: 'yarn berry checksum', text: '  checksum: 10c0/0af6b1e5f3c2d8a9b4e7f0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d' },
  { name: 'Cargo checksum', text: 'checksum = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"' },
  { name: 'docker digest', text: 'image@sha256:4bc453b53cb3d914b45f4b250294236adba2c0e09ff6f03793949e7e39fd4cc1' },
  { name: 'long camelCase identifier', text: 'call createUserAuthenticationTokenRefreshHandlerFactory() first' },
  { name: 'long snake_case identifier', text: 'test_user_can_reset_password_with_valid_token_and_redirect passes' },
  { name: 'dotted Java class', text: 'com.example.authentication.service.TokenRefreshService threw' },
  { name: 'version strings', text: 'upgrade to v1.2.3-beta.4+build.5678 and node-v20.11.1-linux-x64' },
  { name: 'scoped package at version', text: 'installed @typescript-eslint/eslint-plugin@8.18.1' },
  { name: 'prose: expired token', text: 'expired token gives 500' },
  { name: 'prose: password reset page', text: 'the password reset page is broken' },
  { name: 'prose: token: the refresh flow', text: 'token: the refresh flow needs a retry' },
  { name: 'prose: token lifetime', text: 'TOKEN_EXPIRY=3600 seconds' },
  { name: 'ISO timestamp', text: 'at 2025-12-02T12:00:00.000Z and 2025-12-02T12:00:00+01:00' },
  { name: 'SQLite timestamp', text: 'created 2025-12-02 12:00:00' },
  { name: 'already redacted', text: 'password=REDACTED' },
  { name: 'already redacted with marker', text: 'password: [REDACTED] and api_key=***' },
  { name: 'URL without credentials', text: 'connect to postgres://db.internal:5432/app and https://example.com/a?b=c' },
  { name: 'email address', text: 'mail jane.doe@example.com about it' },
  { name: 'short hex', text: 'color #ff00ff and id 0x7fffffff' },
  { name: 'error message', text: "ENOENT: no such file or directory, open '/tmp/bazinga/artifacts/x.md'" },
  { name: 'bearer in prose', text: 'send the token as a bearer header' },
  { name: 'words ending in pass or auth', text: 'bypass=true compass=north first_pass: done author: jsmith oauth: enabled' },
  { name: 'checksum=hex in one run', text: 'checksum=3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a' },
  { name: 'URL query parameters', text: 'GET /api/v2/items?page=2&per_page=50&sort=created_at' },
];

describe('secrets are removed (mode both)', () => {
  it('the table is large enough', () => {
    expect(SECRETS.length).toBeGreaterThanOrEqual(30);
  });

  it.each(SECRETS)('$name', ({ text, secret, keep }) => {
    const r = both(text);
    expect(r.text).not.toContain(secret);
    expect(r.text).toContain('[REDACTED');
    expect(r.count).toBeGreaterThan(0);
    if (keep) expect(r.text).toContain(keep);
  });

  it('the replacement keeps the key name and says what was removed', () => {
    expect(both('password=hunter2hunter2').text).toBe('password=[REDACTED:password]');
    expect(both('"token": "abc123def456ghi789"').text).toBe('"token": "[REDACTED:token]"');
    expect(both('postgres://app:pw1@db/x').text).toBe('postgres://app:[REDACTED:url_password]@db/x');
  });

  it('redacting twice changes nothing more', () => {
    for (const { text } of SECRETS) {
      const once = both(text).text;
      expect(both(once).text).toBe(once);
    }
  });
});

describe('benign look-alikes are left byte-identical (mode both)', () => {
  it('the table is large enough', () => {
    expect(BENIGN.length).toBeGreaterThanOrEqual(20);
  });

  it.each(BENIGN)('$name', ({ text }) => {
    const r = both(text);
    expect(r.text).toBe(text);
    expect(r.count).toBe(0);
  });
});

describe('modes', () => {
  const patternOnly = 'api_key=AbCdEf0123456789GhIjKlMn'; // a pattern, and the value is high-entropy too
  const vendor = 'key sk-ant-api03-AbC1dEf2GhI3jKl4MnO5pQr6StU7vWx8YzA9bCd0';
  const entropyOnly = 'use Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG for the webhook';
  const lowEntropyPassword = 'password=aaaa';

  it.each([
    { mode: 'pattern_only', text: vendor, redacted: true },
    { mode: 'entropy', text: vendor, redacted: true }, // long and random enough to trip the entropy check as well
    { mode: 'both', text: vendor, redacted: true },
    { mode: 'pattern_only', text: entropyOnly, redacted: false },
    { mode: 'entropy', text: entropyOnly, redacted: true },
    { mode: 'both', text: entropyOnly, redacted: true },
    { mode: 'pattern_only', text: lowEntropyPassword, redacted: true },
    { mode: 'entropy', text: lowEntropyPassword, redacted: false },
    { mode: 'both', text: lowEntropyPassword, redacted: true },
    { mode: 'pattern_only', text: patternOnly, redacted: true },
  ] as { mode: RedactionMode; text: string; redacted: boolean }[])('$mode on "$text" → redacted $redacted', ({ mode, text, redacted }) => {
    const r = redactForOutput(text, { mode, allowlist: [] });
    expect(r.text !== text).toBe(redacted);
    expect(r.count > 0).toBe(redacted);
  });

  it('pattern_only uses the pattern tags; entropy the high_entropy tag', () => {
    expect(redactForOutput(lowEntropyPassword, { mode: 'pattern_only', allowlist: [] }).text).toBe('password=[REDACTED:password]');
    expect(redactForOutput(entropyOnly, { mode: 'entropy', allowlist: [] }).text).toBe('use [REDACTED:high_entropy] for the webhook');
  });

  it.each(['pattern_only', 'entropy', 'both'] as RedactionMode[])('%s leaves the benign table alone', (mode) => {
    for (const { text } of BENIGN) expect(redactForOutput(text, { mode, allowlist: [] }).text).toBe(text);
  });
});

describe('allowlist', () => {
  it('a matching secret is kept; others in the same text are still removed', () => {
    const text = 'test key AKIAIOSFODNN7EXAMPLE and real AKIAZZZZZZZZZZZZZZZ7 here';
    const r = redactForOutput(text, { mode: 'both', allowlist: [/AKIAIOSFODNN7EXAMPLE/] });
    expect(r.text).toContain('AKIAIOSFODNN7EXAMPLE');
    expect(r.text).not.toContain('AKIAZZZZZZZZZZZZZZZ7');
    expect(r.count).toBe(1);
  });

  it('a whole key=value can be allowlisted', () => {
    const text = 'password=fixture-only-pw1';
    expect(redactForOutput(text, { mode: 'both', allowlist: [/password=fixture-only-\w+/] }).text).toBe(text);
    expect(redactForOutput(text, { mode: 'both', allowlist: [] }).text).toBe('password=[REDACTED:password]');
  });

  it('allowlisted high-entropy text is kept in entropy mode', () => {
    const text = 'nonce Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG';
    expect(redactForOutput(text, { mode: 'entropy', allowlist: [/Zq3X9v\w+/g] }).text).toBe(text);
  });

  it('several matches of one allowlist regex are all kept, flags honoured', () => {
    const text = 'sk_test_aaaaaaaaaaaa1 then SK_TEST_BBBBBBBBBBBB2 then sk_live_cccccccccccc3';
    const r = redactForOutput(text, { mode: 'both', allowlist: [/sk_test_\w+/i] });
    expect(r.text).toContain('sk_test_aaaaaaaaaaaa1');
    expect(r.text).toContain('SK_TEST_BBBBBBBBBBBB2');
    expect(r.text).not.toContain('sk_live_cccccccccccc3');
  });
});

describe('shannonEntropy', () => {
  it.each([
    { s: 'aaaa', h: 0 },
    { s: 'ab', h: 1 },
    { s: 'abcd', h: 2 },
    { s: '0123456789abcdef', h: 4 },
  ])('$s → $h bits/char', ({ s, h }) => {
    expect(shannonEntropy(s)).toBeCloseTo(h, 10);
  });
});

describe('emit redaction: forms found in review', () => {
  const both = { mode: 'both' as const, allowlist: [] };
  it.each([
    { name: 'long token without a digit', text: 'token=abcdefghijklmnopqrstuvwxyzABCDEF', secret: 'abcdefghijklmnopqrstuvwxyzABCDEF', keep: 'token=' },
    { name: 'quoted api key without a digit', text: 'api_key: "abcdefghijklmnopqrstuvwxyzab"', secret: 'abcdefghijklmnopqrstuvwxyzab', keep: 'api_key: ' },
    { name: 'CLI flag with a space', text: 'run --password hunter2secret now', secret: 'hunter2secret', keep: '--password ' },
    { name: 'quoted CLI flag value', text: 'mysql --password "a b c" -h db', secret: 'a b c', keep: '--password ' },
  ])('$name', ({ text, secret, keep }) => {
    const out = redactForOutput(text, both).text;
    expect(out).not.toContain(secret);
    expect(out).toContain(keep);
  });

  it('a long run of word characters is handled (the key patterns are anchored) and left as it is', () => {
    const run = 'a'.repeat(200_000);
    expect(redactForOutput(run, both).text).toBe(run);
    const words = 'password reset token flow '.repeat(20_000);
    expect(redactForOutput(words, both).text).toBe(words);
  });
});
