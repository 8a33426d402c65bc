/**
 * The secret formats the redaction engine (`redact.ts`) knows by shape: provider tokens with a
 * fixed prefix, length and alphabet. Each rule names the marker it leaves (`[REDACTED:<id>]`)
 * and carries one example it removes and one look-alike it keeps; the test suite runs both and
 * references/redaction.md lists them.
 *
 * Every quantifier is bounded and every rule starts with a literal prefix, so a rule costs a
 * bounded amount of work per place its prefix occurs: no input makes one backtrack for long.
 */

export interface TokenRule {
  id: string;
  title: string;
  /** Lower-case literals, one of which must occur in the text for the rule to be tried at all. */
  needles: readonly string[];
  /** Regex source of the token (no capture groups except the kept prefix). */
  pattern: string;
  caseInsensitive?: boolean;
  /** Characters that may not touch the token on either side (default: letters, digits, `_`). */
  boundary?: string;
  /** The pattern's first capture group (a host, a parameter name) is kept before the marker. */
  keepsPrefix?: true;
  example: { removes: string; keeps: string };
}

const B64URL = 'A-Za-z0-9_\\-';

export const TOKEN_RULES: readonly TokenRule[] = [
  // ------------------------------------------------------------------------------ AI vendors
  {
    id: 'anthropic_key',
    title: 'Anthropic API and admin keys',
    needles: ['sk-ant-'],
    pattern: `sk-ant-[${B64URL}]{20,300}`,
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'ANTHROPIC_API_KEY is sk-ant-api03-Qm7fT2kLw9ZxR4bN8vYc1HdJ5sPa3Ge6UoIt0Wq', keeps: 'the sk-ant- prefix marks an Anthropic key' },
  },
  {
    id: 'openai_key',
    title: 'OpenAI project, service-account and legacy keys (and other sk- keys)',
    needles: ['sk-'],
    pattern: `sk-(?:proj-|svcacct-|admin-|None-)?[${B64URL}]{20,300}`,
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'key sk-proj-Hq3Lm8Rt2Zw7Xc5Vb1Nk9Pd4Fg6Js0Ay2Ue8Io', keeps: 'the risk-aware sk-learn pipeline' },
  },
  {
    id: 'huggingface_token',
    title: 'Hugging Face user and organisation tokens',
    needles: ['hf_', 'api_org_'],
    pattern: '(?:hf_[A-Za-z0-9]{30,40}|api_org_[A-Za-z0-9]{30,40})',
    example: { removes: 'HF_TOKEN=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', keeps: 'hf_transfer speeds up downloads' },
  },
  {
    id: 'ai_vendor_key',
    title: 'Groq, Replicate, Perplexity and xAI keys',
    needles: ['gsk_', 'r8_', 'pplx-', 'xai-'],
    pattern: '(?:gsk_[A-Za-z0-9]{48,56}|r8_[A-Za-z0-9]{37}|pplx-[A-Za-z0-9]{48}|xai-[A-Za-z0-9]{70,90})',
    example: { removes: 'Groq key 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', keeps: 'r8_ is a prefix' },
  },
  // ------------------------------------------------------------------------------ cloud
  {
    id: 'aws_access_key_id',
    title: 'AWS access key ids (long-term AKIA, temporary ASIA and other key-id prefixes)',
    needles: ['akia', 'asia', 'abia', 'acca', 'agpa', 'aida', 'aroa', 'aipa', 'anpa', 'anva', 'apka'],
    pattern: '(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}',
    example: { removes: 'aws_access_key_id = AKIAZ7Q4RW2LMX8NC5TB', keeps: 'arn:aws:iam::123456789012:role/deploy' },
  },
  {
    id: 'gcp_api_key',
    title: 'Google Cloud API keys',
    needles: ['aiza'],
    pattern: `AIza[${B64URL}]{35}`,
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'maps key AIzaSyD3kL9mQx7Zp2RtYb6Vn1Wc8Ue4Is5Oa7H', keeps: 'AIza is the prefix of Google API keys' },
  },
  {
    id: 'gcp_oauth_secret',
    title: 'Google OAuth client secrets, access tokens and refresh tokens',
    needles: ['gocspx-', 'ya29.', '1//0'],
    pattern: `(?:GOCSPX-[${B64URL}]{28}|ya29\\.[${B64URL}.]{20,2048}|1//0[${B64URL}]{40,512})`,
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'client secret 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', keeps: 'ya29 is a prefix' },
  },
  {
    id: 'azure_client_secret',
    title: 'Microsoft Entra (Azure AD) client secrets',
    needles: ['q~'],
    pattern: '[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}',
    boundary: 'A-Za-z0-9_~.-',
    example: { removes: 'AZURE_CLIENT_SECRET value Xk48Q~Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7', keeps: 'press Q~ to quit' },
  },
  {
    id: 'azure_sas_signature',
    keepsPrefix: true,
    title: 'the signature of an Azure shared access signature (SAS) URL or token',
    needles: ['sig='],
    pattern: '((?:[?&;]|^)sig=)[A-Za-z0-9%+/=]{20,256}',
    caseInsensitive: true,
    boundary: '',
    example: { removes: '?sv=2022-11-02&ss=b&sp=rl&se=2026-12-01T00:00:00Z&sig=Jq8Lm2Rt7Zw4Xc9Vb1Nk5Pd3Fg6Js0Ay%2BUe8Io%3D', keeps: 'sig=short' },
  },
  {
    id: 'digitalocean_token',
    title: 'DigitalOcean personal, OAuth and refresh tokens',
    needles: ['dop_v1_', 'doo_v1_', 'dor_v1_'],
    pattern: 'do[opr]_v1_[a-f0-9]{64}',
    example: { removes: 'deploy with dop_v1_536b3216fdaeeb975729fae923d5a4fd12aabfe228f219e9cb0eb53f16947ccf', keeps: 'dop_v1 tokens start with dop_v1_' },
  },
  // ------------------------------------------------------------------------------ source hosting and CI
  {
    id: 'github_token',
    title: 'GitHub classic, fine-grained, OAuth, app and refresh tokens',
    needles: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
    pattern: '(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})',
    example: { removes: 'GH_TOKEN=ghp_Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7Iy4T', keeps: 'the ghp_ prefix' },
  },
  {
    id: 'gitlab_token',
    title: 'GitLab personal, deploy, runner, trigger and other tokens',
    needles: ['glpat-', 'gldt-', 'glrt-', 'glptt-', 'glft-', 'glimt-', 'glagent-', 'gloas-', 'glcbt-', 'glsoat-', 'glffct-', 'gr1348941'],
    pattern: `(?:gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt|soat|ffct)-[${B64URL}]{20,80}|GR1348941[${B64URL}]{20,80})`,
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'PRIVATE-TOKEN: glpat-Rt2Lm9Qx4Zc8Vn1Hd5Jf', keeps: 'glpat- is the prefix' },
  },
  {
    id: 'ci_token',
    title: 'Atlassian, SonarQube, Pulumi, Postman, Linear, Doppler, Vault and Databricks tokens',
    needles: ['atatt3', 'sqp_', 'squ_', 'sqa_', 'pul-', 'pmak-', 'lin_api_', 'dp.', 'hvs.', 'hvb.', 'hvr.', 'dapi', 'nrak-', 'glsa_', 'figd_', 'pscale_'],
    pattern: [
      'ATATT3[A-Za-z0-9_=-]{150,250}',
      'sq[pua]_[a-f0-9]{40}',
      'pul-[a-f0-9]{40}',
      'PMAK-[a-f0-9]{24}-[a-f0-9]{34}',
      'lin_api_[A-Za-z0-9]{40}',
      'dp\\.(?:pt|st|ct|sa|scim|audit)\\.[A-Za-z0-9]{40,44}',
      `hv[sbr]\\.[${B64URL}]{24,200}`,
      'dapi[a-f0-9]{32}(?:-[0-9])?',
      'NRAK-[A-Z0-9]{27}',
      'glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}',
      `figd_[${B64URL}]{40,48}`,
      'pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}',
    ].join('|'),
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'VAULT_TOKEN=hvs.CAESIRt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7', keeps: 'see lin_api_ docs' },
  },
  // ------------------------------------------------------------------------------ package registries
  {
    id: 'npm_token',
    title: 'npm access tokens',
    needles: ['npm_'],
    pattern: 'npm_[A-Za-z0-9]{36}',
    example: { removes: 'publish token npm_FKcZjR4I0b3jRtaWr4Y9OJFLJOqOAf1lLQSA', keeps: 'npm_config_cache=/tmp/npm' },
  },
  {
    id: 'pypi_token',
    title: 'PyPI and TestPyPI upload tokens',
    needles: ['pypi-age'],
    pattern: `pypi-AgE[${B64URL}]{50,300}`,
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'password = pypi-AgEIcHlwaS5vcmcCJDZhZTk3Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7Iy4Tw9Rb1Mn8', keeps: 'pypi-AgE starts a PyPI token' },
  },
  {
    id: 'rubygems_key',
    title: 'RubyGems API keys',
    needles: ['rubygems_'],
    pattern: 'rubygems_[a-f0-9]{48}',
    example: { removes: 'GEM_HOST_API_KEY: rubygems_3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e6b3d9f2a7c1e5b8d', keeps: 'rubygems_version: 3.5.3' },
  },
  {
    id: 'nuget_key',
    title: 'NuGet API keys',
    needles: ['oy2'],
    pattern: 'oy2[a-z0-9]{43}',
    example: { removes: 'dotnet nuget push -k oy2zdmen2khvdgaj8gxbenyjqwx4hh5344tfjgvq4k7bn7', keeps: 'oy2 alone' },
  },
  // ------------------------------------------------------------------------------ chat
  {
    id: 'slack_token',
    title: 'Slack bot, user, app, configuration and refresh tokens',
    needles: ['xox', 'xapp-'],
    pattern: '(?:xox[abeoprs]-[A-Za-z0-9-]{10,250}|xapp-[A-Za-z0-9-]{10,250})',
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'SLACK_BOT_TOKEN=xoxb-2048-4096-Rt2Lm9Qx4Zc8Vn1Hd5Jf', keeps: 'xoxo from the team' },
  },
  {
    id: 'slack_webhook',
    keepsPrefix: true,
    title: 'the secret path of a Slack incoming webhook or workflow trigger',
    needles: ['hooks.slack.com'],
    pattern: '(hooks\\.slack\\.com/(?:services|workflows|triggers)/)[A-Za-z0-9+/_-]{20,200}',
    example: { removes: 'https://hooks.slack.com/services/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', keeps: 'https://api.slack.com/messaging/webhooks' },
  },
  {
    id: 'discord_webhook',
    keepsPrefix: true,
    title: 'the id and token of a Discord webhook URL',
    needles: ['/api/webhooks/'],
    pattern: `(discord(?:app)?\\.com/api/webhooks/)[0-9]{17,20}/[${B64URL}]{60,80}`,
    boundary: 'A-Za-z0-9_-',
    example: {
      removes: 'https://discord.com/api/webhooks/1187654321098765432/Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7Iy4Tw9Rb1Mn8Qz5Xc3Vd6Lh2Kj7Pf4Ws1Ae9Yg6Bu',
      keeps: 'https://discord.com/developers/docs',
    },
  },
  {
    id: 'discord_token',
    title: 'Discord bot tokens',
    needles: ['m', 'n', 'o'],
    pattern: `[MNO][${B64URL}]{23,27}\\.[${B64URL}]{6}\\.[${B64URL}]{27,40}`,
    boundary: 'A-Za-z0-9_.-',
    example: { removes: 'DISCORD_TOKEN=MTE4NzY1NDMyMTA5ODc2NTQzMg.Gk7Lm2.Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7Iy', keeps: 'Map.prototype.forEach' },
  },
  {
    id: 'telegram_bot_token',
    title: 'Telegram bot tokens',
    needles: [':aa'],
    // Also inside a Bot API URL, where `bot` sits right before the id.
    pattern: `(?:(?<=bot)|(?<![A-Za-z0-9_-]))[0-9]{8,10}:AA[${B64URL}]{33}(?![A-Za-z0-9_-])`,
    boundary: '',
    example: { removes: 'bot 7012345678:AAJaiXnkU8Is2g8nprvDd53x83rzjZZZZGe posts alerts', keeps: 'started at 12:AA' },
  },
  // ------------------------------------------------------------------------------ payments, mail, messaging
  {
    id: 'stripe_key',
    title: 'Stripe secret, restricted and publishable keys, webhook signing secrets',
    needles: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'pk_live_', 'pk_test_', 'whsec_'],
    pattern: '(?:[srp]k_(?:live|test)_[A-Za-z0-9]{10,250}|whsec_[A-Za-z0-9]{24,64})',
    example: { removes: 'STRIPE_SECRET_KEY=sk_live_51Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2', keeps: 'sk_live_ keys are live' },
  },
  {
    id: 'square_token',
    title: 'Square access tokens and application secrets',
    needles: ['sq0atp-', 'sq0csp-', 'eaaa'],
    pattern: `(?:sq0(?:atp|csp)-[${B64URL}]{22,43}|EAAA[A-Za-z0-9+=-]{60,})`,
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'SQUARE_TOKEN=sq0atp-Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp', keeps: 'sq0 is a prefix' },
  },
  {
    id: 'shopify_token',
    title: 'Shopify access tokens and shared secrets',
    needles: ['shpat_', 'shpss_', 'shpca_', 'shppa_'],
    pattern: 'shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}',
    example: { removes: 'X-Shopify-Access-Token: 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', keeps: 'shpat_ tokens' },
  },
  {
    id: 'twilio_key',
    title: 'Twilio API key SIDs',
    needles: ['sk'],
    pattern: 'SK[0-9a-f]{32}',
    example: { removes: 'TWILIO_API_KEY=SK3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e', keeps: 'SKU 12345' },
  },
  {
    id: 'twilio_auth_token',
    keepsPrefix: true,
    title: 'a Twilio auth token written next to its account SID',
    needles: ['ac'],
    pattern: `(AC[0-9a-f]{32}["']?[ \\t]{0,4}[,:][ \\t]{0,4}["']?)[0-9a-f]{32}`,
    example: { removes: 'Client("AC3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e", "9b2d7f1a4c8e6b3d3f9a2c7e1b8d4f6a")', keeps: 'account AC3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e' },
  },
  {
    id: 'sendgrid_key',
    title: 'SendGrid API keys',
    needles: ['sg.'],
    pattern: `SG\\.[${B64URL}]{16,32}\\.[${B64URL}]{16,64}`,
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'SENDGRID_API_KEY=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', keeps: 'SG.net is a domain' },
  },
  {
    id: 'mailgun_key',
    title: 'Mailgun API keys (key- and the newer hex-hex-hex form)',
    needles: ['key-', '-'],
    pattern: '(?:key-[0-9a-f]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})',
    example: { removes: 'MAILGUN_API_KEY=key-3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e', keeps: 'key-value store' },
  },
  {
    id: 'saas_token',
    title: 'Airtable, Notion, Dropbox, Sentry, Mapbox and age secret keys',
    needles: ['pat', 'secret_', 'ntn_', 'sl.', 'sntrys_', 'sk.eyj', 'age-secret-key-1'],
    pattern: [
      'pat[A-Za-z0-9]{14}\\.[a-f0-9]{64}',
      'secret_[A-Za-z0-9]{43}',
      'ntn_[A-Za-z0-9]{46}',
      `sl\\.[${B64URL}]{130,200}`,
      'sntrys_[A-Za-z0-9+/=_]{80,300}',
      `sk\\.eyJ[${B64URL}]{20,300}\\.[${B64URL}]{20,100}`,
      'AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}',
    ].join('|'),
    boundary: 'A-Za-z0-9_-',
    example: { removes: 'notion integration secret_XJsi6BwhTp3Fs2QhX6KWxOiixgVoOnzyw2MzP0ZvzOM', keeps: 'secret_name: prod-db' },
  },
  {
    id: 'django_secret_key',
    title: "Django secret keys as startproject writes them (the django-insecure- prefix and get_random_secret_key()'s alphabet)",
    needles: ['django-insecure-'],
    pattern: '(?<![A-Za-z0-9_])django-insecure-[a-z0-9!@#$%^&*(\\-_=+)]{32,100}',
    boundary: '',
    example: { removes: "SECRET_KEY = os.environ.get('SECRET_KEY', 'django-insecure-k3$9f!x2q@m7z#l1w&v8b^n0p)r4t(y6u_e5i*o+g=h-j')", keeps: 'the django-insecure- prefix marks a key for development' },
  },
  // ------------------------------------------------------------------------------ generic formats
  {
    id: 'jwt',
    title: 'JSON Web Tokens (header.payload.signature)',
    needles: ['eyj'],
    // The signature may be missing: a token wrapped at the end of a line (its tail is a continuation).
    pattern: `eyJ[${B64URL}]{5,4096}\\.eyJ[${B64URL}]{5,16384}(?:\\.[${B64URL}]{0,4096})?`,
    boundary: 'A-Za-z0-9_-',
    example: {
      removes: 'Cookie: jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1XzQyIn0.Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7Iy4Tw9Rb1',
      keeps: 'JsonWebTokenError: jwt malformed',
    },
  },
];
