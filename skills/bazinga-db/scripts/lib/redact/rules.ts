/** The engine's vocabulary: the policy and its modes, the marker, the rule documentation, the run that counts hits, the markers already there and the allowlist's hold characters. Part of the redaction engine (../redact.ts). */
import { TOKEN_RULES } from '../redactRules.ts';

export type RedactionMode = 'pattern_only' | 'entropy' | 'both';
export const REDACTION_MODES: readonly RedactionMode[] = ['pattern_only', 'entropy', 'both'];

export interface RedactionPolicy {
  mode: RedactionMode;
  /** Regexes; text they match is never redacted (private blocks excepted). */
  allowlist: readonly RegExp[];
}

export const DEFAULT_POLICY: RedactionPolicy = Object.freeze({ mode: 'both', allowlist: Object.freeze([]) as readonly RegExp[] });

export interface Redaction {
  text: string;
  /** True when any rule fired, even on a value that was already redacted (the original's meaning). */
  redacted: boolean;
  /** Replacements made, per rule id. */
  hits: Record<string, number>;
}

/** The marker a rule leaves. */
export const marker = (rule: string) => `[REDACTED:${rule}]`;

export interface RuleDoc {
  id: string;
  title: string;
  example: { removes: string; keeps: string };
}

export const doc = (id: string, title: string, removes: string, keeps: string): RuleDoc => ({ id, title, example: { removes, keeps } });

/** The rules that are not provider token formats, in the order they run around those. */
export const LEADING_RULES: readonly RuleDoc[] = [
  doc('private', 'text between <private> and </private> (the tags too); an unclosed tag hides the rest', 'notes <private>call Dana on 555-0100</private> done', 'the private_key_id field is public'),
  doc('private_key', 'PEM, OpenSSH and PGP private-key blocks; one without END is cut to the end of the text', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----', '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----'),
];
export const TRAILING_RULES: readonly RuleDoc[] = [
  doc('url_password', 'the password of credentials in any URL (database and broker URLs, basic auth, git remotes), also one holding an unencoded @, / or an apostrophe; the user stays', 'DATABASE_URL=postgres://shop:Tr0ub4dor-and-3@db.internal:5432/shop', 'git@github.com:acme/shop.git and https://registry.npmjs.org/@types/node'),
  doc('authorization', 'the credentials of an Authorization or Proxy-Authorization header, any scheme', 'Authorization: Basic c2hvcDpUcjB1YjRkb3ItYW5kLTM=', 'Authorization header missing'),
  doc('bearer', 'a Bearer or Basic credential outside a header', 'curl with Bearer 9f8e7d6c5b4a39281706f5e4', 'the bearer token expired'),
  doc('cookie', 'cookie values in Cookie / Set-Cookie headers and named session cookies (PHPSESSID, connect.sid, …)', 'Cookie: sessionid=k2j4h5g6f7d8s9a0; theme=dark', 'credentials: include'),
  doc('cli_password', 'passwords on command lines: --password x, curl -u user:pass, mysql -pX, sshpass -p x, docker login -p x (joined too, across \\ continuations, a quoted value in pieces a shell joins), ConvertTo-SecureString', 'psql --password Qz8pLm4Nv2 -h db', 'docker login --password-stdin'),
  doc('password', 'the value of a key naming a password (password, passwd, pwd, passphrase, DB_PASS, …) in env, shell, YAML (also a block or next-line value), JSON, TOML, INI, XML elements, Markdown table rows and emphasised keys (`**Password:** …`), SQL (`IDENTIFIED BY \'…\'`, `WITH PASSWORD \'…\'`), name/value pairs, code and its defaults (`os.environ.get("K", "…")`, `${K:-…}`); quoted values holding quotes (`\'it\'"\'"\'s\'`, `\'it\'\'s\'`, `"a\\"b"`); .netrc and .pgpass entries; a password given in a sentence (`the admin password is …`, `the passwords are X and Y`, `use X as the password`)', 'DATABASE_PASSWORD=correct-horse-battery-9', 'PASS: 18/18 tests, coverage 91%'),
  doc('secret', 'the value of a key naming a secret (client_secret, SECRET_KEY, private_key, …), also one given in a sentence (`the Django secret key is …`)', 'export SECRET_KEY="d8Kq2LmZ9xR4vB7n"', 'secret_name: prod-db-credentials'),
  doc('api_key', 'a token-like value of a key naming an API, access, account or signing key', '"apiKey": "9f8e7d6c5b4a39281706f5e4d3c2b1a0"', 'apiKeyHeader: "X-API-Key"'),
  doc('token', 'a token-like value of a key naming a token (access_token, API_TOKEN, _authToken, …)', 'GITHUB_TOKEN: abcd1234efgh5678ijkl', 'tokenizer: cl100k_base and max_tokens: 4096'),
  doc('credential', 'a token-like value of a key naming credentials, auth or a signature', 'DOCKER_AUTH=dXNlcjpwYXNzd29yZDEyMw', 'auth: true'),
  doc('base64_credential', 'base64 (standard or URL-safe, padded or not, on one line or wrapped over lines of one width) whose decoded text holds a secret any rule finds (a Kubernetes secret, an encoded .env, EC2 user data); base64 of binary or of text without one stays', 'data:\n  app.env: QVdTX1NFQ1JFVF9BQ0NFU1NfS0VZPXdKYWxyWFV0bkZFTUkvSzdNREVORy9iUHhSZmlDWUVYQU1QTEVLRVkK', 'icon: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='),
  doc('encoded_credential', 'hex (as `xxd -p` writes it, on one line or wrapped) or percent-encoding (a URL-encoded query or form value with an encoded `=` or `:`) whose decoded text holds a secret any rule finds; hex of a hash or of text without one stays', 'payload: 4157535f5345435245545f4143434553535f4b45593d774a616c725855746e46454d492f4b374d44454e472f62507852666943594558414d504c454b4559', 'sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'),
  doc('continuation', 'the tail of a redacted value wrapped onto the next line (a `\\` continuation, a key broken in a code fence), and each further part of a provider token cut by line breaks, also a string split over lines (`"ghp_…" +⏎ "…"`, `\'…\'\\⏎\'…\'`; its first part becomes the provider\'s marker)', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDEN\\\nG/bPxRfiCYzq8LmNoP12', 'API_KEY=[REDACTED:api_key]\nLOG_LEVEL=info'),
  doc('high_entropy', 'a long random-looking token (base64-like over 4.5 bits/char, or hex after a key word) that is not a UUID, hash, path or base64 prose', 'leaked in the log: Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG', 'commit 3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e6b3d9f2a'),
];

/** Every rule, in the order it runs, with what it removes and an example of each side. */
export const RULE_DOCS: readonly RuleDoc[] = [...LEADING_RULES, ...TOKEN_RULES.map((r) => ({ id: r.id, title: r.title, example: r.example })), ...TRAILING_RULES];

/** Every rule id the engine can name (for counts and tests). */
export const RULE_IDS: readonly string[] = RULE_DOCS.map((d) => d.id);

// ------------------------------------------------------------------------------------ helpers

export class Run {
  redacted = false;
  readonly hits: Record<string, number> = {};
  hit(rule: string): void {
    this.redacted = true;
    this.hits[rule] = (this.hits[rule] ?? 0) + 1;
  }
  /** Adds the counts of another run's hits (`hit` that many times each). */
  count(hits: Readonly<Record<string, number>>): void {
    for (const [rule, n] of Object.entries(hits)) {
      if (n <= 0) continue;
      this.redacted = true;
      this.hits[rule] = (this.hits[rule] ?? 0) + n;
    }
  }
}

/** Already a marker: the original's `REDACTED` words, this engine's `[REDACTED:x]`, masks. */
export const ALREADY_REDACTED = /^(?:\[REDACTED(?::[a-z_]+)?\]|[A-Z_]*REDACTED[A-Z_]*|\*{3,}|x{4,}|X{4,}|•{3,}|<redacted>)$/;

/** Private-use characters that wrap an allowlisted match while the rules run. */
export const HOLD_OPEN = '\uE000';
export const HOLD_CLOSE = '\uE001';
export const HELD_ONLY = /^(?:\uE000\d+\uE001)+$/;
