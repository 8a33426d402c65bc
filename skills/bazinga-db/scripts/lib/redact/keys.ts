/** What a key says its value is: the words of a key, and the class of secret (if any) they name. Part of the redaction engine (../redact.ts). */

export type KeyClass = 'password' | 'secret' | 'api_key' | 'token' | 'credential' | null;

/** Words that, ending a key, say its value is a name, a setting or a pointer, not a secret. */
export const NOT_A_VALUE = new Set([
  'name', 'names', 'ref', 'arn', 'path', 'file', 'files', 'url', 'uri', 'urls', 'endpoint', 'id', 'ids', 'version',
  'length', 'len', 'size', 'rounds', 'policy', 'policies', 'field', 'fields', 'header', 'headers', 'type', 'types',
  'count', 'counts', 'enabled', 'disabled', 'enable', 'required', 'hint', 'label', 'prompt', 'regex', 'pattern',
  'min', 'max', 'ttl', 'expiry', 'expires', 'expiration', 'expired', 'strength', 'mode', 'format', 'location', 'dir',
  'stdin', 'env', 'var', 'variable', 'source', 'provider', 'manager', 'store', 'helper', 'command', 'cmd',
  'hash', 'algorithm', 'algo', 'reset', 'prefix', 'suffix', 'limit', 'index', 'kind', 'style', 'lifetime',
  'placeholder', 'description', 'desc', 'help', 'changed', 'set', 'valid', 'invalid', 'error', 'errors',
  'input', 'class', 'scope', 'scopes', 'audience', 'issuer', 'used', 'usage', 'budget', 'estimate', 'estimator',
  'chars', 'bytes', 'bits', 'tokens', 'rules', 'rule', 'requirements', 'complexity', 'ip', 'repo', 'zone', 'dns',
  // What a password policy counts: `PASSWORD_RESET_TIMEOUT=259200`, `password_max_age=90`, `PASSWORD_RETRIES=3`.
  'timeout', 'retries', 'retry', 'attempts', 'age', 'history', 'interval', 'days', 'hours', 'minutes', 'seconds', 'reuse',
  // What was found about the secret, not the secret (`password_tests=12/12`, `token_status: valid`). Not
  // `test`: `DB_PASSWORD_TEST` is the password of a test environment.
  'tests', 'results', 'status', 'coverage', 'checks',
]);

/**
 * The shell's working-directory variables (`PWD=/home/dev/shop`, `OLDPWD=/tmp`), written upper-case
 * exactly as the shell sets them, also read from the environment (`process.env.PWD`). Holding a
 * directory they name no password; `DB_PWD`, `pwd:` and `PWD='…'` holding anything else still do.
 */
export function isShellDirectoryVariable(key: string): boolean {
  return SHELL_DIRECTORY_VARIABLES.has(key.replace(/^(?:process\.env|import\.meta\.env|os\.environ|ENV|env)\./, ''));
}
const SHELL_DIRECTORY_VARIABLES = new Set(['PWD', 'OLDPWD']);

/** Splits a key into lower-case words: `X-API-Key` → x api key, `secretKey` → secret key. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

export const KEY_QUALIFIERS = new Set([
  'secret', 'private', 'master', 'encryption', 'signing', 'client', 'service', 'account', 'app', 'license',
  'shared', 'primary', 'secondary', 'session', 'consumer', 'webhook', 'access', 'api', 'auth', 'admin', 'root',
  'storage', 'sas', 'hmac', 'jwt', 'subscription', 'deploy', 'ingestion', 'write', 'read', 'personal', 'server',
]);

/** What a `pass` or `pw` key word may follow and still mean a password. */
export const PASS_OWNERS = new Set([
  'db', 'database', 'smtp', 'mail', 'email', 'redis', 'mysql', 'mongo', 'mongodb', 'pg', 'postgres', 'ftp', 'sftp', 'admin',
  'root', 'user', 'key', 'ldap', 'proxy', 'amqp', 'rabbitmq', 'rabbit', 'sql', 'ssh', 'app', 'api', 'service', 'bind', 'vpn',
  'wifi', 'keystore', 'truststore', 'store', 'login', 'account', 'basic', 'auth', 'http', 'registry', 'docker', 'git',
  'prod', 'production', 'staging', 'dev',
]);

/** Every key classifyKey can name contains one of these. */
export const SECRETISH_KEY = /pass|pwd|pw|secret|key|token|cred|auth|sig|bearer|private/i;

/** What a key says its value is; null for keys that hold no secret. */
export function classifyKey(key: string): KeyClass {
  // Most names in a text name nothing secret: one cheap test before splitting them into words.
  if (!SECRETISH_KEY.test(key)) return null;
  const known = KEY_CLASSES.get(key);
  if (known !== undefined) return known;
  if (KEY_CLASSES.size >= 4096) KEY_CLASSES.clear();
  const cls = classifyWords(key);
  KEY_CLASSES.set(key, cls);
  return cls;
}

/** Keys repeat within a text (and across a run of redact-existing): each is split into words once. */
export const KEY_CLASSES = new Map<string, KeyClass>();

export function classifyWords(key: string): KeyClass {
  // A file name (`password.ts:12:5` in a stack trace), an AWS service prefix.
  if (/\.(?:[cm]?[jt]sx?|py|java|kt|go|rb|php|cs|rs|swift|c|h|cpp|md|json|ya?ml|toml|xml|html?|css|scss|sql|sh|txt|env)$/i.test(key)) return null;
  if (/^secretsmanager$/i.test(key)) return null;
  const words = keyWords(key);
  if (words.length === 0 || words.length > 12) return null;
  const last = words[words.length - 1] as string;
  if (NOT_A_VALUE.has(last) && !(last === 'tokens' && words.length === 1)) return null;
  // One compound word: `passwordrules`, `tokenurl`.
  const tail = /^(?:password|passwd|secret|token|apikey|auth)(.+)$/.exec(last);
  if (tail && NOT_A_VALUE.has(tail[1] as string)) return null;
  const joined = words.join('');
  if (/passw|passphrase|passwd|passcode/.test(joined) || words.some((w) => w === 'pwd' || w === 'pword')) return 'password';
  // `pass` alone or after what it unlocks (DB_PASS, SMTP_PASS), not `first_pass` or `bypass`.
  const passAt = words.findIndex((w) => w === 'pass' || w === 'pw');
  if (passAt === 0 ? words.length === 1 : passAt > 0 && PASS_OWNERS.has(words[passAt - 1] as string)) return 'password';
  if (words.some((w) => w.startsWith('secret') || w.endsWith('secret'))) return 'secret';
  if (words.some((w) => w === 'apikey' || w === 'apikeys') || /api(?:key|_key)/.test(joined) || (words.includes('api') && words.includes('key'))) return 'api_key';
  const keyIndex = words.findIndex((w) => w === 'key' || w === 'keys');
  if (keyIndex > 0 && KEY_QUALIFIERS.has(words[keyIndex - 1] as string)) return words[keyIndex - 1] === 'private' ? 'secret' : 'api_key';
  if (words.some((w) => /^(?:accesskey|secretkey|privatekey|authkey|masterkey|signingkey|encryptionkey|accountkey|sharedaccesskey|clientkey|sessionkey)$/.test(w))) return 'api_key';
  if (words.some((w) => (/token$/.test(w) || w === 'tokens' || /^token/.test(w)) && !/^tokeni[sz]/.test(w))) return 'token';
  if (words.some((w) => /^(?:credential|credentials|creds|cred)$/.test(w))) return 'credential';
  if (last === 'auth' || words.includes('authorization') || words.includes('bearer') || words.includes('sig') || words.includes('signature')) return 'credential';
  return null;
}
