/**
 * Secret-redaction corpus.
 *
 * SECRET_CASES are realistic snippets an engineer or an agent would write (a .env line, a YAML,
 * JSON, TOML or INI fragment, a shell export, a CLI flag, a curl command, an HTTP header, a log
 * line, a stack trace, a markdown note) that hold one or more credentials. Every value is fake but
 * format-correct: the right prefix, length and alphabet as the provider issues it, with random
 * characters generated for this file. None of them is, or ever was, a live credential.
 *
 * BENIGN_CASES are look-alikes that hold no secret: git SHAs, UUIDs, integrity hashes and digests,
 * paths, URLs without credentials, colours, long identifiers, config keys with non-secret values,
 * references to secrets by name (`${DB_PASSWORD}`, `process.env.API_KEY`), prose about tokens and
 * passwords, versions, timestamps, addresses, stack traces, package and image names.
 *
 * Every case is pushed through the redaction engine, through every ingest command and through
 * every output path. For a secret case no string in `secrets` may survive (in the output, and in
 * the SQLite database file: a secret must never reach it), while every string in `keeps` must.
 * A benign case must come back byte-identical.
 *
 * Invariants of this file (check them with a throwaway script after editing it; nothing here runs
 * at module load): ids are unique; every secret and every keep is a substring of its own text; no
 * keep contains a secret of its case; every secret is at least 8 characters long; no secret occurs
 * in the text of any other case, secret or benign.
 */

/** A text holding one or more secrets; after redaction none of `secrets` may remain and every `keeps` must. */
export interface SecretCase {
  /** Unique, kebab-case. */
  id: string;
  /** The kind of credential (aws, gcp, github, ..., assignment, tricky). */
  family: string;
  /** A realistic snippet holding the secrets. */
  text: string;
  /** Exact substrings of `text` that are secret values (values only, never key names, users or hosts). */
  secrets: string[];
  /** Exact substrings of `text` that must survive: key names, hosts, user names, surrounding words. */
  keeps?: string[];
}

/** A text with no secret: it must come back byte-identical. */
export interface BenignCase {
  id: string;
  family: string;
  text: string;
}

export const SECRET_CASES: readonly SecretCase[] = [
  // ---- aws -------------------------------------------------------------------------------------------
  // AWS: access key ids (AKIA long-term, ASIA temporary), 40-char secret access keys, STS session
  // tokens.
  {
    id: 'aws-credentials-file',
    family: 'aws',
    text: '# ~/.aws/credentials\n' +
      '[default]\n' +
      'aws_access_key_id = AKIAPN4LPZBHQV37YNRZ\n' +
      'aws_secret_access_key = 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\n' +
      'region = eu-central-1\n',
    secrets: ['AKIAPN4LPZBHQV37YNRZ', 'fuO1CEPUQLIRBM+7QaJC1VZKah2w5wW3DvCveYV2'],
    keeps: [
      '# ~/.aws/credentials',
      '[default]',
      'aws_access_key_id',
      'aws_secret_access_key',
      'region = eu-central-1',
    ],
  },
  {
    id: 'aws-session-env-export',
    family: 'aws',
    text: 'export AWS_ACCESS_KEY_ID=ASIA42MCQAOPKQ7ESEST\n' +
      'export AWS_SECRET_ACCESS_KEY=iswth9OhnHbLcROi1B04lmwjEe7KKkVhYzWha9QP\n' +
      'export AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEkYldeAkscx0SZHlx+UY6RKgkREoXYJ8LQ0OHt9E6972hD2RZms/2xyg0m+VziKahEkkdwnGdDYGxqXjpqGsL737xm5GiccmyxgMzoNvVmIABLiQ/LP1j7yru8PVxBPU6SEV5k5KReyuC9CJMUh6DyghGUY/QrnZWSew9J/A0QZ6xAlb8jAyRklA79GdBafr8yfIVLACNg1wpEa4O5QVQ1nRsJPsfm+ic6uqXCyp6NSbBGXqoSUYGvydwB421YEzJ0pnysce1DsHmA2G4rbnNI4cYG815loGD13vHFMIzJv2zGwL5ff3vXde2ZUnKjY8+IpfMfvGQHYIr+JY2TUsmiVcXZYLchvYwEERnY+plP65AhaNOCvsM6IO\n',
    secrets: [
      'ASIA42MCQAOPKQ7ESEST',
      'iswth9OhnHbLcROi1B04lmwjEe7KKkVhYzWha9QP',
      'IQoJb3JpZ2luX2VjEkYldeAkscx0SZHlx+UY6RKgkREoXYJ8LQ0OHt9E6972hD2RZms/2xyg0m+VziKahEkkdwnGdDYGxqXjpqGsL737xm5GiccmyxgMzoNvVmIABLiQ/LP1j7yru8PVxBPU6SEV5k5KReyuC9CJMUh6DyghGUY/QrnZWSew9J/A0QZ6xAlb8jAyRklA79GdBafr8yfIVLACNg1wpEa4O5QVQ1nRsJPsfm+ic6uqXCyp6NSbBGXqoSUYGvydwB421YEzJ0pnysce1DsHmA2G4rbnNI4cYG815loGD13vHFMIzJv2zGwL5ff3vXde2ZUnKjY8+IpfMfvGQHYIr+JY2TUsmiVcXZYLchvYwEERnY+plP65AhaNOCvsM6IO',
    ],
    keeps: ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'],
  },
  {
    id: 'aws-sts-assume-role-json',
    family: 'aws',
    text: '$ aws sts assume-role --role-arn arn:aws:iam::123456789012:role/deploy --role-session-name ci-4821\n' +
      '{\n' +
      '    "Credentials": {\n' +
      '        "AccessKeyId": "ASIAEWBBLS2F2CRGFVYF",\n' +
      '        "SecretAccessKey": "r20t+JHIyOJGyVJsbphlJJg7Cj+f6WZ7uejssBmw",\n' +
      '        "SessionToken": "FwoGZXIvYXdzE4xbxEL31wUapG+1X4tublVmSbDY8ZFMsRZLIX/K0CGCnfV2m3InjccKMT+5gXyqpfiFGGVgjQ1vAk4XCdYGXE8C0On2epm8eqPEdbFr21mIzlPtvrdzKFdBIof9sT2TnUdQjJQXEKa4O++hWOny3GrLDYxWC8EleArZlnNaEIgSbM08jLLYVodFqQesE5JaVdrCxHzjFFA7yu4ZBFxXUBZH8PDyTTYeB6oNCDLyjyS/TdXLipSmKrf5/NRK2gHaeu02KqTyz0E5NvjehP4QxpL10L6NmHoJjq==",\n' +
      '        "Expiration": "2024-06-11T10:12:44+00:00"\n' +
      '    },\n' +
      '    "AssumedRoleUser": {\n' +
      '        "Arn": "arn:aws:sts::123456789012:assumed-role/deploy/ci-4821"\n' +
      '    }\n' +
      '}',
    secrets: [
      'ASIAEWBBLS2F2CRGFVYF',
      'r20t+JHIyOJGyVJsbphlJJg7Cj+f6WZ7uejssBmw',
      'FwoGZXIvYXdzE4xbxEL31wUapG+1X4tublVmSbDY8ZFMsRZLIX/K0CGCnfV2m3InjccKMT+5gXyqpfiFGGVgjQ1vAk4XCdYGXE8C0On2epm8eqPEdbFr21mIzlPtvrdzKFdBIof9sT2TnUdQjJQXEKa4O++hWOny3GrLDYxWC8EleArZlnNaEIgSbM08jLLYVodFqQesE5JaVdrCxHzjFFA7yu4ZBFxXUBZH8PDyTTYeB6oNCDLyjyS/TdXLipSmKrf5/NRK2gHaeu02KqTyz0E5NvjehP4QxpL10L6NmHoJjq==',
    ],
    keeps: [
      '--role-session-name ci-4821',
      '"AccessKeyId"',
      '"SecretAccessKey"',
      '"SessionToken"',
      '"Expiration": "2024-06-11T10:12:44+00:00"',
      'arn:aws:sts::123456789012:assumed-role/deploy/ci-4821',
    ],
  },
  {
    id: 'aws-github-actions-yaml',
    family: 'aws',
    text: '- name: Configure AWS credentials\n' +
      '  uses: aws-actions/configure-aws-credentials@v4\n' +
      '  with:\n' +
      '    aws-access-key-id: AKIAA5CBOWZJFKKM3ZKK\n' +
      '    aws-secret-access-key: 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\n' +
      '    aws-region: us-east-1\n',
    secrets: ['AKIAA5CBOWZJFKKM3ZKK', 'ESAeuXzdE3oBdEwLIcnwdBCJWyB5AtO9Wj2SApX/'],
    keeps: [
      'aws-actions/configure-aws-credentials@v4',
      'aws-access-key-id',
      'aws-secret-access-key',
      'aws-region: us-east-1',
    ],
  },
  {
    id: 'aws-debug-log-line',
    family: 'aws',
    text: '2024-06-11 09:12:44,118 DEBUG [botocore.credentials] Loaded static credentials access_key=AKIAAUMUXXLG5XVFWZB5 secret_key=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 method=shared-credentials-file',
    secrets: ['AKIAAUMUXXLG5XVFWZB5', 'PbonQ8kpuYflfnqSgcNvAOdit684heVndquEvj3N'],
    keeps: [
      '2024-06-11 09:12:44,118 DEBUG [botocore.credentials]',
      'access_key',
      'secret_key',
      'method=shared-credentials-file',
    ],
  },
  {
    id: 'aws-configure-set-cli',
    family: 'aws',
    text: '$ aws configure set aws_access_key_id AKIAT4ZXZZCLQAOFG3BV --profile staging\n' +
      '$ aws configure set aws_secret_access_key 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 --profile staging\n' +
      '$ aws s3 ls --profile staging',
    secrets: ['AKIAT4ZXZZCLQAOFG3BV', 'lqMuKv/SuFeeH2XXzgA6K1vZnvBs7x20jZeCOx2Y'],
    keeps: [
      'aws configure set aws_access_key_id',
      'aws_secret_access_key',
      '--profile staging',
      '$ aws s3 ls',
    ],
  },
  {
    id: 'aws-terraform-provider',
    family: 'aws',
    text: 'provider "aws" {\n' +
      '  region     = "us-west-2"\n' +
      '  access_key = "AKIAQZRKSJISMISLWPTW"\n' +
      '  secret_key = "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"\n' +
      '}\n',
    secrets: ['AKIAQZRKSJISMISLWPTW', 'fcSJnnonSUvTOuLZQptKzFWc7dXD7ybfgakJ9kZ2'],
    keeps: ['provider "aws"', 'region     = "us-west-2"', 'access_key', 'secret_key'],
  },
  {
    id: 'aws-docker-run-env-flags',
    family: 'aws',
    text: 'docker run --rm -e AWS_ACCESS_KEY_ID=AKIAX4RJ4K57R52TTAEW -e AWS_SECRET_ACCESS_KEY=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 -e AWS_DEFAULT_REGION=ap-southeast-2 amazon/aws-cli s3 sync ./dist s3://acme-web-assets',
    secrets: ['AKIAX4RJ4K57R52TTAEW', 'J8pDOtxDXkK1Ok1PLm62yuC/WVV0hUiCAfWvHYaD'],
    keeps: [
      'docker run --rm',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_DEFAULT_REGION=ap-southeast-2',
      'amazon/aws-cli s3 sync ./dist s3://acme-web-assets',
    ],
  },
  {
    id: 'aws-boto3-python',
    family: 'aws',
    text: 'import boto3\n' +
      '\n' +
      's3 = boto3.client(\n' +
      '    "s3",\n' +
      '    aws_access_key_id="AKIA7CUBFB6FSWBXYSPT",\n' +
      '    aws_secret_access_key="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",\n' +
      '    region_name="eu-west-1",\n' +
      ')\n',
    secrets: ['AKIA7CUBFB6FSWBXYSPT', 'VhccHA4+Wk2LBjhOQKxoCUl5p+/2E0b7pGdSNJjc'],
    keeps: ['import boto3', 'aws_access_key_id', 'aws_secret_access_key', 'region_name="eu-west-1"'],
  },
  {
    id: 'aws-access-key-id-prose',
    family: 'aws',
    text: 'Found AKIAGR2GKPRIULMHZDYT in the CloudTrail event for the failed PutObject calls.',
    secrets: ['AKIAGR2GKPRIULMHZDYT'],
    keeps: ['Found', 'in the CloudTrail event for the failed PutObject calls.'],
  },
  {
    id: 'aws-session-token-profile',
    family: 'aws',
    text: '[prod-readonly]\n' +
      'aws_session_token = IQoJb3JpZ2luX2VjEPTctstSf7WOgl/CV58MCG84omt8VnRO/io91Fuq7A3eJcNfTLOFlVpqDPcnFT7GQ6Gqxma/jOud8fQ9a0WxCgLjrfy+w13y69NOSGRs124dr7QBDDSbLJgRgZXb99fIVAjLWViLgTCV77YIt2R1ZNq1D6uXhvuvU2LH2s8FEbxrrNB/LSVoOixAC/APFnlkUK9ja0VmUNoLkI0/SKIz6zXbYXyi8FonVh+hELMGGdSCgtFS2Omtqwz8bCE3TUc0pJeLUgBUo2NNz563lcxcs5XgHrRHvmMoJx0GyeDZWwxDCuPOW4frxKqhx65bYNNJUu+bUWeOPDc3adw74+mtMR52mAaGEIKpj2XY4kJ6tcVk2ZSFXh/45DJQ1uFd/Lw4GwbnT7vpp8stQcaEICB7VHUCLupemgiEEi8QJEv=\n',
    secrets: [
      'IQoJb3JpZ2luX2VjEPTctstSf7WOgl/CV58MCG84omt8VnRO/io91Fuq7A3eJcNfTLOFlVpqDPcnFT7GQ6Gqxma/jOud8fQ9a0WxCgLjrfy+w13y69NOSGRs124dr7QBDDSbLJgRgZXb99fIVAjLWViLgTCV77YIt2R1ZNq1D6uXhvuvU2LH2s8FEbxrrNB/LSVoOixAC/APFnlkUK9ja0VmUNoLkI0/SKIz6zXbYXyi8FonVh+hELMGGdSCgtFS2Omtqwz8bCE3TUc0pJeLUgBUo2NNz563lcxcs5XgHrRHvmMoJx0GyeDZWwxDCuPOW4frxKqhx65bYNNJUu+bUWeOPDc3adw74+mtMR52mAaGEIKpj2XY4kJ6tcVk2ZSFXh/45DJQ1uFd/Lw4GwbnT7vpp8stQcaEICB7VHUCLupemgiEEi8QJEv=',
    ],
    keeps: ['[prod-readonly]', 'aws_session_token'],
  },

  // ---- gcp -------------------------------------------------------------------------------------------
  // Google Cloud: AIza API keys, service-account JSON (private_key with literal \n escapes,
  // private_key_id), OAuth client secrets.
  {
    id: 'gcp-api-key-env',
    family: 'gcp',
    text: 'GOOGLE_MAPS_API_KEY=AIza1OQx8OzJ1P7djAjoRh1u99kpo9jdE_zlrnF',
    secrets: ['AIza1OQx8OzJ1P7djAjoRh1u99kpo9jdE_zlrnF'],
    keeps: ['GOOGLE_MAPS_API_KEY'],
  },
  {
    id: 'gcp-api-key-curl-query',
    family: 'gcp',
    text: 'curl -s "https://maps.googleapis.com/maps/api/geocode/json?address=1600+Amphitheatre+Parkway&key=AIzakX3OBy3_2kR0PjudLzLh-HQAwp2ypeseFi_"',
    secrets: ['AIzakX3OBy3_2kR0PjudLzLh-HQAwp2ypeseFi_'],
    keeps: [
      'curl -s',
      'https://maps.googleapis.com/maps/api/geocode/json',
      'address=1600+Amphitheatre+Parkway',
    ],
  },
  {
    id: 'gcp-firebase-config-ts',
    family: 'gcp',
    text: 'const firebaseConfig = {\n' +
      "  apiKey: 'AIzarfEe5AqJ3ukdLKzQmX4uBjukcL9-qz9MuBv',\n" +
      "  authDomain: 'acme-prod.firebaseapp.com',\n" +
      "  projectId: 'acme-prod',\n" +
      "  storageBucket: 'acme-prod.appspot.com',\n" +
      '};\n',
    secrets: ['AIzarfEe5AqJ3ukdLKzQmX4uBjukcL9-qz9MuBv'],
    keeps: [
      'const firebaseConfig',
      'apiKey',
      "authDomain: 'acme-prod.firebaseapp.com'",
      "projectId: 'acme-prod'",
    ],
  },
  {
    id: 'gcp-api-key-request-log',
    family: 'gcp',
    text: '[2024-06-11T09:12:44.118Z] POST https://generativelanguage.googleapis.com/v1beta/models/gemini-1.5-flash:generateContent?key=AIzaZAfCzKh_HiL9ktJZpdk8yLA7sruFHMbpsq6 -> 429 RESOURCE_EXHAUSTED',
    secrets: ['AIzaZAfCzKh_HiL9ktJZpdk8yLA7sruFHMbpsq6'],
    keeps: [
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-1.5-flash:generateContent',
      '-> 429 RESOURCE_EXHAUSTED',
    ],
  },
  {
    id: 'gcp-service-account-json',
    family: 'gcp',
    text: '{\n' +
      '  "type": "service_account",\n' +
      '  "project_id": "acme-analytics-prod",\n' +
      '  "private_key_id": "6db1455838e8f2bba3fe7d05fd39bd865fb8e7aa",\n' +
      '  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQhsBw66+Kh9N2QN\\nibDPkccQ/zs8xl8iHSJtUNvxb7HfayrYuKoL8PgmWtpfMVSiVxB96IvaLjJNLStx\\nSlVfM5Dp/0BTqbKEoruP2Guper+pg8lQ29LZP9/iZ2EF/x6bLDs9qxTHvP3RKLbk\\nNtEBkNzmRQsF+cejx6VjQGBQ/fDlcUaLGq15MY9JVyd4FD0DX9Mf3kNLTprNgc1h\\naSmrxjxvaX1BMicFUsBIgHY6wVSFMPt8tZHfPwNcq/i+oia4bz4BMQEauv4d0z2N\\nkcjprvc5iXFPt8a85OCEwCXUBVv/cdLKQ/OS8LGVqbqHhKBAEcGluRoV51n85RKI\\nBFP+WPmS7I8dZrYOPIKsTLo0gPKd5efmug4hcWE4HVWP4nLTJnew3GIlMcGSMU6b\\n/cmTuJp30IwN2A0T9I4wFWgIteeyLoSY9ZJL4QAQKUJNBVacZlPvjLqp+I8EANUC\\nJkonWdj56fClFRnjC86REnsAjTg65jWUkx8f3gqFPCBPZZ3NV9PPRrh7ZHYPEpOx\\n1aTXfqKC7YHvl+CQJACPcF27eMl+ce6n20PxwiFM/nUmMMA4wR9s/UHr/YsbxCAS\\np2mof1z5q4mciukStIAT6cNEsHrOX+ope8X98RDYGES6Y2LKyTHoQFY5/+/Ys0wE\\nML4lTwaeJwAQEMkWRlGEterG97bRfnMhp9rWEHHa/qEi47GVACBGoaHtwVfWnkak\\no9xu5FmItYGaOgwuRpaKZxKyu+GYT9o5RNdhMsN2FTyFk4wWHMvAncCWJbAXpfwA\\nwVpv4lADG+dy+WD/OpF8MxNqYsqlLLdQhw8AFnoU7mXSqti5vAUE3m75VM/lwJMW\\nSDTsrB0GRArRIyHTffAEjT/O49fs95MdhXai6nPOWeReOG3Nbr93NXKTRASNY2ub\\nehuRfX6en/FXuYzJto7bPr0IO6Vkb+jXwy4Cu6IiU1GIgmswo7DZGmcBo/0jJlpn\\n58mmuHnSbm7LK3EaJ2Gn6aJjo4iRxTEKN94Z7NiiXiDTKrqOuowXM2Sz7yr6Zqvh\\nQnA6fSWUCnR6kWLuYbD51YrQYau+5Q+XVLPVkkUj4jRWbLWKRM4ndisImepwEH8a\\n1kZch1oV8Mj7CKqy2e8So70JwOw1gudGJoQV2j+XxTTRJiYP0E6/Eve8b/XZRr40\\nDzleYykKulw1JNeoD9R7Pr7Z8x1JOMWsu/wvU8e63ta/9LvnrSuwmvCEQcr4m1Oh\\nkaS0bwZBCPAfw2jgb3GFq67bZ4nqQeIeDEGcaBaoF9FM61qpV4B0jmqNqsRzf1Fj\\nGySiC2dqQHbwrqsD2yxZ7wvqmAsTHyndBTB+K7Puz3RE+xD2X6iP8qjDttJo1Zj2\\nnbc2bA7e08XohJyQ1mdqj8hiesvCNSQAGCYABet2WyWIkXuvP2l7kJSU+ZXwUtld\\nBUv5m1srpQOC8OdCUOMylhy0JzVQTtBKvgELo0zSUv3Kw82kbprXRnqBlB8B3i0i\\nftXxtRtcTyjACT8UPf1rnE/AiIFVx2YswwNks3qrKGJCdYZS2HO7+Sz2Df5Zk/r/\\naPAW242UWAn9CJbtB/5WHTMW\\n-----END PRIVATE KEY-----\\n",\n' +
      '  "client_email": "bq-loader@acme-analytics-prod.iam.gserviceaccount.com",\n' +
      '  "client_id": "104822661193742091773",\n' +
      '  "auth_uri": "https://accounts.google.com/o/oauth2/auth",\n' +
      '  "token_uri": "https://oauth2.googleapis.com/token",\n' +
      '  "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",\n' +
      '  "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/bq-loader%40acme-analytics-prod.iam.gserviceaccount.com",\n' +
      '  "universe_domain": "googleapis.com"\n' +
      '}\n',
    secrets: [
      '6db1455838e8f2bba3fe7d05fd39bd865fb8e7aa',
      'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQhsBw66+Kh9N2QN',
      'ibDPkccQ/zs8xl8iHSJtUNvxb7HfayrYuKoL8PgmWtpfMVSiVxB96IvaLjJNLStx',
      'SlVfM5Dp/0BTqbKEoruP2Guper+pg8lQ29LZP9/iZ2EF/x6bLDs9qxTHvP3RKLbk',
      'NtEBkNzmRQsF+cejx6VjQGBQ/fDlcUaLGq15MY9JVyd4FD0DX9Mf3kNLTprNgc1h',
      'aSmrxjxvaX1BMicFUsBIgHY6wVSFMPt8tZHfPwNcq/i+oia4bz4BMQEauv4d0z2N',
      'kcjprvc5iXFPt8a85OCEwCXUBVv/cdLKQ/OS8LGVqbqHhKBAEcGluRoV51n85RKI',
      'BFP+WPmS7I8dZrYOPIKsTLo0gPKd5efmug4hcWE4HVWP4nLTJnew3GIlMcGSMU6b',
      '/cmTuJp30IwN2A0T9I4wFWgIteeyLoSY9ZJL4QAQKUJNBVacZlPvjLqp+I8EANUC',
      'JkonWdj56fClFRnjC86REnsAjTg65jWUkx8f3gqFPCBPZZ3NV9PPRrh7ZHYPEpOx',
      '1aTXfqKC7YHvl+CQJACPcF27eMl+ce6n20PxwiFM/nUmMMA4wR9s/UHr/YsbxCAS',
      'p2mof1z5q4mciukStIAT6cNEsHrOX+ope8X98RDYGES6Y2LKyTHoQFY5/+/Ys0wE',
      'ML4lTwaeJwAQEMkWRlGEterG97bRfnMhp9rWEHHa/qEi47GVACBGoaHtwVfWnkak',
      'o9xu5FmItYGaOgwuRpaKZxKyu+GYT9o5RNdhMsN2FTyFk4wWHMvAncCWJbAXpfwA',
      'wVpv4lADG+dy+WD/OpF8MxNqYsqlLLdQhw8AFnoU7mXSqti5vAUE3m75VM/lwJMW',
      'SDTsrB0GRArRIyHTffAEjT/O49fs95MdhXai6nPOWeReOG3Nbr93NXKTRASNY2ub',
      'ehuRfX6en/FXuYzJto7bPr0IO6Vkb+jXwy4Cu6IiU1GIgmswo7DZGmcBo/0jJlpn',
      '58mmuHnSbm7LK3EaJ2Gn6aJjo4iRxTEKN94Z7NiiXiDTKrqOuowXM2Sz7yr6Zqvh',
      'QnA6fSWUCnR6kWLuYbD51YrQYau+5Q+XVLPVkkUj4jRWbLWKRM4ndisImepwEH8a',
      '1kZch1oV8Mj7CKqy2e8So70JwOw1gudGJoQV2j+XxTTRJiYP0E6/Eve8b/XZRr40',
      'DzleYykKulw1JNeoD9R7Pr7Z8x1JOMWsu/wvU8e63ta/9LvnrSuwmvCEQcr4m1Oh',
      'kaS0bwZBCPAfw2jgb3GFq67bZ4nqQeIeDEGcaBaoF9FM61qpV4B0jmqNqsRzf1Fj',
      'GySiC2dqQHbwrqsD2yxZ7wvqmAsTHyndBTB+K7Puz3RE+xD2X6iP8qjDttJo1Zj2',
      'nbc2bA7e08XohJyQ1mdqj8hiesvCNSQAGCYABet2WyWIkXuvP2l7kJSU+ZXwUtld',
      'BUv5m1srpQOC8OdCUOMylhy0JzVQTtBKvgELo0zSUv3Kw82kbprXRnqBlB8B3i0i',
      'ftXxtRtcTyjACT8UPf1rnE/AiIFVx2YswwNks3qrKGJCdYZS2HO7+Sz2Df5Zk/r/',
      'aPAW242UWAn9CJbtB/5WHTMW',
    ],
    keeps: [
      '"type": "service_account"',
      '"project_id": "acme-analytics-prod"',
      '"private_key_id"',
      '"private_key"',
      '"client_email": "bq-loader@acme-analytics-prod.iam.gserviceaccount.com"',
      '"token_uri": "https://oauth2.googleapis.com/token"',
    ],
  },
  {
    id: 'gcp-service-account-env-one-line',
    family: 'gcp',
    text: 'GOOGLE_APPLICATION_CREDENTIALS_JSON=\'{"type":"service_account","project_id":"acme-ci","private_key_id":"c752b4da5d1b84dce885f6d42d0830382f7466f2","private_key":"-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQcvSqGAgBngukEJ\\nUwzLJ5y226X3oLL2H2y73JP5kaFP1OIJqA2vvte2u0vE6su9guvxchrg15NJrlOR\\nRp8JNOePVokOuR2uIAE8TrY0n4e2DoVyK2esbqKDRDx0HzUZH392MkI2L8SvmrK1\\npzyDlB2SOcQbg1rnQObJoDzpKxdi/kniJUVXitIe+WeIMLajFDxJrAT1HF3mvRPS\\nifh8SuPEOEoGW0kSpltlqmX9ZWIFCJfHTsYtvbSqfQU1dUrxv5Flk0JZu2YVxFOo\\nRdD7ikDZhHNEGdW+GIYV+B0RaRDzk5VgIfsrb+W7fqBSMlupdC8KuoEDf22769yN\\nYqUqOqHcozp8GWb+9BXwV54CRoz8uKlF3o8bLTgRmpfBodlWBmp9bqWv0t8rw/fO\\nnMTziJ2+CsK0yW5ZbKHkQIb68SCD5//tlNKcDdXE5KLlIsUU5eT4chWwdDqcog6E\\nWvNxDF+2V/jJ4NhgGBTusFmP0Vu8Wd6TO/D05RnsJc9GcGDcYsYZ00uQZvDgFKxV\\nM40ZEV1aWVRXk7rGGWTpBtvXk5Hsxb25m241F5f5IJZKoZlCnRNKUEoZBJZjm/k8\\nOUlHOczjshy3I9ToHOCUyJgF9Z/JrZXd5tsESdlk82moCSKtrdqEST0sHWS00pbg\\nORZ4k0CA73xHBh4oKxyND/wsQFnoG7DvwCMwZtHjQbUy4NWLYNqpmTbOxYa74hEZ\\n5sMYgZ4do2t5ReWxRao8Ns+NiaW77+AiBgwK5zUM5l6B3sQq3wqHQr1aidqJx880\\nmOwixx12PnBR67DbhBh1jkH0hIB4iwr9VZUZkrqcGJmrMhyVsbnDXrLI3W50wiiB\\n94q0VdhqHu8X76iPUPqfKlo12K0aJajmD6MBCdKkjeC2p8M3TM7OWE6jeFSvPSQD\\nqjooBukf3XYB45dMoUmUY5rhixGsB5WraszyxaKn+BN/O7dLoCFkctREW6MXn+b2\\nxhofrZgeG26gZT/bhNvXyn1ZHIbV1BTlOpZcTiIx2iKmLBXorU4uv8WFqyBaB7QE\\nCIXWZasqhKVLupMKbjIN/1Y2mEqi364O/SWNMrN/SkqPnOBrV7egqyrqzb1OoCxn\\n3OdVgPtragNYZzeTWB8yV8vgJEKJA0VpaZRFi64bQc7Nq6fpVi3PrZ8Q8qH9RGFr\\nQk+X5l89SIKheRBayaPWFvmmJmSs7x2aMnwXK8i9ALpPctWzseT6KcmezhK7C7fl\\nym9o58BZperPU/+9EHBUD38y3ndS9R4C+D/fjHO2v5OkY7J6VVFnMFf61yPURKv4\\neXuSERIXeHLiFzWWuce4GvLI5n3DvXyZkvWKHWTAOQjrWu35uWlZy2iEdfT5vwPX\\n/Sh7UuPtb+7MB+YKwEsw9UPVr0XKGXz2kCE0CMVEJZ4uSkWedOiZk6GrxOw2k6rs\\nOTGoDYr1FO6yDFEJX3mOgZ20RrVr7UGN5xvMkRZd9DkkHINd21qMyz06hFNvWG1H\\nRka9w9n28v70xuKNwcmPNlxDRHxJp/8mE1xfX8nhg1MeVfv0A4GRYIuaqz0Pebi5\\nhAa7CirXBIcW0wKBLPCvsms8\\n-----END PRIVATE KEY-----\\n","client_email":"deployer@acme-ci.iam.gserviceaccount.com","client_id":"117301842259061448205"}\'',
    secrets: [
      'c752b4da5d1b84dce885f6d42d0830382f7466f2',
      'MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQcvSqGAgBngukEJ',
      'UwzLJ5y226X3oLL2H2y73JP5kaFP1OIJqA2vvte2u0vE6su9guvxchrg15NJrlOR',
      'Rp8JNOePVokOuR2uIAE8TrY0n4e2DoVyK2esbqKDRDx0HzUZH392MkI2L8SvmrK1',
      'pzyDlB2SOcQbg1rnQObJoDzpKxdi/kniJUVXitIe+WeIMLajFDxJrAT1HF3mvRPS',
      'ifh8SuPEOEoGW0kSpltlqmX9ZWIFCJfHTsYtvbSqfQU1dUrxv5Flk0JZu2YVxFOo',
      'RdD7ikDZhHNEGdW+GIYV+B0RaRDzk5VgIfsrb+W7fqBSMlupdC8KuoEDf22769yN',
      'YqUqOqHcozp8GWb+9BXwV54CRoz8uKlF3o8bLTgRmpfBodlWBmp9bqWv0t8rw/fO',
      'nMTziJ2+CsK0yW5ZbKHkQIb68SCD5//tlNKcDdXE5KLlIsUU5eT4chWwdDqcog6E',
      'WvNxDF+2V/jJ4NhgGBTusFmP0Vu8Wd6TO/D05RnsJc9GcGDcYsYZ00uQZvDgFKxV',
      'M40ZEV1aWVRXk7rGGWTpBtvXk5Hsxb25m241F5f5IJZKoZlCnRNKUEoZBJZjm/k8',
      'OUlHOczjshy3I9ToHOCUyJgF9Z/JrZXd5tsESdlk82moCSKtrdqEST0sHWS00pbg',
      'ORZ4k0CA73xHBh4oKxyND/wsQFnoG7DvwCMwZtHjQbUy4NWLYNqpmTbOxYa74hEZ',
      '5sMYgZ4do2t5ReWxRao8Ns+NiaW77+AiBgwK5zUM5l6B3sQq3wqHQr1aidqJx880',
      'mOwixx12PnBR67DbhBh1jkH0hIB4iwr9VZUZkrqcGJmrMhyVsbnDXrLI3W50wiiB',
      '94q0VdhqHu8X76iPUPqfKlo12K0aJajmD6MBCdKkjeC2p8M3TM7OWE6jeFSvPSQD',
      'qjooBukf3XYB45dMoUmUY5rhixGsB5WraszyxaKn+BN/O7dLoCFkctREW6MXn+b2',
      'xhofrZgeG26gZT/bhNvXyn1ZHIbV1BTlOpZcTiIx2iKmLBXorU4uv8WFqyBaB7QE',
      'CIXWZasqhKVLupMKbjIN/1Y2mEqi364O/SWNMrN/SkqPnOBrV7egqyrqzb1OoCxn',
      '3OdVgPtragNYZzeTWB8yV8vgJEKJA0VpaZRFi64bQc7Nq6fpVi3PrZ8Q8qH9RGFr',
      'Qk+X5l89SIKheRBayaPWFvmmJmSs7x2aMnwXK8i9ALpPctWzseT6KcmezhK7C7fl',
      'ym9o58BZperPU/+9EHBUD38y3ndS9R4C+D/fjHO2v5OkY7J6VVFnMFf61yPURKv4',
      'eXuSERIXeHLiFzWWuce4GvLI5n3DvXyZkvWKHWTAOQjrWu35uWlZy2iEdfT5vwPX',
      '/Sh7UuPtb+7MB+YKwEsw9UPVr0XKGXz2kCE0CMVEJZ4uSkWedOiZk6GrxOw2k6rs',
      'OTGoDYr1FO6yDFEJX3mOgZ20RrVr7UGN5xvMkRZd9DkkHINd21qMyz06hFNvWG1H',
      'Rka9w9n28v70xuKNwcmPNlxDRHxJp/8mE1xfX8nhg1MeVfv0A4GRYIuaqz0Pebi5',
      'hAa7CirXBIcW0wKBLPCvsms8',
    ],
    keeps: ['GOOGLE_APPLICATION_CREDENTIALS_JSON'],
  },
  {
    id: 'gcp-oauth-client-secret-yaml',
    family: 'gcp',
    text: 'google:\n' +
      '  client_id: 84213307762-ffo1fbfkemdn6auv1lecdksihjnggcil.apps.googleusercontent.com\n' +
      '  client_secret: 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\n' +
      '  redirect_uri: https://app.acme.io/auth/google/callback\n',
    secrets: ['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'],
    keeps: ['client_id', 'client_secret', 'redirect_uri: https://app.acme.io/auth/google/callback'],
  },
  {
    id: 'gcp-api-key-markdown-note',
    family: 'gcp',
    text: '## Staging\n' +
      '\n' +
      '- Gemini key: AIzaiwS9B6nIyUs8eahqBtt4UnItpdsQmw7X0WJ\n' +
      '- Quota: 60 requests/minute, shared with the eval job\n',
    secrets: ['AIzaiwS9B6nIyUs8eahqBtt4UnItpdsQmw7X0WJ'],
    keeps: ['## Staging', '- Gemini key:', '- Quota: 60 requests/minute, shared with the eval job'],
  },

  // ---- azure -----------------------------------------------------------------------------------------
  // Azure: storage connection strings (88-char AccountKey), SAS query tokens, Service Bus / IoT Hub
  // SharedAccessKey, AD client secrets.
  {
    id: 'azure-storage-connection-string-env',
    family: 'azure',
    text: 'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=acmeprodlogs;AccountKey=AlBipYrd9uZmdNO6eGawDWazcOVfc2vYkWmXes/0VDDXygqhefNPBIM8s/NjxM7wlXS33Oxzl708olfrEb+ynQ==;EndpointSuffix=core.windows.net"',
    secrets: ['AlBipYrd9uZmdNO6eGawDWazcOVfc2vYkWmXes/0VDDXygqhefNPBIM8s/NjxM7wlXS33Oxzl708olfrEb+ynQ=='],
    keeps: [
      'AZURE_STORAGE_CONNECTION_STRING',
      'DefaultEndpointsProtocol=https',
      'AccountName=acmeprodlogs',
      'AccountKey',
      'EndpointSuffix=core.windows.net',
    ],
  },
  {
    id: 'azure-storage-appsettings-json',
    family: 'azure',
    text: '{\n' +
      '  "ConnectionStrings": {\n' +
      '    "Blobs": "DefaultEndpointsProtocol=https;AccountName=acmeinvoices;AccountKey=em5eNZGMju6ojng/bVi9Qo9eDaiRdbO4vslf4Z6Ow9rQr/gEmacia4EPqj5ayzfHL1lBMmZoNudETzxVlYMwng==;EndpointSuffix=core.windows.net"\n' +
      '  },\n' +
      '  "Logging": { "LogLevel": { "Default": "Information" } }\n' +
      '}\n',
    secrets: ['em5eNZGMju6ojng/bVi9Qo9eDaiRdbO4vslf4Z6Ow9rQr/gEmacia4EPqj5ayzfHL1lBMmZoNudETzxVlYMwng=='],
    keeps: [
      '"ConnectionStrings"',
      'AccountName=acmeinvoices',
      'EndpointSuffix=core.windows.net',
      '"Default": "Information"',
    ],
  },
  {
    id: 'azure-sas-blob-url',
    family: 'azure',
    text: 'Download the backup from https://acmebackups.blob.core.windows.net/pg-dumps/orders-2024-06-10.sql.gz?sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2024-06-12T18:00:00Z&st=2024-06-11T09:00:00Z&spr=https&sig=GALjastF5buBdFi%2BZ1GIElwfWaN75kxCOHmGfj%2F5YbY%3D before it expires.',
    secrets: ['GALjastF5buBdFi%2BZ1GIElwfWaN75kxCOHmGfj%2F5YbY%3D'],
    keeps: ['Download the backup from', 'acmebackups.blob.core.windows.net', 'before it expires.'],
  },
  {
    id: 'azure-sas-token-env',
    family: 'azure',
    text: 'AZURE_STORAGE_SAS_TOKEN="?sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2025-03-31T17:00:00Z&st=2025-03-01T09:00:00Z&spr=https&sig=ZqID79KC8EIQ9o%2FncMu0UD7tOUcI6WGtyJj%2Fxxfm%2FN0%3D"',
    secrets: ['ZqID79KC8EIQ9o%2FncMu0UD7tOUcI6WGtyJj%2Fxxfm%2FN0%3D'],
    keeps: ['AZURE_STORAGE_SAS_TOKEN'],
  },
  {
    id: 'azure-service-bus-yaml',
    family: 'azure',
    text: 'messaging:\n' +
      '  provider: azure-service-bus\n' +
      '  connection: "Endpoint=sb://acme-orders.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=/CeYmo3nRK5xUhF+8NCTKrqeGvEV4bPO+ytr7E4945w="\n' +
      '  queue: order-events\n',
    secrets: ['/CeYmo3nRK5xUhF+8NCTKrqeGvEV4bPO+ytr7E4945w='],
    keeps: [
      'provider: azure-service-bus',
      'acme-orders.servicebus.windows.net',
      'SharedAccessKeyName=RootManageSharedAccessKey',
      'SharedAccessKey',
      'queue: order-events',
    ],
  },
  {
    id: 'azure-cli-account-key-flag',
    family: 'azure',
    text: 'az storage blob upload --account-name acmeprodlogs --account-key 4GLOIqeSaLUMUoN2axbZXtdcLch56/8U5/I0KsL2i2zT47mBt0hq0ZpyBzR764NmtPt7IvYBbQYpYFSfIi7WIw== --container-name backups --name db.bak --file ./db.bak',
    secrets: ['4GLOIqeSaLUMUoN2axbZXtdcLch56/8U5/I0KsL2i2zT47mBt0hq0ZpyBzR764NmtPt7IvYBbQYpYFSfIi7WIw=='],
    keeps: [
      'az storage blob upload',
      '--account-name acmeprodlogs',
      '--account-key',
      '--container-name backups',
    ],
  },
  {
    id: 'azure-iot-hub-csharp',
    family: 'azure',
    text: 'var client = DeviceClient.CreateFromConnectionString(\n' +
      '    "HostName=acme-iot.azure-devices.net;DeviceId=press-07;SharedAccessKey=gQOkL6Ikll7oC+kLNxWc6f+2vlUqqTPd5xJULajEBXE=",\n' +
      '    TransportType.Mqtt);\n',
    secrets: ['gQOkL6Ikll7oC+kLNxWc6f+2vlUqqTPd5xJULajEBXE='],
    keeps: [
      'DeviceClient.CreateFromConnectionString',
      'HostName=acme-iot.azure-devices.net',
      'DeviceId=press-07',
      'TransportType.Mqtt',
    ],
  },
  {
    id: 'azure-ad-client-secret-env',
    family: 'azure',
    text: 'AZURE_TENANT_ID=72f988bf-86f1-41af-91ab-2d7cd011db47\n' +
      'AZURE_CLIENT_ID=0f4c6e51-3a2b-4d8c-9e71-5b6a8d2c1f03\n' +
      'AZURE_CLIENT_SECRET=OHY9Q~NlX4PlBVu7RrsGTuzdT9Sz-rQllCqy1EsX\n',
    secrets: ['OHY9Q~NlX4PlBVu7RrsGTuzdT9Sz-rQllCqy1EsX'],
    keeps: [
      'AZURE_TENANT_ID=72f988bf-86f1-41af-91ab-2d7cd011db47',
      'AZURE_CLIENT_ID=0f4c6e51-3a2b-4d8c-9e71-5b6a8d2c1f03',
      'AZURE_CLIENT_SECRET',
    ],
  },

  // ---- github ----------------------------------------------------------------------------------------
  // GitHub: classic ghp_, fine-grained github_pat_, app ghs_/ghu_, OAuth gho_, refresh ghr_ tokens.
  {
    id: 'github-classic-pat-env',
    family: 'github',
    text: 'GITHUB_TOKEN=ghp_SrIAMySYxx92Xg8V9S9xGphx5avCeA3HuKgC',
    secrets: ['ghp_SrIAMySYxx92Xg8V9S9xGphx5avCeA3HuKgC'],
    keeps: ['GITHUB_TOKEN'],
  },
  {
    id: 'github-classic-pat-curl-bearer',
    family: 'github',
    text: 'curl -H "Authorization: Bearer ghp_eqzqJzN2bvxrtmAQUOqDPe1H4e5LoLXJea4T" -H "X-GitHub-Api-Version: 2022-11-28" https://api.github.com/user/repos',
    secrets: ['ghp_eqzqJzN2bvxrtmAQUOqDPe1H4e5LoLXJea4T'],
    keeps: ['Authorization', 'X-GitHub-Api-Version: 2022-11-28', 'https://api.github.com/user/repos'],
  },
  {
    id: 'github-fine-grained-yaml',
    family: 'github',
    text: 'renovate:\n' +
      '  platform: github\n' +
      '  token: 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\n' +
      '  repositories:\n' +
      '    - acme/platform\n',
    secrets: [
      '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',
    ],
    keeps: ['platform: github', 'token', '- acme/platform'],
  },
  {
    id: 'github-fine-grained-export',
    family: 'github',
    text: 'export GH_TOKEN=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\n' +
      'gh pr list --repo acme/platform --state open',
    secrets: [
      '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',
    ],
    keeps: ['GH_TOKEN', 'gh pr list --repo acme/platform --state open'],
  },
  {
    id: 'github-installation-token-log',
    family: 'github',
    text: '2024-06-11T09:12:44.118Z info [release-bot] minted installation token ghs_cEzS45qG7Vub9ehpkLnVIF47qp9AIFvkprbG for installation 41822017 (expires 2024-06-11T10:12:44Z)',
    secrets: ['ghs_cEzS45qG7Vub9ehpkLnVIF47qp9AIFvkprbG'],
    keeps: [
      '[release-bot] minted installation token',
      'for installation 41822017',
      '(expires 2024-06-11T10:12:44Z)',
    ],
  },
  {
    id: 'github-user-to-server-json',
    family: 'github',
    text: '{"access_token": "ghu_ZLIwejzfJCNEQHSzDSZZo0jAYc4coDF4UFFt", "expires_in": 28800, "refresh_token": "ghr_2B30rSJYbywSVGit78RimNAaeHmmYKIKj57t5ACgkRRnUHpwwsM20b34Bf9oXeHC4YJExOH6WMvx", "refresh_token_expires_in": 15811200, "scope": "", "token_type": "bearer"}',
    secrets: [
      'ghu_ZLIwejzfJCNEQHSzDSZZo0jAYc4coDF4UFFt',
      'ghr_2B30rSJYbywSVGit78RimNAaeHmmYKIKj57t5ACgkRRnUHpwwsM20b34Bf9oXeHC4YJExOH6WMvx',
    ],
    keeps: [
      '"access_token"',
      '"expires_in": 28800',
      '"refresh_token"',
      '"refresh_token_expires_in": 15811200',
      '"token_type": "bearer"',
    ],
  },
  {
    id: 'github-gh-hosts-yml',
    family: 'github',
    text: '# ~/.config/gh/hosts.yml\n' +
      'github.com:\n' +
      '    user: octo-dev\n' +
      '    oauth_token: gho_YvKbvh0bBhmiCzvYf7V1Pf785SDcnat7HoDJ\n' +
      '    git_protocol: https\n',
    secrets: ['gho_YvKbvh0bBhmiCzvYf7V1Pf785SDcnat7HoDJ'],
    keeps: ['github.com:', 'user: octo-dev', 'oauth_token', 'git_protocol: https'],
  },
  {
    id: 'github-pat-markdown-prose',
    family: 'github',
    text: 'Temporary PAT `ghp_n6fk4Gw6OirgzUKkVlt3uQApbuvgodeEDdiQ` has the `repo` scope. Revoke it after the migration is done.',
    secrets: ['ghp_n6fk4Gw6OirgzUKkVlt3uQApbuvgodeEDdiQ'],
    keeps: ['Temporary PAT', 'has the', 'scope. Revoke it after the migration is done.'],
  },
  {
    id: 'github-refresh-token-toml',
    family: 'github',
    text: '[github_app]\n' +
      'client_id = "Iv1.70145463ce0685b5"\n' +
      'refresh_token = "ghr_mZmOsMrH9Bp2u73G5l8DJ0VqyGHcTaRWHU8ITmhmvVUzoyn9W115r3iLU69anmCB4xo3VJLuPOWz"\n',
    secrets: ['ghr_mZmOsMrH9Bp2u73G5l8DJ0VqyGHcTaRWHU8ITmhmvVUzoyn9W115r3iLU69anmCB4xo3VJLuPOWz'],
    keeps: ['[github_app]', 'client_id', 'refresh_token'],
  },

  // ---- gitlab ----------------------------------------------------------------------------------------
  // GitLab: glpat- personal tokens, gldt- deploy tokens, glrt- runner tokens, GR1348941 registration
  // tokens, glptt- trigger tokens.
  {
    id: 'gitlab-pat-env',
    family: 'gitlab',
    text: 'GITLAB_TOKEN=glpat-0vgZlmpaiisp14G2bFia\nGITLAB_URL=https://gitlab.com\n',
    secrets: ['glpat-0vgZlmpaiisp14G2bFia'],
    keeps: ['GITLAB_TOKEN', 'GITLAB_URL=https://gitlab.com'],
  },
  {
    id: 'gitlab-private-token-header',
    family: 'gitlab',
    text: 'curl --header "PRIVATE-TOKEN: glpat-91UnlWQyNUc2gp95s5RO" "https://gitlab.com/api/v4/projects?membership=true&per_page=100"',
    secrets: ['glpat-91UnlWQyNUc2gp95s5RO'],
    keeps: ['PRIVATE-TOKEN', 'https://gitlab.com/api/v4/projects?membership=true&per_page=100'],
  },
  {
    id: 'gitlab-deploy-token-docker-login',
    family: 'gitlab',
    text: 'docker login -u gitlab+deploy-token-2291 -p gldt-U07Nql-iTi-09a7iHZEe registry.gitlab.com',
    secrets: ['gldt-U07Nql-iTi-09a7iHZEe'],
    keeps: ['docker login -u gitlab+deploy-token-2291', 'registry.gitlab.com'],
  },
  {
    id: 'gitlab-runner-config-toml',
    family: 'gitlab',
    text: 'concurrent = 4\n' +
      '\n' +
      '[[runners]]\n' +
      '  name = "k8s-runner-eu"\n' +
      '  url = "https://gitlab.com"\n' +
      '  token = "glrt-gIzL00oJbJaTWUbTPOOz"\n' +
      '  executor = "kubernetes"\n',
    secrets: ['glrt-gIzL00oJbJaTWUbTPOOz'],
    keeps: ['[[runners]]', 'name = "k8s-runner-eu"', 'url = "https://gitlab.com"', 'executor = "kubernetes"'],
  },
  {
    id: 'gitlab-runner-registration-flag',
    family: 'gitlab',
    text: 'gitlab-runner register --non-interactive --url https://gitlab.acme.io --registration-token GR1348941TCm9WjE1zgIiq41KoLeT --executor docker --docker-image alpine:3.20',
    secrets: ['GR1348941TCm9WjE1zgIiq41KoLeT'],
    keeps: [
      'gitlab-runner register --non-interactive',
      '--url https://gitlab.acme.io',
      '--registration-token',
      '--executor docker',
    ],
  },
  {
    id: 'gitlab-trigger-token-curl',
    family: 'gitlab',
    text: 'curl -X POST --fail -F token=glptt-052ad29a70279bb439036cfa49272b3bf6392812 -F ref=main https://gitlab.com/api/v4/projects/4521/trigger/pipeline',
    secrets: ['glptt-052ad29a70279bb439036cfa49272b3bf6392812'],
    keeps: ['curl -X POST --fail', '-F ref=main', 'https://gitlab.com/api/v4/projects/4521/trigger/pipeline'],
  },
  {
    id: 'gitlab-ci-variables-yaml',
    family: 'gitlab',
    text: 'variables:\n' +
      '  GITLAB_API_TOKEN: glpat-tOyEXPMfekMXDOnz4f2K\n' +
      '  DOCKER_DRIVER: overlay2\n',
    secrets: ['glpat-tOyEXPMfekMXDOnz4f2K'],
    keeps: ['variables:', 'GITLAB_API_TOKEN', 'DOCKER_DRIVER: overlay2'],
  },

  // ---- npm -------------------------------------------------------------------------------------------
  // npm: npm_ automation/publish tokens in .npmrc, env, .yarnrc.yml; legacy UUID tokens in a private
  // registry _authToken.
  {
    id: 'npm-npmrc-auth-token',
    family: 'npm',
    text: '# ~/.npmrc\n' +
      '//registry.npmjs.org/:_authToken=npm_4K2Ct362qLjy9NwclDV1oopvSyXPK8y51Hi0\n' +
      '@acme:registry=https://registry.npmjs.org/\n',
    secrets: ['npm_4K2Ct362qLjy9NwclDV1oopvSyXPK8y51Hi0'],
    keeps: ['//registry.npmjs.org/:_authToken', '@acme:registry=https://registry.npmjs.org/'],
  },
  {
    id: 'npm-token-env',
    family: 'npm',
    text: 'NPM_TOKEN=npm_Z9eMA7Las4GdKkZj3pp935o4vTClg1pwvOLN',
    secrets: ['npm_Z9eMA7Las4GdKkZj3pp935o4vTClg1pwvOLN'],
    keeps: ['NPM_TOKEN'],
  },
  {
    id: 'npm-yarnrc-yml',
    family: 'npm',
    text: 'npmRegistryServer: "https://registry.npmjs.org"\n' +
      'npmAuthToken: "npm_NKERi2lhOqAI1Org8VRimf1GxzIqRsQQjrlz"\n' +
      'nodeLinker: node-modules\n',
    secrets: ['npm_NKERi2lhOqAI1Org8VRimf1GxzIqRsQQjrlz'],
    keeps: ['npmRegistryServer: "https://registry.npmjs.org"', 'npmAuthToken', 'nodeLinker: node-modules'],
  },
  {
    id: 'npm-private-registry-uuid-token',
    family: 'npm',
    text: '//npm.acme.internal/:_authToken=01272281-a5ee-4990-a2fb-902bec7ec459\n' +
      '//npm.acme.internal/:always-auth=true\n',
    secrets: ['01272281-a5ee-4990-a2fb-902bec7ec459'],
    keeps: ['//npm.acme.internal/:_authToken', '//npm.acme.internal/:always-auth=true'],
  },
  {
    id: 'npm-token-publish-log',
    family: 'npm',
    text: "npm verb publish [ '.' ]\n" +
      'npm http fetch PUT 403 https://registry.npmjs.org/@acme%2fui 512ms (using token npm_wYECLA1R2PuWHqK6VQTQysbHfsUEW5hkTPDX)\n' +
      'npm ERR! code E403',
    secrets: ['npm_wYECLA1R2PuWHqK6VQTQysbHfsUEW5hkTPDX'],
    keeps: [
      'npm verb publish',
      'npm http fetch PUT 403 https://registry.npmjs.org/@acme%2fui 512ms',
      'npm ERR! code E403',
    ],
  },

  // ---- pypi ------------------------------------------------------------------------------------------
  // PyPI: pypi-AgEIcHlwaS5vcmc… macaroon tokens (and the TestPyPI variant).
  {
    id: 'pypi-pypirc',
    family: 'pypi',
    text: '[distutils]\n' +
      'index-servers = pypi\n' +
      '\n' +
      '[pypi]\n' +
      '  username = __token__\n' +
      '  password = pypi-AgEIcHlwaS5vcmcCJDmQjfIUQC7C6saQrh04cU8iT3dO0wj5aUokjdAxqVC3lksxQSWBE6dX2J5BDX9olwp5mMzHKIGVnwW3F_c-ZKXp421b2cLtxVkio45T58TF3A2DRLkUwFQxBER8lVHb4UFnqObX5fIcYBT78E0stfXyg4\n',
    secrets: [
      'pypi-AgEIcHlwaS5vcmcCJDmQjfIUQC7C6saQrh04cU8iT3dO0wj5aUokjdAxqVC3lksxQSWBE6dX2J5BDX9olwp5mMzHKIGVnwW3F_c-ZKXp421b2cLtxVkio45T58TF3A2DRLkUwFQxBER8lVHb4UFnqObX5fIcYBT78E0stfXyg4',
    ],
    keeps: ['[pypi]', 'username = __token__', 'password'],
  },
  {
    id: 'pypi-twine-env',
    family: 'pypi',
    text: 'TWINE_USERNAME=__token__\n' +
      'TWINE_PASSWORD=pypi-AgEIcHlwaS5vcmcCJDB06aHFhP_zZc85lJQhFIN_Lm_TNxFAgWwUuIs92poMWHHsF0f82E5e0xQ6FVnzxcZBGmgbiYCCkqBqKB-5VYu2gLhg6CCUvso40rf-PvhHLtxrlPKqJI3Jnzu1ZiBXrUA1tCjCTxzpt4sZeDXsVTv4yf\n',
    secrets: [
      'pypi-AgEIcHlwaS5vcmcCJDB06aHFhP_zZc85lJQhFIN_Lm_TNxFAgWwUuIs92poMWHHsF0f82E5e0xQ6FVnzxcZBGmgbiYCCkqBqKB-5VYu2gLhg6CCUvso40rf-PvhHLtxrlPKqJI3Jnzu1ZiBXrUA1tCjCTxzpt4sZeDXsVTv4yf',
    ],
    keeps: ['TWINE_USERNAME=__token__', 'TWINE_PASSWORD'],
  },
  {
    id: 'pypi-uv-publish-flag',
    family: 'pypi',
    text: 'uv publish --token pypi-AgEIcHlwaS5vcmcCJDggp3_jymat6b7XmVfrCP_cCuVHKMAUs14zWS-bv91oR6niJRJtie44DQtSEFjL1ABE_fReSDsUdBiDi_YFLF_pbsZmpdDmc8mVEGAgumacBkI5R0ob31VAbWn2GTpp5McEgTJTy2cZyC_RRNAeHYuRpk dist/*',
    secrets: [
      'pypi-AgEIcHlwaS5vcmcCJDggp3_jymat6b7XmVfrCP_cCuVHKMAUs14zWS-bv91oR6niJRJtie44DQtSEFjL1ABE_fReSDsUdBiDi_YFLF_pbsZmpdDmc8mVEGAgumacBkI5R0ob31VAbWn2GTpp5McEgTJTy2cZyC_RRNAeHYuRpk',
    ],
    keeps: ['uv publish --token', 'dist/*'],
  },
  {
    id: 'pypi-testpypi-poetry-config',
    family: 'pypi',
    text: 'poetry config repositories.testpypi https://test.pypi.org/legacy/\n' +
      'poetry config pypi-token.testpypi pypi-AgENdGVzdC5weXBpLm9yZwIkNuvuYYHcn7RimJDxAjSPVIoxiqwcz6Kv7p1qP26uxA-YpSHwUS1XR0fXE3c0a2oYOHzHY9J8V_m4OeS1J2sIrq5fDmk9C41lDKBpngZ0KQ_3BJSSorkiQji_1HoiuQFU8ykcQxolBFQ-dr0Ke4vLAJ6',
    secrets: [
      'pypi-AgENdGVzdC5weXBpLm9yZwIkNuvuYYHcn7RimJDxAjSPVIoxiqwcz6Kv7p1qP26uxA-YpSHwUS1XR0fXE3c0a2oYOHzHY9J8V_m4OeS1J2sIrq5fDmk9C41lDKBpngZ0KQ_3BJSSorkiQji_1HoiuQFU8ykcQxolBFQ-dr0Ke4vLAJ6',
    ],
    keeps: [
      'poetry config repositories.testpypi https://test.pypi.org/legacy/',
      'poetry config pypi-token.testpypi',
    ],
  },

  // ---- rubygems --------------------------------------------------------------------------------------
  // RubyGems: rubygems_ + 48 hex API keys.
  {
    id: 'rubygems-credentials-file',
    family: 'rubygems',
    text: '---\n' +
      ':rubygems_api_key: rubygems_f3aeaa27f62c0af8f12bc50801bd05c9cf7ad267cbf6b297\n',
    secrets: ['rubygems_f3aeaa27f62c0af8f12bc50801bd05c9cf7ad267cbf6b297'],
    keeps: [':rubygems_api_key'],
  },
  {
    id: 'rubygems-gem-host-env',
    family: 'rubygems',
    text: 'export GEM_HOST_API_KEY=rubygems_59d8f3bfbe486b278a6fe5c02ba1d2eb455b34ba3b250794\n' +
      'gem push acme-client-2.3.1.gem',
    secrets: ['rubygems_59d8f3bfbe486b278a6fe5c02ba1d2eb455b34ba3b250794'],
    keeps: ['GEM_HOST_API_KEY', 'gem push acme-client-2.3.1.gem'],
  },
  {
    id: 'rubygems-ci-log',
    family: 'rubygems',
    text: 'Pushing gem to https://rubygems.org... (GEM_HOST_API_KEY=rubygems_5231cfd3e14fab7936aa886f2f95586dba5886c9afb3cee8)\n' +
      'Successfully registered gem: acme-client (2.3.1)',
    secrets: ['rubygems_5231cfd3e14fab7936aa886f2f95586dba5886c9afb3cee8'],
    keeps: ['Pushing gem to https://rubygems.org...', 'Successfully registered gem: acme-client (2.3.1)'],
  },

  // ---- nuget -----------------------------------------------------------------------------------------
  // NuGet: oy2 + 43 lowercase alphanumerics.
  {
    id: 'nuget-push-api-key-flag',
    family: 'nuget',
    text: 'dotnet nuget push bin/Release/Acme.Core.2.3.1.nupkg --api-key oy24feze49a1s233ebznul7cijhgxo2prkym3k0r6i81ln --source https://api.nuget.org/v3/index.json',
    secrets: ['oy24feze49a1s233ebznul7cijhgxo2prkym3k0r6i81ln'],
    keeps: [
      'dotnet nuget push bin/Release/Acme.Core.2.3.1.nupkg',
      '--api-key',
      '--source https://api.nuget.org/v3/index.json',
    ],
  },
  {
    id: 'nuget-api-key-env',
    family: 'nuget',
    text: 'NUGET_API_KEY=oy2isb0b166r7bksf7gmiqsnp5pd0oc4grq738np0zr3x4',
    secrets: ['oy2isb0b166r7bksf7gmiqsnp5pd0oc4grq738np0zr3x4'],
    keeps: ['NUGET_API_KEY'],
  },
  {
    id: 'nuget-github-actions-env',
    family: 'nuget',
    text: '      - run: dotnet nuget push "*.nupkg" --skip-duplicate\n' +
      '        env:\n' +
      '          NUGET_AUTH_TOKEN: oy2kv5kh2zq92lagkygr4m6bixv0cuhz7an25brr6eox9q\n',
    secrets: ['oy2kv5kh2zq92lagkygr4m6bixv0cuhz7an25brr6eox9q'],
    keeps: ['dotnet nuget push "*.nupkg" --skip-duplicate', 'NUGET_AUTH_TOKEN'],
  },

  // ---- slack -----------------------------------------------------------------------------------------
  // Slack: xoxb/xoxp/xoxa/xoxe tokens, xapp app-level tokens, incoming-webhook URLs.
  {
    id: 'slack-bot-token-env',
    family: 'slack',
    text: 'SLACK_BOT_TOKEN=xoxb-4474547284-3547800738552-DRqOuJTWzer5GlbTTSw8rZ5Z\n' +
      'SLACK_CHANNEL=#deploys\n',
    secrets: ['xoxb-4474547284-3547800738552-DRqOuJTWzer5GlbTTSw8rZ5Z'],
    keeps: ['SLACK_BOT_TOKEN', 'SLACK_CHANNEL=#deploys'],
  },
  {
    id: 'slack-user-token-curl',
    family: 'slack',
    text: 'curl -s -H "Authorization: Bearer xoxp-3894050623-31411748468-5392918100195-5f77afc85fd9bdff6a34ff27f74c5515" "https://slack.com/api/conversations.history?channel=C05QW2N7K1Z&limit=50"',
    secrets: ['xoxp-3894050623-31411748468-5392918100195-5f77afc85fd9bdff6a34ff27f74c5515'],
    keeps: ['Authorization', 'https://slack.com/api/conversations.history?channel=C05QW2N7K1Z&limit=50'],
  },
  {
    id: 'slack-workspace-token-json',
    family: 'slack',
    text: '{"ok": true, "access_token": "xoxa-2-4685536404-651099324695-656173998354-2502cb5ae4d7df373f2dff306b6184e2", "scope": "chat:write,channels:read", "team_id": "T04L9V2K3Q1"}',
    secrets: ['xoxa-2-4685536404-651099324695-656173998354-2502cb5ae4d7df373f2dff306b6184e2'],
    keeps: [
      '"ok": true',
      '"access_token"',
      '"scope": "chat:write,channels:read"',
      '"team_id": "T04L9V2K3Q1"',
    ],
  },
  {
    id: 'slack-token-rotation-json',
    family: 'slack',
    text: '{\n' +
      '  "ok": true,\n' +
      '  "token_type": "user",\n' +
      '  "access_token": "xoxe.xoxp-1-dwzInhzEUt6wRp8HZHX1IKYMAlLZRuwVjXk7hdKC703CEBWkraCPZ4EQPgebMHue5E1TEdNgb3yAqlMQEoWeOVzxKD88MpvkXHk4ieLgMBmXIiAcEeAX1n43gM64ga0wlRWwvqvjyFBQoZ82FB04ZQ",\n' +
      '  "refresh_token": "xoxe-1-SVaM6AtOAT4DGgydEKkngxBY6mIrp9NuvjZLFdXLJPvb1GFclKSaArNx0DTQqhuPiCvKKOYVvlu1gLl39OOxLyyo3EGgzzAdYP48perX11SrOBY9ZNWmVACgyP2viaodMDmCvPbRAKVw",\n' +
      '  "expires_in": 43200\n' +
      '}\n',
    secrets: [
      'xoxe.xoxp-1-dwzInhzEUt6wRp8HZHX1IKYMAlLZRuwVjXk7hdKC703CEBWkraCPZ4EQPgebMHue5E1TEdNgb3yAqlMQEoWeOVzxKD88MpvkXHk4ieLgMBmXIiAcEeAX1n43gM64ga0wlRWwvqvjyFBQoZ82FB04ZQ',
      'xoxe-1-SVaM6AtOAT4DGgydEKkngxBY6mIrp9NuvjZLFdXLJPvb1GFclKSaArNx0DTQqhuPiCvKKOYVvlu1gLl39OOxLyyo3EGgzzAdYP48perX11SrOBY9ZNWmVACgyP2viaodMDmCvPbRAKVw',
    ],
    keeps: ['"token_type": "user"', '"access_token"', '"refresh_token"', '"expires_in": 43200'],
  },
  {
    id: 'slack-app-level-token-yaml',
    family: 'slack',
    text: 'slack:\n' +
      '  socket_mode: true\n' +
      '  app_token: xapp-1-A0I7ZVGF6QB-3478263200305-96584be9ffad818397a2af08ee18dff1e262ecf7aa1c751b20beedc1d1de4eb2\n',
    secrets: [
      'xapp-1-A0I7ZVGF6QB-3478263200305-96584be9ffad818397a2af08ee18dff1e262ecf7aa1c751b20beedc1d1de4eb2',
    ],
    keeps: ['socket_mode: true', 'app_token'],
  },
  {
    id: 'slack-webhook-env',
    family: 'slack',
    text: 'SLACK_WEBHOOK_URL=https://hooks.slack.com/services/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',
    secrets: ['mqyZ0b2PcdmFz7SzOlQuI0dH'],
    keeps: ['SLACK_WEBHOOK_URL'],
  },
  {
    id: 'slack-webhook-curl',
    family: 'slack',
    text: 'curl -X POST -H \'Content-type: application/json\' --data \'{"text":"Deploy of web 2024.06.11 finished"}\' https://hooks.slack.com/services/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',
    secrets: ['5De185rUWBEnlwL7wSqnHv9n'],
    keeps: [
      "curl -X POST -H 'Content-type: application/json'",
      '--data \'{"text":"Deploy of web 2024.06.11 finished"}\'',
    ],
  },
  {
    id: 'slack-bot-token-python',
    family: 'slack',
    text: 'from slack_sdk import WebClient\n' +
      '\n' +
      'client = WebClient(token="xoxb-7578960480-6758506829805-A0pFOavrQ3fDVbPNkWrSQ91M")\n' +
      'client.chat_postMessage(channel="#ops", text="backup finished")\n',
    secrets: ['xoxb-7578960480-6758506829805-A0pFOavrQ3fDVbPNkWrSQ91M'],
    keeps: [
      'from slack_sdk import WebClient',
      'client = WebClient(token=',
      'client.chat_postMessage(channel="#ops", text="backup finished")',
    ],
  },

  // ---- discord ---------------------------------------------------------------------------------------
  // Discord: bot tokens (base64 user id . timestamp . HMAC) and webhook URLs.
  {
    id: 'discord-bot-token-env',
    family: 'discord',
    text: 'DISCORD_BOT_TOKEN=MzYzMDA0OTY4NjAxMzA5MTky.snSWtD.z7EwskubceO49VdiDjodMnU58P3',
    secrets: ['MzYzMDA0OTY4NjAxMzA5MTky.snSWtD.z7EwskubceO49VdiDjodMnU58P3'],
    keeps: ['DISCORD_BOT_TOKEN'],
  },
  {
    id: 'discord-bot-token-python',
    family: 'discord',
    text: 'import discord\n' +
      '\n' +
      'client = discord.Client(intents=discord.Intents.default())\n' +
      'client.run("ODU4MDMzMTUyNTMwMjAxMzM0Mw.Zejl8E.suCJ2EJUQc-qPFGoyY4CvweULrJk1X1osb7vDX")\n',
    secrets: ['ODU4MDMzMTUyNTMwMjAxMzM0Mw.Zejl8E.suCJ2EJUQc-qPFGoyY4CvweULrJk1X1osb7vDX'],
    keeps: ['import discord', 'client.run('],
  },
  {
    id: 'discord-webhook-yaml',
    family: 'discord',
    text: 'alerts:\n' +
      '  discord_webhook: https://discord.com/api/webhooks/7632240156311649835/8_xXFowf1KvJaC1-xBbk8JsiB2wBSH8yJKcnJDOSHm4g1OnPTDyNcDTDcO1le2MOMo3A\n' +
      '  min_severity: warning\n',
    secrets: ['8_xXFowf1KvJaC1-xBbk8JsiB2wBSH8yJKcnJDOSHm4g1OnPTDyNcDTDcO1le2MOMo3A'],
    keeps: ['alerts:', 'discord_webhook', 'min_severity: warning'],
  },
  {
    id: 'discord-authorization-header-log',
    family: 'discord',
    text: '[gateway] 401 Unauthorized GET /api/v10/users/@me headers={"Authorization": "Bot NTUxOTIwMTY5NzM2MjAxNzEwMw.D2_CZN.CISstzZfeXj6iSwO7ju_zTSTzcBHnK6RlHLFBK", "User-Agent": "DiscordBot (https://github.com/acme/bot, 2.3.1)"}',
    secrets: ['NTUxOTIwMTY5NzM2MjAxNzEwMw.D2_CZN.CISstzZfeXj6iSwO7ju_zTSTzcBHnK6RlHLFBK'],
    keeps: [
      '[gateway] 401 Unauthorized GET /api/v10/users/@me',
      '"Authorization"',
      '"User-Agent": "DiscordBot (https://github.com/acme/bot, 2.3.1)"',
    ],
  },

  // ---- telegram --------------------------------------------------------------------------------------
  // Telegram: bot tokens <bot id>:AA<33 chars>; the part after the colon is the secret.
  {
    id: 'telegram-bot-token-env',
    family: 'telegram',
    text: 'TELEGRAM_BOT_TOKEN=4580219324:AAbcmI_dKv34prNZm4Nvr-yA9h9MkIg2RDa\n' +
      'TELEGRAM_CHAT_ID=-1001873342210\n',
    secrets: ['AAbcmI_dKv34prNZm4Nvr-yA9h9MkIg2RDa'],
    keeps: ['TELEGRAM_BOT_TOKEN', 'TELEGRAM_CHAT_ID=-1001873342210'],
  },
  {
    id: 'telegram-bot-api-url',
    family: 'telegram',
    text: 'curl -s "https://api.telegram.org/bot211776723:AAGdNC6YJdXvHC0upPHB2PRC87KQZIsJrlM/sendMessage" -d chat_id=-1001873342210 -d text="nightly build failed"',
    secrets: ['AAGdNC6YJdXvHC0upPHB2PRC87KQZIsJrlM'],
    keeps: ['https://api.telegram.org/bot', '/sendMessage', '-d text="nightly build failed"'],
  },
  {
    id: 'telegram-python-builder',
    family: 'telegram',
    text: 'app = ApplicationBuilder().token("1498843454:AAfZq3VmmuFpP8RhI2SUn8w0PFq9oa5tsOS").build()\n' +
      'app.run_polling()\n',
    secrets: ['AAfZq3VmmuFpP8RhI2SUn8w0PFq9oa5tsOS'],
    keeps: ['ApplicationBuilder().token(', 'app.run_polling()'],
  },

  // ---- stripe ----------------------------------------------------------------------------------------
  // Stripe: sk_live_/rk_live_/sk_test_ keys and whsec_ webhook signing secrets.
  {
    id: 'stripe-secret-key-env',
    family: 'stripe',
    text: 'STRIPE_SECRET_KEY=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\n' +
      'STRIPE_API_VERSION=2024-04-10\n',
    secrets: [
      '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',
    ],
    keeps: ['STRIPE_SECRET_KEY', 'STRIPE_API_VERSION=2024-04-10'],
  },
  {
    id: 'stripe-legacy-key-curl-user',
    family: 'stripe',
    text: 'curl https://api.stripe.com/v1/charges -u sk_live_mm91bZBogVLiE6s9bfUJCeGA: -d amount=2000 -d currency=eur',
    secrets: ['sk_live_mm91bZBogVLiE6s9bfUJCeGA'],
    keeps: ['curl https://api.stripe.com/v1/charges', '-d amount=2000 -d currency=eur'],
  },
  {
    id: 'stripe-restricted-key-yaml',
    family: 'stripe',
    text: 'payments:\n' +
      '  stripe:\n' +
      '    restricted_key: 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\n' +
      '    account: acct_1OqLx2E8kRZt4Vb9\n',
    secrets: [
      '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',
    ],
    keeps: ['restricted_key', 'account: acct_1OqLx2E8kRZt4Vb9'],
  },
  {
    id: 'stripe-test-key-json',
    family: 'stripe',
    text: '{"stripe": {"mode": "test", "secretKey": "sk_test_51Xb1dESuSrkqxufNLADYvYdb9f1a0EDNKsClJfFNf6bJ1pAJnNWXX9N0edgB6eXGizcjgLP5CdBrLoW63A1bOTmHQ2qd08M9wJ", "currency": "usd"}}',
    secrets: [
      'sk_test_51Xb1dESuSrkqxufNLADYvYdb9f1a0EDNKsClJfFNf6bJ1pAJnNWXX9N0edgB6eXGizcjgLP5CdBrLoW63A1bOTmHQ2qd08M9wJ',
    ],
    keeps: ['"mode": "test"', '"secretKey"', '"currency": "usd"'],
  },
  {
    id: 'stripe-webhook-secret-env',
    family: 'stripe',
    text: 'STRIPE_WEBHOOK_SECRET=whsec_SB6EqSjrct1wAI3teXQrR8OfA1nxVGQO',
    secrets: ['whsec_SB6EqSjrct1wAI3teXQrR8OfA1nxVGQO'],
    keeps: ['STRIPE_WEBHOOK_SECRET'],
  },
  {
    id: 'stripe-cli-listen-output',
    family: 'stripe',
    text: '$ stripe listen --forward-to localhost:4242/webhook\n' +
      '> Ready! You are using Stripe API Version [2024-04-10]. Your webhook signing secret is whsec_74zD74xkEqrdtbJmsHKw5AkqMG12xZNZ (^C to quit)',
    secrets: ['whsec_74zD74xkEqrdtbJmsHKw5AkqMG12xZNZ'],
    keeps: [
      'stripe listen --forward-to localhost:4242/webhook',
      'Your webhook signing secret is',
      '(^C to quit)',
    ],
  },

  // ---- twilio ----------------------------------------------------------------------------------------
  // Twilio: the AC account SID is an identifier (kept); the auth token, SK API key and its secret
  // are not.
  {
    id: 'twilio-env-pair',
    family: 'twilio',
    text: 'TWILIO_ACCOUNT_SID=AC2c87ae48837ea71c29842f3c45280ff6\n' +
      'TWILIO_AUTH_TOKEN=dcb19d08fc2d46cb5e42ef904a2a9e65\n',
    secrets: ['dcb19d08fc2d46cb5e42ef904a2a9e65'],
    keeps: ['TWILIO_ACCOUNT_SID', 'AC2c87ae48837ea71c29842f3c45280ff6', 'TWILIO_AUTH_TOKEN'],
  },
  {
    id: 'twilio-curl-basic-user',
    family: 'twilio',
    text: 'curl -X POST https://api.twilio.com/2010-04-01/Accounts/AC7ef0d3cd6d55f0b3d387cf221e56244c/Messages.json --data-urlencode "Body=Your code is 482913" -u AC7ef0d3cd6d55f0b3d387cf221e56244c:674b519c2fe092543047060883142adf',
    secrets: ['674b519c2fe092543047060883142adf'],
    keeps: [
      'https://api.twilio.com/2010-04-01/Accounts/AC7ef0d3cd6d55f0b3d387cf221e56244c/Messages.json',
      '--data-urlencode "Body=Your code is 482913"',
    ],
  },
  {
    id: 'twilio-api-key-env',
    family: 'twilio',
    text: 'TWILIO_API_KEY=SK97dbc403ac53993e06119dbc70ca19bd\n' +
      'TWILIO_API_SECRET=zlUk7thNnKhk4brzOHBe1uEdERKFKPMX\n',
    secrets: ['SK97dbc403ac53993e06119dbc70ca19bd', 'zlUk7thNnKhk4brzOHBe1uEdERKFKPMX'],
    keeps: ['TWILIO_API_KEY', 'TWILIO_API_SECRET'],
  },
  {
    id: 'twilio-python-client',
    family: 'twilio',
    text: 'from twilio.rest import Client\n' +
      '\n' +
      'client = Client("AC5313e36b0f30cdc8da03797aa2e90073", "ae86fe30c554b46698d034fda722c2fd")\n',
    secrets: ['ae86fe30c554b46698d034fda722c2fd'],
    keeps: ['from twilio.rest import Client', 'AC5313e36b0f30cdc8da03797aa2e90073'],
  },

  // ---- sendgrid --------------------------------------------------------------------------------------
  // SendGrid: SG.<22>.<43> API keys.
  {
    id: 'sendgrid-env',
    family: 'sendgrid',
    text: 'SENDGRID_API_KEY=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',
    secrets: ['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'],
    keeps: ['SENDGRID_API_KEY'],
  },
  {
    id: 'sendgrid-curl-bearer',
    family: 'sendgrid',
    text: 'curl --request POST --url https://api.sendgrid.com/v3/mail/send --header "Authorization: Bearer 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" --header \'Content-Type: application/json\'',
    secrets: ['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'],
    keeps: ['https://api.sendgrid.com/v3/mail/send', 'Authorization', 'Content-Type: application/json'],
  },
  {
    id: 'sendgrid-smtp-yaml',
    family: 'sendgrid',
    text: 'smtp:\n' +
      '  host: smtp.sendgrid.net\n' +
      '  port: 587\n' +
      '  username: apikey\n' +
      '  password: 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\n',
    secrets: ['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'],
    keeps: ['host: smtp.sendgrid.net', 'port: 587', 'username: apikey', 'password'],
  },

  // ---- mailgun ---------------------------------------------------------------------------------------
  // Mailgun: key-<32 hex> and the newer <32 hex>-<8 hex>-<8 hex> private API keys.
  {
    id: 'mailgun-legacy-key-env',
    family: 'mailgun',
    text: 'MAILGUN_API_KEY=key-21146d74c4abfca1ee21b03f2b5f6ba3\nMAILGUN_DOMAIN=mg.acme.io\n',
    secrets: ['key-21146d74c4abfca1ee21b03f2b5f6ba3'],
    keeps: ['MAILGUN_API_KEY', 'MAILGUN_DOMAIN=mg.acme.io'],
  },
  {
    id: 'mailgun-new-style-yaml',
    family: 'mailgun',
    text: 'mailer:\n' +
      '  driver: mailgun\n' +
      '  mailgun_api_key: 5522f6d75dce96bcd650103b94a6d771-211a4148-47e342b6\n' +
      '  region: eu\n',
    secrets: ['5522f6d75dce96bcd650103b94a6d771-211a4148-47e342b6'],
    keeps: ['driver: mailgun', 'mailgun_api_key', 'region: eu'],
  },
  {
    id: 'mailgun-curl-user',
    family: 'mailgun',
    text: "curl -s --user 'api:2cab661d059d6327f3d2257495f9aa02-95650948-76696711' https://api.eu.mailgun.net/v3/mg.acme.io/messages -F from='Acme <noreply@mg.acme.io>' -F to=ops@acme.io",
    secrets: ['2cab661d059d6327f3d2257495f9aa02-95650948-76696711'],
    keeps: [
      "--user 'api:",
      'https://api.eu.mailgun.net/v3/mg.acme.io/messages',
      "-F from='Acme <noreply@mg.acme.io>'",
    ],
  },

  // ---- openai ----------------------------------------------------------------------------------------
  // OpenAI: sk-proj-, sk-svcacct- and legacy sk- keys (all carry the T3BlbkFJ marker).
  {
    id: 'openai-project-key-env',
    family: 'openai',
    text: 'OPENAI_API_KEY=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',
    secrets: [
      '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',
    ],
    keeps: ['OPENAI_API_KEY'],
  },
  {
    id: 'openai-service-account-yaml',
    family: 'openai',
    text: 'llm:\n' +
      '  provider: openai\n' +
      '  model: gpt-4o-mini\n' +
      '  api_key: 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\n',
    secrets: [
      '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',
    ],
    keeps: ['provider: openai', 'model: gpt-4o-mini', 'api_key'],
  },
  {
    id: 'openai-legacy-key-python',
    family: 'openai',
    text: 'import openai\n' +
      'openai.api_key = "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"\n',
    secrets: ['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'],
    keeps: ['import openai', 'openai.api_key'],
  },
  {
    id: 'openai-curl-bearer',
    family: 'openai',
    text: 'curl https://api.openai.com/v1/chat/completions -H "Content-Type: application/json" -H "Authorization: Bearer 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" -d \'{"model": "gpt-4o", "messages": []}\'',
    secrets: [
      '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',
    ],
    keeps: [
      'https://api.openai.com/v1/chat/completions',
      'Content-Type: application/json',
      'Authorization',
      '\'{"model": "gpt-4o", "messages": []}\'',
    ],
  },
  {
    id: 'openai-httpx-debug-log',
    family: 'openai',
    text: "DEBUG:httpx:HTTP Request: POST https://api.openai.com/v1/embeddings headers={'authorization': 'Bearer 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', 'content-type': 'application/json'}",
    secrets: [
      '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',
    ],
    keeps: [
      'DEBUG:httpx:HTTP Request: POST https://api.openai.com/v1/embeddings',
      "'content-type': 'application/json'",
    ],
  },

  // ---- anthropic -------------------------------------------------------------------------------------
  // Anthropic: sk-ant-api03- API keys, sk-ant-admin01- admin keys, sk-ant-oat01- OAuth tokens.
  {
    id: 'anthropic-api-key-env',
    family: 'anthropic',
    text: 'ANTHROPIC_API_KEY=sk-ant-api03-IGPi_0tNO9psInkY4GSqloYdClyckkVPzKLKGnpy0bWdzPtKkTaYN8ZzqORW8iXhMnhhaTQVRwW1B29duIj3wwdihQ8j8AA',
    secrets: [
      'sk-ant-api03-IGPi_0tNO9psInkY4GSqloYdClyckkVPzKLKGnpy0bWdzPtKkTaYN8ZzqORW8iXhMnhhaTQVRwW1B29duIj3wwdihQ8j8AA',
    ],
    keeps: ['ANTHROPIC_API_KEY'],
  },
  {
    id: 'anthropic-curl-x-api-key',
    family: 'anthropic',
    text: 'curl https://api.anthropic.com/v1/messages \\\n' +
      '  -H "x-api-key: sk-ant-api03-awbN8hs2KMsuScRZcraAVD_87uiW9gxpbfqiT0Y2fWxYRgwbC84OaHVGRCHFgxEgTHCgMFZx_HIM3Brt50iaf32GYJpLAAA" \\\n' +
      '  -H "anthropic-version: 2023-06-01" \\\n' +
      '  -H "content-type: application/json"',
    secrets: [
      'sk-ant-api03-awbN8hs2KMsuScRZcraAVD_87uiW9gxpbfqiT0Y2fWxYRgwbC84OaHVGRCHFgxEgTHCgMFZx_HIM3Brt50iaf32GYJpLAAA',
    ],
    keeps: ['https://api.anthropic.com/v1/messages', 'x-api-key', 'anthropic-version: 2023-06-01'],
  },
  {
    id: 'anthropic-admin-key-json',
    family: 'anthropic',
    text: '{"workspace": "ops", "admin_api_key": "sk-ant-admin01-imGYAO4ya-cWkI44XzXwvA9ikagmOFf87g8LXUxu__xAyU9rUaYaZLnvaDtRt1In7Cg-wPu7knctjymMPR3Xmw6AKEqGOAA", "created_by": "dana@acme.io"}',
    secrets: [
      'sk-ant-admin01-imGYAO4ya-cWkI44XzXwvA9ikagmOFf87g8LXUxu__xAyU9rUaYaZLnvaDtRt1In7Cg-wPu7knctjymMPR3Xmw6AKEqGOAA',
    ],
    keeps: ['"workspace": "ops"', '"admin_api_key"', '"created_by": "dana@acme.io"'],
  },
  {
    id: 'anthropic-sdk-constructor-ts',
    family: 'anthropic',
    text: "import Anthropic from '@anthropic-ai/sdk';\n" +
      '\n' +
      "const client = new Anthropic({ apiKey: 'sk-ant-api03-fNZVdOxxGM1hsDnLlvSYcawimatqs9cT2VJX0xA9Hh82TzQyn-Aq3wtHAOShFs_xfxII8AW0PP1_AB3LwIEh80HNxR8U6AA' });\n",
    secrets: [
      'sk-ant-api03-fNZVdOxxGM1hsDnLlvSYcawimatqs9cT2VJX0xA9Hh82TzQyn-Aq3wtHAOShFs_xfxII8AW0PP1_AB3LwIEh80HNxR8U6AA',
    ],
    keeps: ["import Anthropic from '@anthropic-ai/sdk';", 'const client = new Anthropic({ apiKey:'],
  },
  {
    id: 'anthropic-oauth-token-export',
    family: 'anthropic',
    text: 'export CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-ZZjQoG0zckiYCvEI2DUG-23hKpHsIWjyZZ4XA99L9WmCdE5xlXn0zy6trCGxrx9kB-raIqxuDE85L6sg9rzAOykWaphPvAA',
    secrets: [
      'sk-ant-oat01-ZZjQoG0zckiYCvEI2DUG-23hKpHsIWjyZZ4XA99L9WmCdE5xlXn0zy6trCGxrx9kB-raIqxuDE85L6sg9rzAOykWaphPvAA',
    ],
    keeps: ['CLAUDE_CODE_OAUTH_TOKEN'],
  },

  // ---- huggingface -----------------------------------------------------------------------------------
  // Hugging Face: hf_ + 34 letters.
  {
    id: 'huggingface-token-env',
    family: 'huggingface',
    text: 'HF_TOKEN=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',
    secrets: ['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'],
    keeps: ['HF_TOKEN'],
  },
  {
    id: 'huggingface-cli-login',
    family: 'huggingface',
    text: 'huggingface-cli login --token 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 --add-to-git-credential',
    secrets: ['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'],
    keeps: ['huggingface-cli login --token', '--add-to-git-credential'],
  },
  {
    id: 'huggingface-python-login',
    family: 'huggingface',
    text: 'from huggingface_hub import login\n' +
      'login(token="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")\n',
    secrets: ['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'],
    keeps: ['from huggingface_hub import login'],
  },
  {
    id: 'huggingface-git-remote',
    family: 'huggingface',
    text: 'git remote set-url origin https://dana: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@huggingface.co/acme/invoice-classifier',
    secrets: ['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'],
    keeps: ['git remote set-url origin', 'dana', 'huggingface.co/acme/invoice-classifier'],
  },

  // ---- vendor ----------------------------------------------------------------------------------------
  // Other AI/dev vendors with a recognisable prefix: Groq, Replicate, Perplexity, Shopify,
  // DigitalOcean, Linear, Doppler, Databricks, Vault, Postman, Atlassian, New Relic, Sentry,
  // Supabase, Grafana, Datadog.
  {
    id: 'vendor-groq-env',
    family: 'vendor',
    text: 'GROQ_API_KEY=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',
    secrets: ['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'],
    keeps: ['GROQ_API_KEY'],
  },
  {
    id: 'vendor-replicate-export',
    family: 'vendor',
    text: 'export REPLICATE_API_TOKEN=r8_i1xqmRXG8hU7y6GxlrIL2Zty0S7GhK47Phat5\n' +
      'replicate run stability-ai/sdxl',
    secrets: ['r8_i1xqmRXG8hU7y6GxlrIL2Zty0S7GhK47Phat5'],
    keeps: ['REPLICATE_API_TOKEN', 'replicate run stability-ai/sdxl'],
  },
  {
    id: 'vendor-perplexity-curl',
    family: 'vendor',
    text: 'curl https://api.perplexity.ai/chat/completions -H "Authorization: Bearer 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" -H "Content-Type: application/json"',
    secrets: ['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'],
    keeps: ['https://api.perplexity.ai/chat/completions', 'Authorization'],
  },
  {
    id: 'vendor-shopify-access-token-header',
    family: 'vendor',
    text: 'X-Shopify-Access-Token: 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\n' +
      'GET /admin/api/2024-04/orders.json?status=any HTTP/1.1\n' +
      'Host: acme-store.myshopify.com',
    secrets: ['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'],
    keeps: [
      'X-Shopify-Access-Token',
      'GET /admin/api/2024-04/orders.json?status=any HTTP/1.1',
      'Host: acme-store.myshopify.com',
    ],
  },
  {
    id: 'vendor-shopify-shared-secret-toml',
    family: 'vendor',
    text: '[shopify]\n' +
      'api_key_name = "acme-sync"\n' +
      'api_secret = "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"\n',
    secrets: ['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'],
    keeps: ['[shopify]', 'api_key_name = "acme-sync"', 'api_secret'],
  },
  {
    id: 'vendor-digitalocean-doctl',
    family: 'vendor',
    text: 'doctl auth init --context acme --access-token dop_v1_4d6ab600302083f9124360cf7c2ab38d93f44a98b48781615d85bd22effa7602',
    secrets: ['dop_v1_4d6ab600302083f9124360cf7c2ab38d93f44a98b48781615d85bd22effa7602'],
    keeps: ['doctl auth init --context acme --access-token'],
  },
  {
    id: 'vendor-linear-env',
    family: 'vendor',
    text: 'LINEAR_API_KEY=lin_api_X9jLv2X3QNcHj91O2osLmzCSWFhevAXJpJGF2HTU',
    secrets: ['lin_api_X9jLv2X3QNcHj91O2osLmzCSWFhevAXJpJGF2HTU'],
    keeps: ['LINEAR_API_KEY'],
  },
  {
    id: 'vendor-doppler-personal-token',
    family: 'vendor',
    text: 'doppler configure set token dp.pt.WS5xIZI377VphqGViGZXiaZiUAFr0DoKDR0jBAbR6xI --scope /home/dana/acme',
    secrets: ['dp.pt.WS5xIZI377VphqGViGZXiaZiUAFr0DoKDR0jBAbR6xI'],
    keeps: ['doppler configure set token', '--scope /home/dana/acme'],
  },
  {
    id: 'vendor-doppler-service-token-yaml',
    family: 'vendor',
    text: 'env:\n' +
      '  DOPPLER_TOKEN: dp.st.prd.TKLz1AB6kvqmOaVZjnK61yRgT7WgWR3zEOGa5sBN\n' +
      '  DOPPLER_PROJECT: billing\n',
    secrets: ['dp.st.prd.TKLz1AB6kvqmOaVZjnK61yRgT7WgWR3zEOGa5sBN'],
    keeps: ['DOPPLER_TOKEN', 'DOPPLER_PROJECT: billing'],
  },
  {
    id: 'vendor-databricks-cfg',
    family: 'vendor',
    text: '[DEFAULT]\n' +
      'host  = https://adb-4419843307741022.2.azuredatabricks.net\n' +
      'token = dapi06731a59c5fac940697d16426d22cc9e\n',
    secrets: ['dapi06731a59c5fac940697d16426d22cc9e'],
    keeps: ['[DEFAULT]', 'host  = https://adb-4419843307741022.2.azuredatabricks.net'],
  },
  {
    id: 'vendor-vault-token-env',
    family: 'vendor',
    text: 'VAULT_ADDR=https://vault.acme.io:8200\nVAULT_TOKEN=hvs.QNs9tklA3cbtuJThhrnIMFsR\n',
    secrets: ['hvs.QNs9tklA3cbtuJThhrnIMFsR'],
    keeps: ['VAULT_ADDR=https://vault.acme.io:8200', 'VAULT_TOKEN'],
  },
  {
    id: 'vendor-vault-token-header',
    family: 'vendor',
    text: 'curl --header "X-Vault-Token: hvs.CAESIPAGxsp134ukxxw376rVl8A1_n8c6-pIojkCoZz8feYVxr-7hNIJP5SUZGFFfkiZoKl7RdjntXzmcqZIJHYI5iS" https://vault.acme.io:8200/v1/secret/data/billing',
    secrets: [
      'hvs.CAESIPAGxsp134ukxxw376rVl8A1_n8c6-pIojkCoZz8feYVxr-7hNIJP5SUZGFFfkiZoKl7RdjntXzmcqZIJHYI5iS',
    ],
    keeps: ['X-Vault-Token', 'https://vault.acme.io:8200/v1/secret/data/billing'],
  },
  {
    id: 'vendor-postman-api-key',
    family: 'vendor',
    text: 'newman run collection.json --env-var "postmanApiKey=PMAK-5fe1b0e32950cba8f5896919-e03598cf1491d71a06f491bdd5cb9d318f"',
    secrets: ['PMAK-5fe1b0e32950cba8f5896919-e03598cf1491d71a06f491bdd5cb9d318f'],
    keeps: ['newman run collection.json --env-var', 'postmanApiKey'],
  },
  {
    id: 'vendor-atlassian-curl-user',
    family: 'vendor',
    text: 'curl -u dana@acme.io:ATATT3xFfGF0uoSBtREYkMCN7r5JDm68hboO28dxeDfjGY6xmn5XMwPVsT5_U6IyWYNAW52HUQAK4k6MQ1jLAHKi21flI2NU2iyuW7UU3yF8f2K21RA3MjdoP2u-b4oJO2unOm38DjJjf_Buzk3apZQueWPv5C8bEdPzrnRSsZb7sTr0cFPYoI=2551CC6D -H "Accept: application/json" https://acme.atlassian.net/rest/api/3/myself',
    secrets: [
      'ATATT3xFfGF0uoSBtREYkMCN7r5JDm68hboO28dxeDfjGY6xmn5XMwPVsT5_U6IyWYNAW52HUQAK4k6MQ1jLAHKi21flI2NU2iyuW7UU3yF8f2K21RA3MjdoP2u-b4oJO2unOm38DjJjf_Buzk3apZQueWPv5C8bEdPzrnRSsZb7sTr0cFPYoI=2551CC6D',
    ],
    keeps: ['dana@acme.io', 'Accept: application/json', 'https://acme.atlassian.net/rest/api/3/myself'],
  },
  {
    id: 'vendor-new-relic-yaml',
    family: 'vendor',
    text: 'newrelic:\n' +
      '  account_id: 3981207\n' +
      '  api_key: NRAK-1V74A6W237W3A67H63SZPCF80B4\n' +
      '  region: EU\n',
    secrets: ['NRAK-1V74A6W237W3A67H63SZPCF80B4'],
    keeps: ['account_id: 3981207', 'api_key', 'region: EU'],
  },
  {
    id: 'vendor-sentry-auth-token',
    family: 'vendor',
    text: 'SENTRY_AUTH_TOKEN=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 npx @sentry/wizard@latest -i sourcemaps',
    secrets: ['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'],
    keeps: ['SENTRY_AUTH_TOKEN', 'npx @sentry/wizard@latest -i sourcemaps'],
  },
  {
    id: 'vendor-supabase-cli-token',
    family: 'vendor',
    text: 'supabase login --token sbp_41ec38a3b43b7781e9a1df03c5270f1099794ea4\n' +
      'supabase link --project-ref qzkvbnrtxlpmwehydfca',
    secrets: ['sbp_41ec38a3b43b7781e9a1df03c5270f1099794ea4'],
    keeps: ['supabase login --token', 'supabase link --project-ref qzkvbnrtxlpmwehydfca'],
  },
  {
    id: 'vendor-grafana-service-account',
    family: 'vendor',
    text: 'GRAFANA_URL=https://grafana.acme.io\n' +
      'GRAFANA_SA_TOKEN=glsa_ZLRAmvP912S7MtNXYi7b8oF7q0zYy3G6_ebbcf199\n',
    secrets: ['glsa_ZLRAmvP912S7MtNXYi7b8oF7q0zYy3G6_ebbcf199'],
    keeps: ['GRAFANA_URL=https://grafana.acme.io', 'GRAFANA_SA_TOKEN'],
  },
  {
    id: 'vendor-datadog-keys-env',
    family: 'vendor',
    text: 'DD_SITE=datadoghq.eu\n' +
      'DD_API_KEY=4b46080e2118ebd26a3526eaa43a316a\n' +
      'DD_APP_KEY=de377185575533757ad8efa153467e95e0650740\n',
    secrets: ['4b46080e2118ebd26a3526eaa43a316a', 'de377185575533757ad8efa153467e95e0650740'],
    keeps: ['DD_SITE=datadoghq.eu', 'DD_API_KEY', 'DD_APP_KEY'],
  },

  // ---- jwt -------------------------------------------------------------------------------------------
  // JWTs (header.payload.signature) in Authorization headers, cookies, JSON bodies, logs, URL
  // fragments, prose.
  {
    id: 'jwt-authorization-bearer',
    family: 'jwt',
    text: 'GET /v2/orders?limit=20 HTTP/1.1\n' +
      'Host: api.acme.io\n' +
      'Authorization: Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguYWNtZS5pby8iLCJzdWIiOiJhdXRoMHw4ZTEzMjI3MGJiZTdkN2U4MmNlZTEyNDYiLCJhdWQiOiJodHRwczovL2FwaS5hY21lLmlvIiwiaWF0IjoxNzE4MDk3MTY0LCJleHAiOjE3MTgxODM1NjQsInNjb3BlIjoicmVhZDpvcmRlcnMifQ.Bsv38Hl2YZ_HqOzWes-45MPjWSKgTgIkVZk8cLxkV08r98zXePyjZ0MbKAOnwiT4LK9j4ZpBGgUQwWZ7lDST3Co8-FwqrJUJJIAqcew0VZOCtP52JyEQnOdA-0-6G1gFecOeEVfRCluQ4tT9O3CnKv_Yv_HqiGIbtvROL_jc9JYoMt9pa_sWFSNkZ2hnNSIEPCSXrVZjc82M8fQW4Hu154wl-xB9ahz1YBRa1HZFnugIq8TcLgKEpihn-V8LhLsO5hfdzonzAuo25gzM3483E8SaweGDdRq56lqp8zxMQzU6WOmCjlyipXROif2Wx71jDtVBr2O3y6EL_vU6woLrn8\n' +
      'Accept: application/json\n',
    secrets: [
      'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2F1dGguYWNtZS5pby8iLCJzdWIiOiJhdXRoMHw4ZTEzMjI3MGJiZTdkN2U4MmNlZTEyNDYiLCJhdWQiOiJodHRwczovL2FwaS5hY21lLmlvIiwiaWF0IjoxNzE4MDk3MTY0LCJleHAiOjE3MTgxODM1NjQsInNjb3BlIjoicmVhZDpvcmRlcnMifQ.Bsv38Hl2YZ_HqOzWes-45MPjWSKgTgIkVZk8cLxkV08r98zXePyjZ0MbKAOnwiT4LK9j4ZpBGgUQwWZ7lDST3Co8-FwqrJUJJIAqcew0VZOCtP52JyEQnOdA-0-6G1gFecOeEVfRCluQ4tT9O3CnKv_Yv_HqiGIbtvROL_jc9JYoMt9pa_sWFSNkZ2hnNSIEPCSXrVZjc82M8fQW4Hu154wl-xB9ahz1YBRa1HZFnugIq8TcLgKEpihn-V8LhLsO5hfdzonzAuo25gzM3483E8SaweGDdRq56lqp8zxMQzU6WOmCjlyipXROif2Wx71jDtVBr2O3y6EL_vU6woLrn8',
    ],
    keeps: [
      'GET /v2/orders?limit=20 HTTP/1.1',
      'Host: api.acme.io',
      'Authorization',
      'Accept: application/json',
    ],
  },
  {
    id: 'jwt-cookie',
    family: 'jwt',
    text: 'Cookie: theme=dark; access_token=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJiMzEzMWY1My05N2FjLTQzYjgtYjYzYS1lMzcwZjJjMTEyNWEiLCJyb2xlIjoibWVtYmVyIiwiaWF0IjoxNzE4MDk3MTY0LCJleHAiOjE3MTgxMDA3NjR9.rQnYA_vgXhU9BOJXZ1fXc3U--Mnqy95VgSCIM9kCmAm; lang=de-DE',
    secrets: [
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJiMzEzMWY1My05N2FjLTQzYjgtYjYzYS1lMzcwZjJjMTEyNWEiLCJyb2xlIjoibWVtYmVyIiwiaWF0IjoxNzE4MDk3MTY0LCJleHAiOjE3MTgxMDA3NjR9.rQnYA_vgXhU9BOJXZ1fXc3U--Mnqy95VgSCIM9kCmAm',
    ],
    keeps: ['Cookie: theme', 'access_token', 'lang'],
  },
  {
    id: 'jwt-json-token-response',
    family: 'jwt',
    text: '{"id_token": "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2FjY291bnRzLmdvb2dsZS5jb20iLCJhenAiOiI4NDIxMzMwNzc2Mi5hcHBzLmdvb2dsZXVzZXJjb250ZW50LmNvbSIsInN1YiI6IjM5NDQ1MDEyODEyODc5MTQ4MTg2NiIsImVtYWlsIjoiZGFuYUBhY21lLmlvIiwiaWF0IjoxNzE4MDk3MTY0LCJleHAiOjE3MTgxMDA3NjR9.ryBVwvoZTyW8QILeCFnCy5Odp34sD2Ya3-ssTSAwigSZLEg6mor4x7AjFmhOMHIwVmNWO_-pee3UR80ptBNrEo7tzsgIXdtQ2bcZRgOkuzqC32VHvqzKhwNZwNi_phuoMzLk6fXzuI_ok2A840xMMgxlQ2g7g47vJCtauSjv4ii6L17Ai-9CEtb35yfh_Jmy8apLYGrD7HnBufcLc8RehewZbjuobeXwZ2CYrC8nQ_8M3gBUI3u-1JrDOUSW-nOr4GOahkQdIinppEhmeihSaOhTpyeny2IxRLdfMNOdb1_b0oXuIYHQcKCgx9SS-9Ld380FiyWJ49sm5vIXKNDoVH", "token_type": "Bearer", "expires_in": 3599, "scope": "openid email profile"}',
    secrets: [
      'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2FjY291bnRzLmdvb2dsZS5jb20iLCJhenAiOiI4NDIxMzMwNzc2Mi5hcHBzLmdvb2dsZXVzZXJjb250ZW50LmNvbSIsInN1YiI6IjM5NDQ1MDEyODEyODc5MTQ4MTg2NiIsImVtYWlsIjoiZGFuYUBhY21lLmlvIiwiaWF0IjoxNzE4MDk3MTY0LCJleHAiOjE3MTgxMDA3NjR9.ryBVwvoZTyW8QILeCFnCy5Odp34sD2Ya3-ssTSAwigSZLEg6mor4x7AjFmhOMHIwVmNWO_-pee3UR80ptBNrEo7tzsgIXdtQ2bcZRgOkuzqC32VHvqzKhwNZwNi_phuoMzLk6fXzuI_ok2A840xMMgxlQ2g7g47vJCtauSjv4ii6L17Ai-9CEtb35yfh_Jmy8apLYGrD7HnBufcLc8RehewZbjuobeXwZ2CYrC8nQ_8M3gBUI3u-1JrDOUSW-nOr4GOahkQdIinppEhmeihSaOhTpyeny2IxRLdfMNOdb1_b0oXuIYHQcKCgx9SS-9Ld380FiyWJ49sm5vIXKNDoVH',
    ],
    keeps: ['"id_token"', '"token_type": "Bearer"', '"expires_in": 3599', '"scope": "openid email profile"'],
  },
  {
    id: 'jwt-log-line',
    family: 'jwt',
    text: '2024-06-11T09:12:44.118Z auth-svc INFO issued session jwt=eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyX3pETXkwN2dHVEdzaiIsInNpZCI6IjAzYjJkM2FlLTY0ZDctNGNhYS05Y2Q4LTZhZTU5NGVhNjEyNCIsImlhdCI6MTcxODA5NzE2NCwiZXhwIjoxNzE4MDk3NzY0fQ.KIFg6_FNz0dX7QyXkbq5CRYzClqTx5ysUIvd3WAx5Dj819yOXu16R7DuIuVtHEydNOKEby9xwOKv48eFyDTxDX user=4821 ttl=600s',
    secrets: [
      'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyX3pETXkwN2dHVEdzaiIsInNpZCI6IjAzYjJkM2FlLTY0ZDctNGNhYS05Y2Q4LTZhZTU5NGVhNjEyNCIsImlhdCI6MTcxODA5NzE2NCwiZXhwIjoxNzE4MDk3NzY0fQ.KIFg6_FNz0dX7QyXkbq5CRYzClqTx5ysUIvd3WAx5Dj819yOXu16R7DuIuVtHEydNOKEby9xwOKv48eFyDTxDX',
    ],
    keeps: ['auth-svc INFO issued session', 'user=4821 ttl=600s'],
  },
  {
    id: 'jwt-supabase-service-role-env',
    family: 'jwt',
    text: 'SUPABASE_URL=https://qzkvbnrtxlpmwehydfca.supabase.co\n' +
      'SUPABASE_SERVICE_ROLE_KEY=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZSIsInJlZiI6InF6a3ZibnJ0eGxwbXdlaHlkZmNhIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImlhdCI6MTcxODA5NzE2NCwiZXhwIjoyMDMzNjczMTY0fQ.4wso5iIWgqsEl7HJui3PXX1tE6Pr0rsPNRoOtc2wgVA\n',
    secrets: [
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZSIsInJlZiI6InF6a3ZibnJ0eGxwbXdlaHlkZmNhIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImlhdCI6MTcxODA5NzE2NCwiZXhwIjoyMDMzNjczMTY0fQ.4wso5iIWgqsEl7HJui3PXX1tE6Pr0rsPNRoOtc2wgVA',
    ],
    keeps: ['SUPABASE_URL=https://qzkvbnrtxlpmwehydfca.supabase.co', 'SUPABASE_SERVICE_ROLE_KEY'],
  },
  {
    id: 'jwt-url-fragment',
    family: 'jwt',
    text: 'Redirected to https://app.acme.io/auth/callback#access_token=eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjOTZiNjkzZS0yNjk3LTQ5Y2QtOTU2OC0xY2FjYjY2MDkxOWEiLCJ0ZW5hbnQiOiJhY21lIiwiaWF0IjoxNzE4MDk3MTY0LCJleHAiOjE3MTgxMDA3NjR9.xNcEkp7XcL6u9X8CeSm6V_qAacmtcLWZJtfXVcL_7QCYZhmr7eG4ATsBxesfshG_MRdT8qdHdGsGbiZd39XsMf&token_type=Bearer&expires_in=3600',
    secrets: [
      'eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjOTZiNjkzZS0yNjk3LTQ5Y2QtOTU2OC0xY2FjYjY2MDkxOWEiLCJ0ZW5hbnQiOiJhY21lIiwiaWF0IjoxNzE4MDk3MTY0LCJleHAiOjE3MTgxMDA3NjR9.xNcEkp7XcL6u9X8CeSm6V_qAacmtcLWZJtfXVcL_7QCYZhmr7eG4ATsBxesfshG_MRdT8qdHdGsGbiZd39XsMf',
    ],
    keeps: [
      'Redirected to https://app.acme.io/auth/callback#access_token',
      'token_type=Bearer',
      'expires_in=3600',
    ],
  },
  {
    id: 'jwt-markdown-prose',
    family: 'jwt',
    text: 'Decoded the token on jwt.io:\n' +
      '\n' +
      '```\n' +
      'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2xvZ2luLm1pY3Jvc29mdG9ubGluZS5jb20vNzJmOTg4YmYtODZmMS00MWFmLTkxYWItMmQ3Y2QwMTFkYjQ3L3YyLjAiLCJvaWQiOiI4MzgyZWI1OC1iMmYyLTQ5ZTgtYjFkYS03MWNiYzI3OWYyNjIiLCJwcmVmZXJyZWRfdXNlcm5hbWUiOiJkYW5hQGFjbWUuaW8iLCJpYXQiOjE3MTgwOTcxNjQsImV4cCI6MTcxODEwMDc2NH0.ir3zDZ6H_sUUzPDcyJAN13YJCUxE1QFMFPUdmr2GtFGyKXv4J_l2T2EdhWLy0SXPBv-TNN3mG7MfTxZYr8EQ29gbJHfDe9nEO7BhT3rk8R4BdLEBfXTDiPUNeML8SKSC-MHBbd2_NgHZhcLkeWK0-jnVR_416Qv_4ZVFC69rsEkSICOhO90sMSygGSclemt8HVCkG1AoXihq5xqdd0rKeS8Z5YdcpLM8KBDTxOlX13ggvxFEAeSYwdAklV9XIUUANl-cjXdEFJz6KQ6TP8ZyvCjhpr61VzIY4h9L5cTjUHVcJZ0r_1xTb_yos_DxLb-nNjvEI1mcQGc89oEJ3P6kiN\n' +
      '```\n' +
      '\n' +
      'The `exp` claim is already in the past, so the 401 is expected.',
    secrets: [
      'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2xvZ2luLm1pY3Jvc29mdG9ubGluZS5jb20vNzJmOTg4YmYtODZmMS00MWFmLTkxYWItMmQ3Y2QwMTFkYjQ3L3YyLjAiLCJvaWQiOiI4MzgyZWI1OC1iMmYyLTQ5ZTgtYjFkYS03MWNiYzI3OWYyNjIiLCJwcmVmZXJyZWRfdXNlcm5hbWUiOiJkYW5hQGFjbWUuaW8iLCJpYXQiOjE3MTgwOTcxNjQsImV4cCI6MTcxODEwMDc2NH0.ir3zDZ6H_sUUzPDcyJAN13YJCUxE1QFMFPUdmr2GtFGyKXv4J_l2T2EdhWLy0SXPBv-TNN3mG7MfTxZYr8EQ29gbJHfDe9nEO7BhT3rk8R4BdLEBfXTDiPUNeML8SKSC-MHBbd2_NgHZhcLkeWK0-jnVR_416Qv_4ZVFC69rsEkSICOhO90sMSygGSclemt8HVCkG1AoXihq5xqdd0rKeS8Z5YdcpLM8KBDTxOlX13ggvxFEAeSYwdAklV9XIUUANl-cjXdEFJz6KQ6TP8ZyvCjhpr61VzIY4h9L5cTjUHVcJZ0r_1xTb_yos_DxLb-nNjvEI1mcQGc89oEJ3P6kiN',
    ],
    keeps: ['Decoded the token on jwt.io:', 'claim is already in the past, so the 401 is expected.'],
  },

  // ---- private_key -----------------------------------------------------------------------------------
  // Private keys: PEM RSA / EC / PKCS#8 / encrypted PKCS#8 / legacy encrypted RSA, OpenSSH, PGP,
  // DSA, age. Every body line is a secret.
  {
    id: 'private-key-rsa-pem',
    family: 'private_key',
    text: 'deploy key for the staging bastion:\n' +
      '-----BEGIN RSA PRIVATE KEY-----\n' +
      'MIIEowIBAAKCAQEAjBu1OcxnJRNsgtTa7WStH9Fo08tHAYJHsLIuToa8SvR6w01R\n' +
      'aEVX6OV/uieDrJ9Ig2VhoPpskDCB1Wyvug41EayrpCk4EQ/nvUcRn+VdGSCX260k\n' +
      'tAcJM49PfKHcJkmnzQjlRwLbG8d5plGW8sKUG4V7tIY2eRKEeQTFjCQQTqrEyxGE\n' +
      '4WUgf/23doDOmKE9a+WbTLYU21J2N3OsCS+mGKFh+9AU247IaN8FI8wTGoCohTA8\n' +
      'oykJOJEt5IMDrHwkO2AJgUVpAR7znDajwol9MMxJYNy5sFUuApyqhkgwWvKVATly\n' +
      'LXeQrxnXVdS4119fDqnQRHTjkKpB+eukrWe+iXAPBzAXa8OF1vFfhtgx7jZ90cA8\n' +
      'zL7yBaOw9Ui/SPcHnMeW/Y/OAzE6w2xdZ3LEchBLZgWtSSPT6fnfkkWqIf1CIQU3\n' +
      '7ZXUoNHjXMg/pF0XVmyyUe+w8eEIFngAozCB9gXvJ1jf68cWNmyImW9Ei3Ozjh8G\n' +
      'TqV3G+nonBvXWgIYBAfDN8mmr3T3VErBiRqMvV8iS5XNiINinfCdWxvyBLX0c+6M\n' +
      'ZHI/6kDukwkxwBLz0YeesKuv19RCeuVqJrdPYlAuB6wSEEP352AZC5kbMxcAnO0e\n' +
      'N+jf6CUemGcUa36MVX7beCXSPar81zu4/A9RfYFTfnU8ZqZ6CmJ4Rii6F7dstPN7\n' +
      'IkxoPgmQhO4UQcrsdiX4gLxeNpns9eIoFbmp5K+cQhJAAXxMfGT1fhQEQXnh4gct\n' +
      'w5CuYa8C9ED1k0Ef58fIrV+0W8Cqn80pvF/vSupAz6Pa7zzVABbH/sAP+EFNqSxQ\n' +
      'AJKo3jPna/15ywQqh36hUFWTJk32YqTOVcjwxNEGd9X4aoA2Tw1DoS+lJP+0O3Fx\n' +
      'Ir0cNGuPJzoc9bEOEqrIfDNOzr6wqoojmazQLuDL80qUfbLSGz7CGXEUtu2EZvHs\n' +
      'Ir+uGxmKOGme7mVcKvGk0byz1NrgXt2nOEo8uz7SXyZ7D04povvHIN0l9K1NyJzX\n' +
      'emYXGdc7nu6YFumMMiPpTX4uRZCr2LuNM/Hch8NFaEwggPRFJtMRLIW/FLh5OBda\n' +
      'NTImLqig2q1QOmhQc839gJDbt1wa9N6uElFHS5RZ3Q+/nR3Xg0AufN3vXUpgPJwq\n' +
      'LmZnH6G+AdeaYxg42JKr/OAh8DMpJP7GfSHCKmOxrriKhDDO72Lq0pGOspFT11Mp\n' +
      'MHStCisTV23G6v26yJH8cnO18XTU9wCAEYgwAbSJxvzNoV6cVGvgOwOe1OY+OFi2\n' +
      'Oxc0F3sFc/hrL83fZNBj5mXbstf+ImyPa+moNp34fGlhcpIGIIvGA7hj5344F9V3\n' +
      'Bp1P9JRKu2ckL3q6Amt9PqY8CYj1f7Vf1xPDFoSNCJRle4JbYffWrxur2KsRHZpR\n' +
      '0WF1Todad2Ek8xDAuFWmtn4OSCSFfwpoRzw5xEJkI6Cw2i+YY3bS5N0kUGXmSzuG\n' +
      'Hhn7dphT3+DChKWPe6WTZd+UDc4gETWeP8hZR/NxQX8AIu+Nl7WHKdpqsVvvD2q0\n' +
      'Vv+S10J1mf2LKdaTsJVLhQEegyrGZnxnEb0aAoNdf2uFfkAR4cCp\n' +
      '-----END RSA PRIVATE KEY-----\n',
    secrets: [
      'MIIEowIBAAKCAQEAjBu1OcxnJRNsgtTa7WStH9Fo08tHAYJHsLIuToa8SvR6w01R',
      'aEVX6OV/uieDrJ9Ig2VhoPpskDCB1Wyvug41EayrpCk4EQ/nvUcRn+VdGSCX260k',
      'tAcJM49PfKHcJkmnzQjlRwLbG8d5plGW8sKUG4V7tIY2eRKEeQTFjCQQTqrEyxGE',
      '4WUgf/23doDOmKE9a+WbTLYU21J2N3OsCS+mGKFh+9AU247IaN8FI8wTGoCohTA8',
      'oykJOJEt5IMDrHwkO2AJgUVpAR7znDajwol9MMxJYNy5sFUuApyqhkgwWvKVATly',
      'LXeQrxnXVdS4119fDqnQRHTjkKpB+eukrWe+iXAPBzAXa8OF1vFfhtgx7jZ90cA8',
      'zL7yBaOw9Ui/SPcHnMeW/Y/OAzE6w2xdZ3LEchBLZgWtSSPT6fnfkkWqIf1CIQU3',
      '7ZXUoNHjXMg/pF0XVmyyUe+w8eEIFngAozCB9gXvJ1jf68cWNmyImW9Ei3Ozjh8G',
      'TqV3G+nonBvXWgIYBAfDN8mmr3T3VErBiRqMvV8iS5XNiINinfCdWxvyBLX0c+6M',
      'ZHI/6kDukwkxwBLz0YeesKuv19RCeuVqJrdPYlAuB6wSEEP352AZC5kbMxcAnO0e',
      'N+jf6CUemGcUa36MVX7beCXSPar81zu4/A9RfYFTfnU8ZqZ6CmJ4Rii6F7dstPN7',
      'IkxoPgmQhO4UQcrsdiX4gLxeNpns9eIoFbmp5K+cQhJAAXxMfGT1fhQEQXnh4gct',
      'w5CuYa8C9ED1k0Ef58fIrV+0W8Cqn80pvF/vSupAz6Pa7zzVABbH/sAP+EFNqSxQ',
      'AJKo3jPna/15ywQqh36hUFWTJk32YqTOVcjwxNEGd9X4aoA2Tw1DoS+lJP+0O3Fx',
      'Ir0cNGuPJzoc9bEOEqrIfDNOzr6wqoojmazQLuDL80qUfbLSGz7CGXEUtu2EZvHs',
      'Ir+uGxmKOGme7mVcKvGk0byz1NrgXt2nOEo8uz7SXyZ7D04povvHIN0l9K1NyJzX',
      'emYXGdc7nu6YFumMMiPpTX4uRZCr2LuNM/Hch8NFaEwggPRFJtMRLIW/FLh5OBda',
      'NTImLqig2q1QOmhQc839gJDbt1wa9N6uElFHS5RZ3Q+/nR3Xg0AufN3vXUpgPJwq',
      'LmZnH6G+AdeaYxg42JKr/OAh8DMpJP7GfSHCKmOxrriKhDDO72Lq0pGOspFT11Mp',
      'MHStCisTV23G6v26yJH8cnO18XTU9wCAEYgwAbSJxvzNoV6cVGvgOwOe1OY+OFi2',
      'Oxc0F3sFc/hrL83fZNBj5mXbstf+ImyPa+moNp34fGlhcpIGIIvGA7hj5344F9V3',
      'Bp1P9JRKu2ckL3q6Amt9PqY8CYj1f7Vf1xPDFoSNCJRle4JbYffWrxur2KsRHZpR',
      '0WF1Todad2Ek8xDAuFWmtn4OSCSFfwpoRzw5xEJkI6Cw2i+YY3bS5N0kUGXmSzuG',
      'Hhn7dphT3+DChKWPe6WTZd+UDc4gETWeP8hZR/NxQX8AIu+Nl7WHKdpqsVvvD2q0',
      'Vv+S10J1mf2LKdaTsJVLhQEegyrGZnxnEb0aAoNdf2uFfkAR4cCp',
    ],
    keeps: ['deploy key for the staging bastion:'],
  },
  {
    id: 'private-key-ec-pem',
    family: 'private_key',
    text: '$ cat certs/tls.key\n' +
      '-----BEGIN EC PRIVATE KEY-----\n' +
      'MHcCAQEEIp3yq7d4iZkPlehSkW/Iarislr52fubZ+KDzVXPiZQCpcg7iELmVYnXA\n' +
      'OmyDkBk34h1pEKOfe31Bxu0cWEAQeNzwGK9Sz/DI6RxNo+95OPZaXHmAyOGja/0R\n' +
      'C/DfCQ5XkHC4A44L42P0Yjs72CCyhxQLK+eS\n' +
      '-----END EC PRIVATE KEY-----\n' +
      '$ openssl ec -in certs/tls.key -pubout',
    secrets: [
      'MHcCAQEEIp3yq7d4iZkPlehSkW/Iarislr52fubZ+KDzVXPiZQCpcg7iELmVYnXA',
      'OmyDkBk34h1pEKOfe31Bxu0cWEAQeNzwGK9Sz/DI6RxNo+95OPZaXHmAyOGja/0R',
      'C/DfCQ5XkHC4A44L42P0Yjs72CCyhxQLK+eS',
    ],
    keeps: ['$ cat certs/tls.key', '$ openssl ec -in certs/tls.key -pubout'],
  },
  {
    id: 'private-key-pkcs8-markdown-fence',
    family: 'private_key',
    text: 'The signing key (do not commit):\n' +
      '\n' +
      '```pem\n' +
      '-----BEGIN PRIVATE KEY-----\n' +
      'MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQzhpgvv62S/4YiB\n' +
      'NbK0paspTygoPo/i/j5N9B5w+NteNyI6oofx116u9W34xv/67ZgNm+/zjLyvScpo\n' +
      'kyesjsWB5FfisekNvJ2/o6mpmJAQpDnpo+IMEnBDGUuVPs2qG6iyM7Lk5r+eG74p\n' +
      'ZE6/yA/gX9v8jfv3HUjYq6DbnMJrtrbsyPZlaL0ARIznEiEWxMNzSYeGVMaqqNA0\n' +
      '8NheNVnhRJLcmA9XetTBmU0Yl9qptcH+EG89RxZG30lJk0rtmVOt9Oca6MV053CY\n' +
      'Rt+QhQHHQSST2qmg3GqIfmj1zVXk2ihhYWYL7yRWuZn/0r1KrPc6hbRaV94/J6wu\n' +
      'zObJDYD/6nxhuo7QGtFbsAOK6i+9LFu5pAxN5FNRnIoDoweaD8SlIxLZCQtpfC7x\n' +
      'eRaOBbiue+DxtpiHXE1zKxf6KkMhBQiluOq162Q2bdANheyYXzybNKJRt+op8Adn\n' +
      'cmtWy1oYTx+NBbeQMbP6lbYGltgkCkUl7e2Vg0FG0yCPuu2HEvELeViBXYi9O2Vq\n' +
      '0XADXqYJJIVU21a0NeZehLX9gGS87SzVEAOS+EEPO3lciqNEyVDvAcy2WIx3KBQ1\n' +
      '1/aFaUsUjE7MgcX6gPDWMt99COfMLV/K/XzBxO9phQKyrqXQg5YLc36na+4jwoNC\n' +
      '+bdzUuczpoHZ9D3P+ZKUyC0PyA/SAS7i9n8Q7HOdm+bSWhLNBaGns2ptUM0LxCXD\n' +
      'TRjVbiJuBblxmtReW5M/7JH37jjcJQhVIzyUEOkHyURhPH7rRXFWO6CRVcc8axYN\n' +
      'fJz+woKcQjTrZ4l6coqdLXQIXNycFyQKMWdTrLfUmy+hyp0YK9ypOV3Qjntuc+4a\n' +
      'UCJvbsUwsLpqw1VMAgsERpLN1w+QBcL4G7gj9M7lNslC0IJwcTSfWmfNobN78Uta\n' +
      'mLyxA6rGKthyDbt2eHjcrgWbCHRzehSI0GUeh7oi4EniBwPcwoqfzAKs+PRDnnmi\n' +
      'K9PnpTcxPvLEalRGDE3toXr6MIsjk7uLHjFUvPm2PF39Wbfr3Elx8HEa4ovgEbAA\n' +
      '0zF6CmTuv1VpoAhoX6L59I6I7iqbO4oqExf7o83mcDmZOQ+t6CY5/sLnDA7iSM++\n' +
      'V06y+l/FETSVa2x4ycfeRtAzqncgpPd+XuGMNDg7Y0Xm73z+pP5vI06RRAUSuCQQ\n' +
      'jY5ee9Ixs7REd+01LRKfw9oN8tDIGqoxwMyiQlilsrNN79lIspSJ1A1Rau4WW/nQ\n' +
      'QAafAPMTDB/rcKE8ENkcR4pAPxgWqAn5GRXUS1Hye3HZbMKf+ZbaPaoYGn6554c4\n' +
      '1C0+jaHX6higECd3oXBC27VUoOPw6efp9xXzEeYbqIn2MIUCvdadRCb/O1wsA0uH\n' +
      'rFP5WpqDN1m5qPlDZTGEhZDAYCqxhWAfVq3ZLnuJKF+UWEXVIQJs/G7igePcmBWX\n' +
      '1thAelwYPaF7OLTgFQIU1xZYVK6sh5QDpY7o/l8bZGxzs/I0LDpW2VyH8UEOsPqN\n' +
      '8eFV0Ms3CZHTZPUNSI60PjGMr0XErGoT123wZljqRBW7RrJaz36pgWueEpQ+8/ZD\n' +
      '2o3bX61ip9Hfmav1/bl8ddfs\n' +
      '-----END PRIVATE KEY-----\n' +
      '```\n',
    secrets: [
      'MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQzhpgvv62S/4YiB',
      'NbK0paspTygoPo/i/j5N9B5w+NteNyI6oofx116u9W34xv/67ZgNm+/zjLyvScpo',
      'kyesjsWB5FfisekNvJ2/o6mpmJAQpDnpo+IMEnBDGUuVPs2qG6iyM7Lk5r+eG74p',
      'ZE6/yA/gX9v8jfv3HUjYq6DbnMJrtrbsyPZlaL0ARIznEiEWxMNzSYeGVMaqqNA0',
      '8NheNVnhRJLcmA9XetTBmU0Yl9qptcH+EG89RxZG30lJk0rtmVOt9Oca6MV053CY',
      'Rt+QhQHHQSST2qmg3GqIfmj1zVXk2ihhYWYL7yRWuZn/0r1KrPc6hbRaV94/J6wu',
      'zObJDYD/6nxhuo7QGtFbsAOK6i+9LFu5pAxN5FNRnIoDoweaD8SlIxLZCQtpfC7x',
      'eRaOBbiue+DxtpiHXE1zKxf6KkMhBQiluOq162Q2bdANheyYXzybNKJRt+op8Adn',
      'cmtWy1oYTx+NBbeQMbP6lbYGltgkCkUl7e2Vg0FG0yCPuu2HEvELeViBXYi9O2Vq',
      '0XADXqYJJIVU21a0NeZehLX9gGS87SzVEAOS+EEPO3lciqNEyVDvAcy2WIx3KBQ1',
      '1/aFaUsUjE7MgcX6gPDWMt99COfMLV/K/XzBxO9phQKyrqXQg5YLc36na+4jwoNC',
      '+bdzUuczpoHZ9D3P+ZKUyC0PyA/SAS7i9n8Q7HOdm+bSWhLNBaGns2ptUM0LxCXD',
      'TRjVbiJuBblxmtReW5M/7JH37jjcJQhVIzyUEOkHyURhPH7rRXFWO6CRVcc8axYN',
      'fJz+woKcQjTrZ4l6coqdLXQIXNycFyQKMWdTrLfUmy+hyp0YK9ypOV3Qjntuc+4a',
      'UCJvbsUwsLpqw1VMAgsERpLN1w+QBcL4G7gj9M7lNslC0IJwcTSfWmfNobN78Uta',
      'mLyxA6rGKthyDbt2eHjcrgWbCHRzehSI0GUeh7oi4EniBwPcwoqfzAKs+PRDnnmi',
      'K9PnpTcxPvLEalRGDE3toXr6MIsjk7uLHjFUvPm2PF39Wbfr3Elx8HEa4ovgEbAA',
      '0zF6CmTuv1VpoAhoX6L59I6I7iqbO4oqExf7o83mcDmZOQ+t6CY5/sLnDA7iSM++',
      'V06y+l/FETSVa2x4ycfeRtAzqncgpPd+XuGMNDg7Y0Xm73z+pP5vI06RRAUSuCQQ',
      'jY5ee9Ixs7REd+01LRKfw9oN8tDIGqoxwMyiQlilsrNN79lIspSJ1A1Rau4WW/nQ',
      'QAafAPMTDB/rcKE8ENkcR4pAPxgWqAn5GRXUS1Hye3HZbMKf+ZbaPaoYGn6554c4',
      '1C0+jaHX6higECd3oXBC27VUoOPw6efp9xXzEeYbqIn2MIUCvdadRCb/O1wsA0uH',
      'rFP5WpqDN1m5qPlDZTGEhZDAYCqxhWAfVq3ZLnuJKF+UWEXVIQJs/G7igePcmBWX',
      '1thAelwYPaF7OLTgFQIU1xZYVK6sh5QDpY7o/l8bZGxzs/I0LDpW2VyH8UEOsPqN',
      '8eFV0Ms3CZHTZPUNSI60PjGMr0XErGoT123wZljqRBW7RrJaz36pgWueEpQ+8/ZD',
      '2o3bX61ip9Hfmav1/bl8ddfs',
    ],
    keeps: ['The signing key (do not commit):'],
  },
  {
    id: 'private-key-encrypted-pkcs8-yaml',
    family: 'private_key',
    text: 'tls:\n' +
      '  certFile: /etc/acme/tls.crt\n' +
      '  key: |\n' +
      '    -----BEGIN ENCRYPTED PRIVATE KEY-----\n' +
      '    MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIiFMujrLx83vGyMYY\n' +
      '    X4tfYT6c6KC1Lv5WYh5JVPxL9jn0/hQQoLGfOsDgbXNrDtYakpyX6X8dtj6w1ju3\n' +
      '    sYGJaF0SU9W9GfUKR8ki8VgJbg8TCR/6fvmc5Bg1NvEEK3wL9mVv6FIQ7S6pdVi2\n' +
      '    4EYbRpQv8RGS9Bmbp6vcaZsgbLGQKEaD8hlPr7yVuLnCXvRcb11IO2frh7zzBbGl\n' +
      '    BzXr4NgqIRguwtJodp4fgOqF7rx04GCbfBw6f25ckchrSVFxvon/mvmqpAAIAtjI\n' +
      '    XXe1sEcZtko+d4igNW0MePFpJo862mcWfPWwqPFcljXYHD9GaSVF3AoOf8rtgfCc\n' +
      '    I1+A/FRBdM2vxByY98WENcgXMjiIpiCpqnHAZaT4/Jz5908SN2QtMB5SVo0xjymU\n' +
      '    Wir2d2XSMTLJWgASVwWRdYgX2XaWjmTXyvIxjW9s9ii5GOZAwcjPceuVjR8+ug18\n' +
      '    m1BuqMZFMA2SFhdVQEuINOj2Xg2QUisvbccBZgN43ouLvB0nE1JLEzBOwCxgoIzz\n' +
      '    lKj+MuIrT+sD4tNMWZrEYRcu/4UFhC5JuFEujSxsK+SUCDdjpQJuH7Gd1holOBUM\n' +
      '    zh6lN2HIfKZ6A21h8fwOwjbisWxGtSjZ6O7Yuz3oriwZ6hJPeKO0lG7k1n4GTltN\n' +
      '    lQWR9C9OUhPFgAUhdrvBrmIYTat+ma38Y1cLsZLXlBzhgN1/Y8iL+wKxMzbZ/swG\n' +
      '    r51kViXQRNbAHlwjLbTNKDv/Xtgt04TwjH/M79JwT33C/vT4zlnE/ioxDkYBaimt\n' +
      '    uZRaJ7FNeQXnwN8/shZ2S0q5O8Ok3dZePBdfp5CAEKFf9zaPP2axqrDuLRmPGPaU\n' +
      '    0twEycS4t23DyTiAPTAPKooDU675BbX/sZda5VXsDg3BxlaUCdzQx/zvNkWqk1bh\n' +
      '    4fiCE0zA1Erzwi+LUjj2aObiuC6ptKYDAo9xCOZnm9YjsJEIKGvgZBz6AbqR4WNv\n' +
      '    OIOgnKD2Qhgtsc+o2FQTfa+7Z/95A5c9waRUjod51/uXTgrpHdxZCNFQ7Zph8viV\n' +
      '    yxLj0tIIXBKFgsIKUePrCp+05MqTD6nM3vYEBqLd2XGfcIUb9QcUXuayQ74A8kqb\n' +
      '    oKmaKpKF4hvcbEjeBJOWaZqdrk6vQNHtqBLYWlDKuYQt9tiefWBlj64NOnR7JOAz\n' +
      '    1MBNxSM0CMJP2a4UZvKKml4MLwaM9dS9xjQk932o4Vxme2ukcXKcCDjxLPDrcqdq\n' +
      '    5YYQy4UJNY4j6jgTA/6BzpYVSpORV+/dcqT+apJKVQqksHkigYZA86TDB1Y1pbuw\n' +
      '    dCbmrUzClAmZz1y0yUvllpUBTs8UgwuxHHX3ufAfqlYIJ+RzvIYP/01g2EL/XyKd\n' +
      '    5eNDNWlmJOmlqkgA4rGboG9i2/xUtN2MnVyKu0pX/DRYdP6KF8d3qNteLDBBatX3\n' +
      '    DKmS0puIUH7A8M9iHBZ0OfVOkOIsArRqtizptHTMP3Y+J6aTuD0F3bbqDq0VyM+L\n' +
      '    MKYRwUu2jlamTimErLfTdsfhUFtr0ZU5lASpaKUfhIbP65Ps2vnScrJ4AGkhct8B\n' +
      '    cYBHjKF6RLIIWHb7D6EZF2oK8trOwGNqCQoEB6x+oNBotW4onBAzekIXwjX5Vquo\n' +
      '    cqltofTiQZA17MANJSj8+lbvvUrlDn3Qp99176JfS4TWdiM7YvJRBgfoImXm/UH4\n' +
      '    1A26ST7tG6pr/v3Q2mZylLLP\n' +
      '    -----END ENCRYPTED PRIVATE KEY-----\n' +
      '  minVersion: VersionTLS12\n',
    secrets: [
      'MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIiFMujrLx83vGyMYY',
      'X4tfYT6c6KC1Lv5WYh5JVPxL9jn0/hQQoLGfOsDgbXNrDtYakpyX6X8dtj6w1ju3',
      'sYGJaF0SU9W9GfUKR8ki8VgJbg8TCR/6fvmc5Bg1NvEEK3wL9mVv6FIQ7S6pdVi2',
      '4EYbRpQv8RGS9Bmbp6vcaZsgbLGQKEaD8hlPr7yVuLnCXvRcb11IO2frh7zzBbGl',
      'BzXr4NgqIRguwtJodp4fgOqF7rx04GCbfBw6f25ckchrSVFxvon/mvmqpAAIAtjI',
      'XXe1sEcZtko+d4igNW0MePFpJo862mcWfPWwqPFcljXYHD9GaSVF3AoOf8rtgfCc',
      'I1+A/FRBdM2vxByY98WENcgXMjiIpiCpqnHAZaT4/Jz5908SN2QtMB5SVo0xjymU',
      'Wir2d2XSMTLJWgASVwWRdYgX2XaWjmTXyvIxjW9s9ii5GOZAwcjPceuVjR8+ug18',
      'm1BuqMZFMA2SFhdVQEuINOj2Xg2QUisvbccBZgN43ouLvB0nE1JLEzBOwCxgoIzz',
      'lKj+MuIrT+sD4tNMWZrEYRcu/4UFhC5JuFEujSxsK+SUCDdjpQJuH7Gd1holOBUM',
      'zh6lN2HIfKZ6A21h8fwOwjbisWxGtSjZ6O7Yuz3oriwZ6hJPeKO0lG7k1n4GTltN',
      'lQWR9C9OUhPFgAUhdrvBrmIYTat+ma38Y1cLsZLXlBzhgN1/Y8iL+wKxMzbZ/swG',
      'r51kViXQRNbAHlwjLbTNKDv/Xtgt04TwjH/M79JwT33C/vT4zlnE/ioxDkYBaimt',
      'uZRaJ7FNeQXnwN8/shZ2S0q5O8Ok3dZePBdfp5CAEKFf9zaPP2axqrDuLRmPGPaU',
      '0twEycS4t23DyTiAPTAPKooDU675BbX/sZda5VXsDg3BxlaUCdzQx/zvNkWqk1bh',
      '4fiCE0zA1Erzwi+LUjj2aObiuC6ptKYDAo9xCOZnm9YjsJEIKGvgZBz6AbqR4WNv',
      'OIOgnKD2Qhgtsc+o2FQTfa+7Z/95A5c9waRUjod51/uXTgrpHdxZCNFQ7Zph8viV',
      'yxLj0tIIXBKFgsIKUePrCp+05MqTD6nM3vYEBqLd2XGfcIUb9QcUXuayQ74A8kqb',
      'oKmaKpKF4hvcbEjeBJOWaZqdrk6vQNHtqBLYWlDKuYQt9tiefWBlj64NOnR7JOAz',
      '1MBNxSM0CMJP2a4UZvKKml4MLwaM9dS9xjQk932o4Vxme2ukcXKcCDjxLPDrcqdq',
      '5YYQy4UJNY4j6jgTA/6BzpYVSpORV+/dcqT+apJKVQqksHkigYZA86TDB1Y1pbuw',
      'dCbmrUzClAmZz1y0yUvllpUBTs8UgwuxHHX3ufAfqlYIJ+RzvIYP/01g2EL/XyKd',
      '5eNDNWlmJOmlqkgA4rGboG9i2/xUtN2MnVyKu0pX/DRYdP6KF8d3qNteLDBBatX3',
      'DKmS0puIUH7A8M9iHBZ0OfVOkOIsArRqtizptHTMP3Y+J6aTuD0F3bbqDq0VyM+L',
      'MKYRwUu2jlamTimErLfTdsfhUFtr0ZU5lASpaKUfhIbP65Ps2vnScrJ4AGkhct8B',
      'cYBHjKF6RLIIWHb7D6EZF2oK8trOwGNqCQoEB6x+oNBotW4onBAzekIXwjX5Vquo',
      'cqltofTiQZA17MANJSj8+lbvvUrlDn3Qp99176JfS4TWdiM7YvJRBgfoImXm/UH4',
      '1A26ST7tG6pr/v3Q2mZylLLP',
    ],
    keeps: ['tls:', 'certFile: /etc/acme/tls.crt', 'minVersion: VersionTLS12'],
  },
  {
    id: 'private-key-rsa-legacy-encrypted',
    family: 'private_key',
    text: '-----BEGIN RSA PRIVATE KEY-----\n' +
      'Proc-Type: 4,ENCRYPTED\n' +
      'DEK-Info: AES-256-CBC,41ECB505BE1F543D1BE7CD760E9D419C\n' +
      '\n' +
      'MIIEpQIBAAKCAQEAwzy5rZ2pEHMyex1m+6eQJ5mLKW7bPoPyr4nxtFzVVH6lSmZw\n' +
      '/5gSvLAXRPGIiXs1EyBUq/2Vgti0VbexN+6XpXYsgezfZ4dVohsbasyS6CS8WN35\n' +
      'WlCePaP5yadgyBDGQI4sQn/msmOhUKWwTXRBwuKPO0U8DdSz6dEo7VSLlNybbIl7\n' +
      'V3zVH6XdqLAUgDCfqccqQ+RQakQy7JqBk1lVf89daRWudwHpy06JD7wd/I231f7I\n' +
      'w3Nc9VxGf6oG9607L4dv64aRjjexZJ822eLm4ZpNnDL3T8ulsBwvR36SI7SQ9sTa\n' +
      'PFDPvjK63o2kAQesDW8KTy9Mx9ErtqZ+zcN8p0ICLGqLfKT2ATMk6ILDQhj+NqBF\n' +
      '3G8iAliAm8AZupZ8agjbTo/8M59vX0przW9/dcaK9NTx0nC6ZGPLy0NdtyinPa5j\n' +
      'IM0oQ5g/eBalsrcbAczA0x6oQ++Js3WYlHF0w73q0nlqDr5ymz48U0Y/75awTdy1\n' +
      'gfZRFoyGcxEcfMUln1o3dROg8XZ+MfozAAa22TE09s6mveupp9gJcoVQ5q2wXAvJ\n' +
      'S9qasErLd8/KAuOEHxCFDkpspD14m/6z1vD1RL3lm3a1gEULK1Mmbt5fbF4Jg8M9\n' +
      'jrKqaPc1ZUv8Zt1O5VoIl4ntnCdg2iVKom8JtdaCThYf+cmM6cNEtfa32UDfLHmu\n' +
      'G9rEJfjxboFqIRihd5TQfIBabUS7MpPVN5R9lXF8+qow0L82VgKgOoY/DAilfKFC\n' +
      'D0p3QK4guzte/ybdUdUdk9tWnlOGirhV6F87iVsGPG4UtCr2oOkBrxIsU4rU6Sy5\n' +
      '8/j7lhGHmH3ZIXZTPoj8RAEQImA0fz37fSivF2aolMW5a9lvSgbBhJhoZnq0RlFz\n' +
      'sUozmWqV0UMKuZWVotG9eKbAGLrTURXC27LGABFicigIAHysZj4sElfrSKB+iIJv\n' +
      'Q/r740C3lSha5TYmKLkK7CYSU7+6m8nkVScUcQ35OupZjoE1fDqFHWiJ/VmT77Pz\n' +
      'cKKIxrusZUzt+fREza6CAjReYCNBe6Tr3vxK8xBT+iqzdaNYQv+wPzjWI2CTGUL8\n' +
      'ySkwrvfMv7ehu3kKV0ck4rSG0OFkTRU9WHYtGujzvARy57i1PZS1iHXwgO8/e5IV\n' +
      'kzjAGRDlEMqoA2wNcKC1qXJttbfHRr5BYivb5RxZz4btcHFJwk6eA7joVwlgu8Wl\n' +
      'oBa9kt1lgJpFW6kL7YqUVfpe+IskhcKLee/WOPf0uuv3yXkM8RpvgITQ/F9zhz07\n' +
      'QzJxCAXT2YXNP/jlrbbvLWtq1/F6H1QrG8X5Q8cjiOmYBBG7aUyKSiDTQeHRBlNJ\n' +
      'ulcA2pQxB6vvmmN/MjwE7A8NqD0qlLnuqQipD/F5mm6b16Ybz6csf+peWsvj2OO2\n' +
      'wSAUB2Womn233mmAPB9JCqMU9DgeVerfWy3O+VFUQ8MLx+PzCITMDHVMhhm6veB/\n' +
      'EXBOw0QwrAsgKPZcxshuJtWX2eoBl4x1ctG8vwFair20ExXFO6ZkO47WHj3QeqO8\n' +
      'wjoOaqLQBjZ5goxBXYgg2oEHCZ0c2rXVxF+SJH1tUJH0axovQZV0Asqf6+vbl5wh\n' +
      '-----END RSA PRIVATE KEY-----\n',
    secrets: [
      'MIIEpQIBAAKCAQEAwzy5rZ2pEHMyex1m+6eQJ5mLKW7bPoPyr4nxtFzVVH6lSmZw',
      '/5gSvLAXRPGIiXs1EyBUq/2Vgti0VbexN+6XpXYsgezfZ4dVohsbasyS6CS8WN35',
      'WlCePaP5yadgyBDGQI4sQn/msmOhUKWwTXRBwuKPO0U8DdSz6dEo7VSLlNybbIl7',
      'V3zVH6XdqLAUgDCfqccqQ+RQakQy7JqBk1lVf89daRWudwHpy06JD7wd/I231f7I',
      'w3Nc9VxGf6oG9607L4dv64aRjjexZJ822eLm4ZpNnDL3T8ulsBwvR36SI7SQ9sTa',
      'PFDPvjK63o2kAQesDW8KTy9Mx9ErtqZ+zcN8p0ICLGqLfKT2ATMk6ILDQhj+NqBF',
      '3G8iAliAm8AZupZ8agjbTo/8M59vX0przW9/dcaK9NTx0nC6ZGPLy0NdtyinPa5j',
      'IM0oQ5g/eBalsrcbAczA0x6oQ++Js3WYlHF0w73q0nlqDr5ymz48U0Y/75awTdy1',
      'gfZRFoyGcxEcfMUln1o3dROg8XZ+MfozAAa22TE09s6mveupp9gJcoVQ5q2wXAvJ',
      'S9qasErLd8/KAuOEHxCFDkpspD14m/6z1vD1RL3lm3a1gEULK1Mmbt5fbF4Jg8M9',
      'jrKqaPc1ZUv8Zt1O5VoIl4ntnCdg2iVKom8JtdaCThYf+cmM6cNEtfa32UDfLHmu',
      'G9rEJfjxboFqIRihd5TQfIBabUS7MpPVN5R9lXF8+qow0L82VgKgOoY/DAilfKFC',
      'D0p3QK4guzte/ybdUdUdk9tWnlOGirhV6F87iVsGPG4UtCr2oOkBrxIsU4rU6Sy5',
      '8/j7lhGHmH3ZIXZTPoj8RAEQImA0fz37fSivF2aolMW5a9lvSgbBhJhoZnq0RlFz',
      'sUozmWqV0UMKuZWVotG9eKbAGLrTURXC27LGABFicigIAHysZj4sElfrSKB+iIJv',
      'Q/r740C3lSha5TYmKLkK7CYSU7+6m8nkVScUcQ35OupZjoE1fDqFHWiJ/VmT77Pz',
      'cKKIxrusZUzt+fREza6CAjReYCNBe6Tr3vxK8xBT+iqzdaNYQv+wPzjWI2CTGUL8',
      'ySkwrvfMv7ehu3kKV0ck4rSG0OFkTRU9WHYtGujzvARy57i1PZS1iHXwgO8/e5IV',
      'kzjAGRDlEMqoA2wNcKC1qXJttbfHRr5BYivb5RxZz4btcHFJwk6eA7joVwlgu8Wl',
      'oBa9kt1lgJpFW6kL7YqUVfpe+IskhcKLee/WOPf0uuv3yXkM8RpvgITQ/F9zhz07',
      'QzJxCAXT2YXNP/jlrbbvLWtq1/F6H1QrG8X5Q8cjiOmYBBG7aUyKSiDTQeHRBlNJ',
      'ulcA2pQxB6vvmmN/MjwE7A8NqD0qlLnuqQipD/F5mm6b16Ybz6csf+peWsvj2OO2',
      'wSAUB2Womn233mmAPB9JCqMU9DgeVerfWy3O+VFUQ8MLx+PzCITMDHVMhhm6veB/',
      'EXBOw0QwrAsgKPZcxshuJtWX2eoBl4x1ctG8vwFair20ExXFO6ZkO47WHj3QeqO8',
      'wjoOaqLQBjZ5goxBXYgg2oEHCZ0c2rXVxF+SJH1tUJH0axovQZV0Asqf6+vbl5wh',
    ],
  },
  {
    id: 'private-key-openssh',
    family: 'private_key',
    text: '$ cat ~/.ssh/id_ed25519\n' +
      '-----BEGIN OPENSSH PRIVATE KEY-----\n' +
      'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n' +
      'QyNTUxOQAAACDhTTXJ5qJGe23HwGdvIXM6WYV9vnittl1nR7gm8UUntmmDrPmhe59PUHZ1\n' +
      'CJR44elhWyhE3oJ880f/TjpXT8t9U4AO0ns4RrYYpTDIVjiTrNX9TNGAKLv6y3Nhm17vA9\n' +
      'KvIfkhdEmjIxn2oznINNCfI1iDqGUlfR48jglnghHg4QS1AyTAq2YGEjdVy2A55xU2PY8t\n' +
      'KiFyMc8H7Tn8PZa0me0Qk87eQAnKCvkSUc0gjBmYRyhFxzCB\n' +
      '-----END OPENSSH PRIVATE KEY-----\n',
    secrets: [
      'QyNTUxOQAAACDhTTXJ5qJGe23HwGdvIXM6WYV9vnittl1nR7gm8UUntmmDrPmhe59PUHZ1',
      'CJR44elhWyhE3oJ880f/TjpXT8t9U4AO0ns4RrYYpTDIVjiTrNX9TNGAKLv6y3Nhm17vA9',
      'KvIfkhdEmjIxn2oznINNCfI1iDqGUlfR48jglnghHg4QS1AyTAq2YGEjdVy2A55xU2PY8t',
      'KiFyMc8H7Tn8PZa0me0Qk87eQAnKCvkSUc0gjBmYRyhFxzCB',
    ],
    keeps: ['$ cat ~/.ssh/id_ed25519'],
  },
  {
    id: 'private-key-pgp-block',
    family: 'private_key',
    text: '$ gpg --armor --export-secret-keys release@acme.io\n' +
      '-----BEGIN PGP PRIVATE KEY BLOCK-----\n' +
      '\n' +
      'lQdGBGZoCMS/Tk8/LkoVckNqS9e9324umtB22e/1pIGk0sX+OrkiBneE4TttfDb2\n' +
      'gdny2SMG1nLvqRqfu1D6QVAY/ILQ/czBZD/wGT5/9rFQkXsRqYZKpR5gtxMpgWcn\n' +
      'F2wa72mvCYO2nw0gOfdLRThDXrzlkDENMpjLkivgsSy8uyKtYg50Cw08LYm6PBaC\n' +
      'lglqlT4EBXiX2lzedp8XV9LvC1va10uZDfR8Dr+/K+NNjxluP9SPlfeU7nm1G/9y\n' +
      '7gle8teooYvZGxn2QEOXlyMZj/qKGZkU2EzTNZ+Ka1c/8j6yannlNTE624UOu97r\n' +
      'T74SG+SWDLtMdvVy8nwJxs9lQvLmY9JU41ebbLAlmSZKV/8zafMgtyVyrVRDwkT7\n' +
      'NI5PC7sVOSk2GndMFpVJxFPYE6NFpflVpKANC6PDIhrs/RzicjUUAdImny9FCUfj\n' +
      '/clJ0FPQ7ak6jDqGd0xKH2N6ymfZBJV9LqPMHwAUUKzL0CmAogGfaGIwtyiLKFdu\n' +
      'qF22dCiVVenm8QtgZx1OGTc0q38zG8OS1BrJzwgLOgTDbyNowBgnCc9/cPbjsOYQ\n' +
      'kJE8BGfgLbF6rrSGRg56sp9O5p0ckeaN2UFHOXq5LZG9qAvCY8Kyu3FggyaNp3Ym\n' +
      'i6f9iuLIOLrkOuDBglSsUSl1CRqhwwXQFku63WLrarVVJv4kWXTY262hvYEyDxxE\n' +
      'UXShuLYRneBDzvnYC3OI5G79S5JloGBrlHfUzbJ7bE9osNWZZvaj8iBJAFjaLxU0\n' +
      'CObJgvq96yOxtMmhWsEdYlrEH4youKPCXS4bNCAs2O+5yuemU3PsctKL7U4kUPhp\n' +
      '3mPeMzB2JVTvfbcAqXzSSQAcRX+pGMVYOsM7luCqf2wKwOV31D0nR7fP93jAUoc6\n' +
      'GmRAtGScOgt732ebIbNfVUSzsyd25J54WQoPzL1/rcuConB24pURK1fyw3hVCCF8\n' +
      'Ra4xGzzYfULpsyc3a+U/2Z6ALAUaQbZq7m3vQBDp+YJxDoG3A/5G1LAhjXE3ywRJ\n' +
      'yG2F0EAVU0bPVfVC4lWBUJQZCNLDG1cPqqXn+1VTFz3nFCZdo9EXGLuMF58WlrL3\n' +
      'qHZGp87jhelfoL4VN5Vao4M0OfdgsVDNedFmOEE9PwpFszMg4HiAMqPAewoXhL3p\n' +
      'ssqe9NaXv9ND7ge6QFYYWXVXnmpkq6s1rfci+pd4YfceXzRB88oCPw5vsiuRfkMx\n' +
      '6jRvpDKHWPvFfoBWFXpPO7yo8QbvKuycYMwvZXcK/wCa5K+Vh96VlpikPW9HW8gE\n' +
      '3lAt7ch+ZXWk4yi1z+kec2JhseRfRI2zsLfwGvbOO0iRDEUk12e6yn12jojJvjL8\n' +
      '9PeVCaGhTAiXNul4rVv/wkralrs5i8PSk0uLcyP19T7sjley7R1nvHi73BOOjcXf\n' +
      '=wo98\n' +
      '-----END PGP PRIVATE KEY BLOCK-----\n',
    secrets: [
      'lQdGBGZoCMS/Tk8/LkoVckNqS9e9324umtB22e/1pIGk0sX+OrkiBneE4TttfDb2',
      'gdny2SMG1nLvqRqfu1D6QVAY/ILQ/czBZD/wGT5/9rFQkXsRqYZKpR5gtxMpgWcn',
      'F2wa72mvCYO2nw0gOfdLRThDXrzlkDENMpjLkivgsSy8uyKtYg50Cw08LYm6PBaC',
      'lglqlT4EBXiX2lzedp8XV9LvC1va10uZDfR8Dr+/K+NNjxluP9SPlfeU7nm1G/9y',
      '7gle8teooYvZGxn2QEOXlyMZj/qKGZkU2EzTNZ+Ka1c/8j6yannlNTE624UOu97r',
      'T74SG+SWDLtMdvVy8nwJxs9lQvLmY9JU41ebbLAlmSZKV/8zafMgtyVyrVRDwkT7',
      'NI5PC7sVOSk2GndMFpVJxFPYE6NFpflVpKANC6PDIhrs/RzicjUUAdImny9FCUfj',
      '/clJ0FPQ7ak6jDqGd0xKH2N6ymfZBJV9LqPMHwAUUKzL0CmAogGfaGIwtyiLKFdu',
      'qF22dCiVVenm8QtgZx1OGTc0q38zG8OS1BrJzwgLOgTDbyNowBgnCc9/cPbjsOYQ',
      'kJE8BGfgLbF6rrSGRg56sp9O5p0ckeaN2UFHOXq5LZG9qAvCY8Kyu3FggyaNp3Ym',
      'i6f9iuLIOLrkOuDBglSsUSl1CRqhwwXQFku63WLrarVVJv4kWXTY262hvYEyDxxE',
      'UXShuLYRneBDzvnYC3OI5G79S5JloGBrlHfUzbJ7bE9osNWZZvaj8iBJAFjaLxU0',
      'CObJgvq96yOxtMmhWsEdYlrEH4youKPCXS4bNCAs2O+5yuemU3PsctKL7U4kUPhp',
      '3mPeMzB2JVTvfbcAqXzSSQAcRX+pGMVYOsM7luCqf2wKwOV31D0nR7fP93jAUoc6',
      'GmRAtGScOgt732ebIbNfVUSzsyd25J54WQoPzL1/rcuConB24pURK1fyw3hVCCF8',
      'Ra4xGzzYfULpsyc3a+U/2Z6ALAUaQbZq7m3vQBDp+YJxDoG3A/5G1LAhjXE3ywRJ',
      'yG2F0EAVU0bPVfVC4lWBUJQZCNLDG1cPqqXn+1VTFz3nFCZdo9EXGLuMF58WlrL3',
      'qHZGp87jhelfoL4VN5Vao4M0OfdgsVDNedFmOEE9PwpFszMg4HiAMqPAewoXhL3p',
      'ssqe9NaXv9ND7ge6QFYYWXVXnmpkq6s1rfci+pd4YfceXzRB88oCPw5vsiuRfkMx',
      '6jRvpDKHWPvFfoBWFXpPO7yo8QbvKuycYMwvZXcK/wCa5K+Vh96VlpikPW9HW8gE',
      '3lAt7ch+ZXWk4yi1z+kec2JhseRfRI2zsLfwGvbOO0iRDEUk12e6yn12jojJvjL8',
      '9PeVCaGhTAiXNul4rVv/wkralrs5i8PSk0uLcyP19T7sjley7R1nvHi73BOOjcXf',
    ],
    keeps: ['$ gpg --armor --export-secret-keys'],
  },
  {
    id: 'private-key-dsa-pem',
    family: 'private_key',
    text: '-----BEGIN DSA PRIVATE KEY-----\n' +
      'MIIBuwIBAAKBgQWEoypClkg+U61LVOcYsVoYPqrprwCjCieUM7oG3qYKmM8VTwhS\n' +
      'ADZjEYm+yLjqqem7IQ1C8a1oTm5WMg0o7iM2tU4RXprdPRzmTkvF16yRQKP8IVlp\n' +
      '3W7xU5O05F+Vavq0hbZHawbFu0rXq+cSBg22FMso6sKVv5fnRklT6C/Qg6fYEpwk\n' +
      '36qOiRmeNXjjFa8g7gSflLiP7f8VH2Eiiea/qMw/xK2WOSr+rRWAhm4AmD6KrWgV\n' +
      'aKM8xxKcM1wsiaGuqZEBHz1wzlg1jiHcCLmhIRGGzkcWOtRsLHnrjegq2Ppt+IJG\n' +
      '2feqMhAD4EUS+XEaoCtt+gSSooJcJ2COGsoqDWu1mQchfCpvEPlcBL9ABDoHZNbf\n' +
      'v7FyXejTsuRZjTEid81YnoW7tD0cJoJ+CHXfDybiq3sEuC6uN3HUl34lUoyZXFkH\n' +
      'yYxyxsCvdDS9IQlnh4VmfGWqLT0ufJ/0AZBMu8VONLz0blM6GTJSFeDoyYBvtgp6\n' +
      'hqhnHhXZ+XbrDK1ds6/CUuIXCrcpXp2ioyWdJDHAsdzV2vh/3yV2zUKj74soGHYo\n' +
      'SpsnhT37sxoRtNtm7DaM4hBIRl3QZCulEcDC1mNKJXQPF1b9KPGoMS841QBqDLuK\n' +
      'A78iNc5ATZR8cp8sGriLnlc0eRw=\n' +
      '-----END DSA PRIVATE KEY-----',
    secrets: [
      'MIIBuwIBAAKBgQWEoypClkg+U61LVOcYsVoYPqrprwCjCieUM7oG3qYKmM8VTwhS',
      'ADZjEYm+yLjqqem7IQ1C8a1oTm5WMg0o7iM2tU4RXprdPRzmTkvF16yRQKP8IVlp',
      '3W7xU5O05F+Vavq0hbZHawbFu0rXq+cSBg22FMso6sKVv5fnRklT6C/Qg6fYEpwk',
      '36qOiRmeNXjjFa8g7gSflLiP7f8VH2Eiiea/qMw/xK2WOSr+rRWAhm4AmD6KrWgV',
      'aKM8xxKcM1wsiaGuqZEBHz1wzlg1jiHcCLmhIRGGzkcWOtRsLHnrjegq2Ppt+IJG',
      '2feqMhAD4EUS+XEaoCtt+gSSooJcJ2COGsoqDWu1mQchfCpvEPlcBL9ABDoHZNbf',
      'v7FyXejTsuRZjTEid81YnoW7tD0cJoJ+CHXfDybiq3sEuC6uN3HUl34lUoyZXFkH',
      'yYxyxsCvdDS9IQlnh4VmfGWqLT0ufJ/0AZBMu8VONLz0blM6GTJSFeDoyYBvtgp6',
      'hqhnHhXZ+XbrDK1ds6/CUuIXCrcpXp2ioyWdJDHAsdzV2vh/3yV2zUKj74soGHYo',
      'SpsnhT37sxoRtNtm7DaM4hBIRl3QZCulEcDC1mNKJXQPF1b9KPGoMS841QBqDLuK',
      'A78iNc5ATZR8cp8sGriLnlc0eRw=',
    ],
  },
  {
    id: 'private-key-env-escaped-newlines',
    family: 'private_key',
    text: 'JWT_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\nMIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQHBbyX7q6ZCLBvX\\nohlt5fqtiU2RbfIKcbrKD3LF5fY2e5bkbdShZZ8IFSkW+Rivp5S9boIf0etd/gfL\\nCyVHBfx2peFmH7HXl9SymM62J7+g5skMscsTUA+PY7xsmHPYd2gcIC2pHI2gqnsL\\nq2ih7LlCl9ckF5W9HohACM3JHDlXpRwHBMGHRgP7yAf9LpCJpIJTW0vFRbMHGGC7\\nWvJT/0aqkuKsHCnzMr3Z+wIhxzqO/RF/A9N5jxL79xQR0SegBAckiur07wnCBoBU\\nU/IIA+uFrizdBhb5Gc//5mEhxd2WyZ4nz7oxsrGi99qrDBSIGgkPJoV79P/HkQ7P\\n2cw2onISLtbnXXS0I3V/C1K9D3REAFeLI4AJSuHmVtiYbXLrILp2SY+YieOZqRyT\\nzHLHvo6P9tcpmsZvlR/hLQw2JKnUQkikGeR/Ikpx2wFwRLEp8b2l5AwEy9DwzNzL\\nU0UMOSu30JJgXAyllmNUFzxiZo0eTWKFS1nxnTQFl2sklM4OtrXRKbvdQsUBI92u\\nF1zeYsWuCHXKNWHTGRO+htr98Fb9lFCLnHIfdZfLP2wC5TN1LKZmMbZIh71q0jLs\\nCFQChpFJdxiN+d13m5LL7dd2m8pFeNC9+gz683Nog9VL0MnZDrk7rkqz/yq5wSvS\\n+BbYj7Y5vI1S31+hE/3Sl7AEFsLvw3Q2NJRWOC2eqNJMN6VCY1GICpAxiS3ccDub\\ndUp6TjCiks0xWkz5re03qLeH15vl6Na2qVf287gdoI9TA58oXn2rhDm8lU8Rz29V\\nEni6iVtlRLWXDkKJJw6EFP7uf3Db3V6FHUwZKcPX+l6eqbMMUDw9fc3EPZry5Pp+\\ndt8e6V/2Lqp9AFgXQNS/u90BFnZks8GIYPYG+ALm/mhckg7auAAJW6FEz1cFGS72\\nfpcWMPthgC4ctxOJUR1UYvRJ4LJjqUHEHI0gt4lhQXJ6tIosekpzRQGfZgVu3f9J\\nDc0wZ+5ul8W20B9KaCBnMW19WoFOk1eZk4y6mDYjC1bG3JbmbBSGKB9T0CqRprrU\\n6IISGy7l6SUflKk8xjwdZ3cr+JliJiFgNYFLPNDLz+gH5mC1DfIp2YOX+cvkms4Q\\nt0aWwIgEve7OmIPKAd97FMGBuR3uXXnnDS8wVnj91BJ28szHnuurtX+653Z291kF\\nVgJKpTV1yewz+NFkOZP+TS3MKKPnm3+4z5LvfCPo4z9j1fHbJVuua+DDF7QmgiZL\\nPgUC5t2wtUP2XBdlTx5kRUz92EqRK0LEJY1cHp3mPPna49eTZo3hWLYE1oqUBXUv\\nCsdX+dzHIu1Fq9iSAS5H/7QRcHkLFHtBMlKJBkZ5mff4Zbmk3IKCUI4NGmxlmxm3\\n9rBAM2WGZvFzXW57S7j7vmij+XrwFeGNQ62s4bYgQmNqBN0TdidVFiK4MgoNbxgz\\nI9LSLP7F8hPDxPEU1WTcNbG+wsHdmVETLLT/BTQSb4b/cwL+BLz8HEk/tKyRUzDj\\nfquC53JMBqxPb5op9A6GL+0bD65+V329QU2lMvSAkQ+rbvCqh9YEJX5s4g90Orni\\no1cPzq/5blYveUzMGBcdEbZN1yq=\\n-----END PRIVATE KEY-----\\n"',
    secrets: [
      'MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQHBbyX7q6ZCLBvX',
      'ohlt5fqtiU2RbfIKcbrKD3LF5fY2e5bkbdShZZ8IFSkW+Rivp5S9boIf0etd/gfL',
      'CyVHBfx2peFmH7HXl9SymM62J7+g5skMscsTUA+PY7xsmHPYd2gcIC2pHI2gqnsL',
      'q2ih7LlCl9ckF5W9HohACM3JHDlXpRwHBMGHRgP7yAf9LpCJpIJTW0vFRbMHGGC7',
      'WvJT/0aqkuKsHCnzMr3Z+wIhxzqO/RF/A9N5jxL79xQR0SegBAckiur07wnCBoBU',
      'U/IIA+uFrizdBhb5Gc//5mEhxd2WyZ4nz7oxsrGi99qrDBSIGgkPJoV79P/HkQ7P',
      '2cw2onISLtbnXXS0I3V/C1K9D3REAFeLI4AJSuHmVtiYbXLrILp2SY+YieOZqRyT',
      'zHLHvo6P9tcpmsZvlR/hLQw2JKnUQkikGeR/Ikpx2wFwRLEp8b2l5AwEy9DwzNzL',
      'U0UMOSu30JJgXAyllmNUFzxiZo0eTWKFS1nxnTQFl2sklM4OtrXRKbvdQsUBI92u',
      'F1zeYsWuCHXKNWHTGRO+htr98Fb9lFCLnHIfdZfLP2wC5TN1LKZmMbZIh71q0jLs',
      'CFQChpFJdxiN+d13m5LL7dd2m8pFeNC9+gz683Nog9VL0MnZDrk7rkqz/yq5wSvS',
      '+BbYj7Y5vI1S31+hE/3Sl7AEFsLvw3Q2NJRWOC2eqNJMN6VCY1GICpAxiS3ccDub',
      'dUp6TjCiks0xWkz5re03qLeH15vl6Na2qVf287gdoI9TA58oXn2rhDm8lU8Rz29V',
      'Eni6iVtlRLWXDkKJJw6EFP7uf3Db3V6FHUwZKcPX+l6eqbMMUDw9fc3EPZry5Pp+',
      'dt8e6V/2Lqp9AFgXQNS/u90BFnZks8GIYPYG+ALm/mhckg7auAAJW6FEz1cFGS72',
      'fpcWMPthgC4ctxOJUR1UYvRJ4LJjqUHEHI0gt4lhQXJ6tIosekpzRQGfZgVu3f9J',
      'Dc0wZ+5ul8W20B9KaCBnMW19WoFOk1eZk4y6mDYjC1bG3JbmbBSGKB9T0CqRprrU',
      '6IISGy7l6SUflKk8xjwdZ3cr+JliJiFgNYFLPNDLz+gH5mC1DfIp2YOX+cvkms4Q',
      't0aWwIgEve7OmIPKAd97FMGBuR3uXXnnDS8wVnj91BJ28szHnuurtX+653Z291kF',
      'VgJKpTV1yewz+NFkOZP+TS3MKKPnm3+4z5LvfCPo4z9j1fHbJVuua+DDF7QmgiZL',
      'PgUC5t2wtUP2XBdlTx5kRUz92EqRK0LEJY1cHp3mPPna49eTZo3hWLYE1oqUBXUv',
      'CsdX+dzHIu1Fq9iSAS5H/7QRcHkLFHtBMlKJBkZ5mff4Zbmk3IKCUI4NGmxlmxm3',
      '9rBAM2WGZvFzXW57S7j7vmij+XrwFeGNQ62s4bYgQmNqBN0TdidVFiK4MgoNbxgz',
      'I9LSLP7F8hPDxPEU1WTcNbG+wsHdmVETLLT/BTQSb4b/cwL+BLz8HEk/tKyRUzDj',
      'fquC53JMBqxPb5op9A6GL+0bD65+V329QU2lMvSAkQ+rbvCqh9YEJX5s4g90Orni',
      'o1cPzq/5blYveUzMGBcdEbZN1yq=',
    ],
    keeps: ['JWT_PRIVATE_KEY'],
  },
  {
    id: 'private-key-openssh-terraform-state',
    family: 'private_key',
    text: '{\n' +
      '  "type": "tls_private_key",\n' +
      '  "attributes": {\n' +
      '    "algorithm": "ED25519",\n' +
      '    "private_key_openssh": "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\\nQyNTUxOQAAACBrg1WR/6Yk8ZBC4KTtfViXqlT/RWASyXfsj6Me5xok93Noh/CcwhAfBX3P\\nGgjN0jtqBaR8+0KvffgohtQSDYnt4uuoq/04QwB87a9otDv0Da/bEsZN1Lk3W8XsOKIE+4\\nrE9PSZ19KJcskZXMNV6uDkqAodC1sVxZaP0CDNpiW+FnZEzf+i6dpRzAutPt9SK85WUJcJ\\n9mMDMY48DQCBtIshznb5eAX8w2QwRPbZ/lkLU2yrsz1GbkkI\\n-----END OPENSSH PRIVATE KEY-----\\n"\n' +
      '  }\n' +
      '}\n',
    secrets: [
      'QyNTUxOQAAACBrg1WR/6Yk8ZBC4KTtfViXqlT/RWASyXfsj6Me5xok93Noh/CcwhAfBX3P',
      'GgjN0jtqBaR8+0KvffgohtQSDYnt4uuoq/04QwB87a9otDv0Da/bEsZN1Lk3W8XsOKIE+4',
      'rE9PSZ19KJcskZXMNV6uDkqAodC1sVxZaP0CDNpiW+FnZEzf+i6dpRzAutPt9SK85WUJcJ',
      '9mMDMY48DQCBtIshznb5eAX8w2QwRPbZ/lkLU2yrsz1GbkkI',
    ],
    keeps: ['"type": "tls_private_key"', '"algorithm": "ED25519"', '"private_key_openssh"'],
  },
  {
    id: 'private-key-age-identity',
    family: 'private_key',
    text: '# created: 2024-06-11T09:12:44+02:00\n' +
      '# public key: age1wdhpy58vnxrhnvtukewc8q23de6ejxjq2asv2vevtq7vyvhrav3gv5exdq\n' +
      'AGE-SECRET-KEY-1FLVDSDQ9X8RFY0W6JVFTRSAQU5EWSG5K4MFFJAN3DQLZMSVX0WPY2ZH93P\n',
    secrets: ['AGE-SECRET-KEY-1FLVDSDQ9X8RFY0W6JVFTRSAQU5EWSG5K4MFFJAN3DQLZMSVX0WPY2ZH93P'],
    keeps: [
      '# created: 2024-06-11T09:12:44+02:00',
      '# public key: age1wdhpy58vnxrhnvtukewc8q23de6ejxjq2asv2vevtq7vyvhrav3gv5exdq',
    ],
  },

  // ---- connection_string -----------------------------------------------------------------------------
  // Connection strings: the password is the secret; scheme, user, host, port and database are kept.
  {
    id: 'conn-postgres-url-env',
    family: 'connection_string',
    text: 'DATABASE_URL=postgres://app_user:40SLjZiBticrMIPkxF5t1nVr@db.internal.acme.io:5432/orders',
    secrets: ['40SLjZiBticrMIPkxF5t1nVr'],
    keeps: ['DATABASE_URL', 'app_user', 'db.internal.acme.io:5432/orders'],
  },
  {
    id: 'conn-postgresql-sslmode-yaml',
    family: 'connection_string',
    text: 'database:\n' +
      '  url: postgresql://reporting:Sunflower-Drift-2291@pg-replica.acme.io:6432/warehouse?sslmode=require&application_name=metabase\n',
    secrets: ['Sunflower-Drift-2291'],
    keeps: [
      'database:',
      'reporting',
      'pg-replica.acme.io:6432/warehouse?sslmode=require&application_name=metabase',
    ],
  },
  {
    id: 'conn-mysql-url-log',
    family: 'connection_string',
    text: '[2024-06-11 09:12:44] migrate: connecting to mysql://root:pSguvZ8ba74TDfyudA@10.0.3.12:3306/shop (attempt 2/5)',
    secrets: ['pSguvZ8ba74TDfyudA'],
    keeps: ['migrate: connecting to mysql://root', '10.0.3.12:3306/shop (attempt 2/5)'],
  },
  {
    id: 'conn-mongodb-srv-json',
    family: 'connection_string',
    text: '{"mongo": {"uri": "mongodb+srv://svc-orders:YuTY78LlSGaz1zFuSchxG5@cluster0.ab1cd.mongodb.net/prod?retryWrites=true&w=majority&appName=orders"}}',
    secrets: ['YuTY78LlSGaz1zFuSchxG5'],
    keeps: [
      '"mongo"',
      'svc-orders',
      'cluster0.ab1cd.mongodb.net/prod?retryWrites=true&w=majority&appName=orders',
    ],
  },
  {
    id: 'conn-mongodb-replica-set',
    family: 'connection_string',
    text: 'MONGO_URL=mongodb://api:Q9XtSkJvzyC5wwbiOPNx@mongo-0.mongo.svc:27017,mongo-1.mongo.svc:27017,mongo-2.mongo.svc:27017/app?replicaSet=rs0&authSource=admin',
    secrets: ['Q9XtSkJvzyC5wwbiOPNx'],
    keeps: [
      'MONGO_URL',
      'api',
      'mongo-0.mongo.svc:27017,mongo-1.mongo.svc:27017,mongo-2.mongo.svc:27017/app?replicaSet=rs0&authSource=admin',
    ],
  },
  {
    id: 'conn-redis-empty-user',
    family: 'connection_string',
    text: 'REDIS_URL=redis://:JsZIiUmu6UMY52G8MBzSEbvepSyemYX5@cache.internal.acme.io:6379/0',
    secrets: ['JsZIiUmu6UMY52G8MBzSEbvepSyemYX5'],
    keeps: ['REDIS_URL', 'cache.internal.acme.io:6379/0'],
  },
  {
    id: 'conn-rediss-tls-toml',
    family: 'connection_string',
    text: '[cache]\n' +
      'url = "rediss://default:3E3vqlqXGoAC6QS5CrTEQKlxrMvKDNpP@redis-18342.c1.eu-west-1-2.ec2.redns.redis-cloud.com:18342"\n' +
      'ttl_seconds = 300\n',
    secrets: ['3E3vqlqXGoAC6QS5CrTEQKlxrMvKDNpP'],
    keeps: [
      '[cache]',
      'default',
      'redis-18342.c1.eu-west-1-2.ec2.redns.redis-cloud.com:18342',
      'ttl_seconds = 300',
    ],
  },
  {
    id: 'conn-amqp-url',
    family: 'connection_string',
    text: 'celery -A acme.tasks worker --broker amqp://orders:orange.Canyon.77@rabbitmq.svc.cluster.local:5672/%2F --loglevel INFO',
    secrets: ['orange.Canyon.77'],
    keeps: [
      'celery -A acme.tasks worker --broker',
      'orders',
      'rabbitmq.svc.cluster.local:5672/%2F --loglevel INFO',
    ],
  },
  {
    id: 'conn-amqps-url-env',
    family: 'connection_string',
    text: 'BROKER_URL=amqps://events:ciuptT9MFJRn8U9ZSidON6hI@b-3f1c2e7a-9d4b-4e8f-a1c6-2b7d9e0f5a13.mq.us-east-1.amazonaws.com:5671',
    secrets: ['ciuptT9MFJRn8U9ZSidON6hI'],
    keeps: ['BROKER_URL', 'events', 'b-3f1c2e7a-9d4b-4e8f-a1c6-2b7d9e0f5a13.mq.us-east-1.amazonaws.com:5671'],
  },
  {
    id: 'conn-jdbc-postgresql-params',
    family: 'connection_string',
    text: 'spring.datasource.url=jdbc:postgresql://db01.acme.lan:5432/ledger?user=report&password=YmT7tj3yuEQKl2rB&ssl=true',
    secrets: ['YmT7tj3yuEQKl2rB'],
    keeps: [
      'spring.datasource.url',
      'jdbc:postgresql://db01.acme.lan:5432/ledger',
      'user=report',
      'ssl=true',
    ],
  },
  {
    id: 'conn-mssql-ado',
    family: 'connection_string',
    text: '"ErpDb": "Server=tcp:sql-prod-eu.database.windows.net,1433;Initial Catalog=erp;User Id=erp_admin;Password=Hx4$nB8@wQz1!rT6;Encrypt=True;TrustServerCertificate=False;"',
    secrets: ['Hx4$nB8@wQz1!rT6'],
    keeps: [
      '"ErpDb"',
      'Server=tcp:sql-prod-eu.database.windows.net,1433',
      'Initial Catalog=erp',
      'User Id=erp_admin',
      'Encrypt=True',
    ],
  },
  {
    id: 'conn-postgres-psql-cli',
    family: 'connection_string',
    text: 'psql "postgresql://migrator:27TYAgUmL7b66vtqI65u@localhost:5433/billing_dev" -c \'\\dt\'',
    secrets: ['27TYAgUmL7b66vtqI65u'],
    keeps: ['psql', 'migrator', 'localhost:5433/billing_dev', "-c '\\dt'"],
  },
  {
    id: 'conn-django-database-url-markdown',
    family: 'connection_string',
    text: '```python\n' +
      'DATABASES = {\n' +
      '    "default": dj_database_url.parse("postgres://django:mpr1CDC9GBxOruQBCTcmvfxKK87D@10.20.4.31:5432/cms")\n' +
      '}\n' +
      '```',
    secrets: ['mpr1CDC9GBxOruQBCTcmvfxKK87D'],
    keeps: ['DATABASES = {', 'dj_database_url.parse', 'django', '10.20.4.31:5432/cms'],
  },

  // ---- basic_auth_url --------------------------------------------------------------------------------
  // URLs with user:password@host userinfo (https, ftp, git, pip, svn): the password goes, the user
  // and host stay.
  {
    id: 'basic-auth-maven-deploy',
    family: 'basic_auth_url',
    text: 'mvn deploy -DaltDeploymentRepository=releases::default::https://deploy:j7STZrJrl1bgmgVcjQ60@nexus.acme.dev/repository/maven-releases/',
    secrets: ['j7STZrJrl1bgmgVcjQ60'],
    keeps: [
      'mvn deploy -DaltDeploymentRepository=releases::default::https://deploy',
      'nexus.acme.dev/repository/maven-releases/',
    ],
  },
  {
    id: 'basic-auth-ftp',
    family: 'basic_auth_url',
    text: 'Nightly export goes to ftp://partner_upload:violet-Harbor-5123@ftp.acme-partners.com/outgoing/invoices_2024-06.csv',
    secrets: ['violet-Harbor-5123'],
    keeps: [
      'Nightly export goes to ftp://partner_upload',
      'ftp.acme-partners.com/outgoing/invoices_2024-06.csv',
    ],
  },
  {
    id: 'basic-auth-git-clone-x-access-token',
    family: 'basic_auth_url',
    text: 'git clone https://x-access-token:ghs_9YtcaK4XyLcIvByxgjtLYOo6ylrDqSghHbU1@github.com/acme/deploy-config.git /tmp/deploy-config',
    secrets: ['ghs_9YtcaK4XyLcIvByxgjtLYOo6ylrDqSghHbU1'],
    keeps: ['git clone https://x-access-token', 'github.com/acme/deploy-config.git /tmp/deploy-config'],
  },
  {
    id: 'basic-auth-git-remote-v',
    family: 'basic_auth_url',
    text: '$ git remote -v\n' +
      'origin\thttps://oauth2:glpat-i8kVRrjlrIdRcO5gK6pz@gitlab.com/acme/infra.git (fetch)\n' +
      'origin\thttps://oauth2:glpat-i8kVRrjlrIdRcO5gK6pz@gitlab.com/acme/infra.git (push)\n',
    secrets: ['glpat-i8kVRrjlrIdRcO5gK6pz'],
    keeps: [
      '$ git remote -v',
      'oauth2',
      'gitlab.com/acme/infra.git (fetch)',
      'gitlab.com/acme/infra.git (push)',
    ],
  },
  {
    id: 'basic-auth-pip-extra-index',
    family: 'basic_auth_url',
    text: 'pip install --extra-index-url https://ci:KLLpxltTl7Z4K5TsP5ZOUj3Yd0rjVUlF@pypi.acme.io/simple/ acme-internal==2.3.1',
    secrets: ['KLLpxltTl7Z4K5TsP5ZOUj3Yd0rjVUlF'],
    keeps: ['pip install --extra-index-url https://ci', 'pypi.acme.io/simple/ acme-internal==2.3.1'],
  },
  {
    id: 'basic-auth-url-encoded-password',
    family: 'basic_auth_url',
    text: 'Trigger: https://ci-bot:Rk2%26zQ9%21mW4v%40j@jenkins.acme.io/job/deploy/buildWithParameters?ENV=prod',
    secrets: ['Rk2%26zQ9%21mW4v%40j'],
    keeps: ['Trigger: https://ci-bot', 'jenkins.acme.io/job/deploy/buildWithParameters?ENV=prod'],
  },
  {
    id: 'basic-auth-elasticsearch-env',
    family: 'basic_auth_url',
    text: 'ELASTICSEARCH_URL=https://elastic:bZwLfPfGsmNDzjipD1rHFiO9@es-prod.acme.io:9243',
    secrets: ['bZwLfPfGsmNDzjipD1rHFiO9'],
    keeps: ['ELASTICSEARCH_URL', 'elastic', 'es-prod.acme.io:9243'],
  },
  {
    id: 'basic-auth-svn-checkout',
    family: 'basic_auth_url',
    text: 'svn checkout https://jdoe:Tundra_Maple_4410@svn.acme.io/repos/firmware/trunk firmware',
    secrets: ['Tundra_Maple_4410'],
    keeps: ['svn checkout https://jdoe', 'svn.acme.io/repos/firmware/trunk firmware'],
  },

  // ---- auth_header -----------------------------------------------------------------------------------
  // HTTP credentials: Authorization Basic/Bearer/token, Proxy-Authorization, X-API-Key,
  // X-Auth-Token, curl -H and curl -u.
  {
    id: 'auth-header-basic-raw-request',
    family: 'auth_header',
    text: 'GET /api/v2/builds?branch=main HTTP/1.1\n' +
      'Host: ci.acme.io\n' +
      'Authorization: Basic Y2ktYm90Ok9HY2ltTTBuN2czSTNLeVJGTkF0\n' +
      'Accept: application/json\n',
    secrets: ['Y2ktYm90Ok9HY2ltTTBuN2czSTNLeVJGTkF0'],
    keeps: [
      'GET /api/v2/builds?branch=main HTTP/1.1',
      'Host: ci.acme.io',
      'Authorization',
      'Accept: application/json',
    ],
  },
  {
    id: 'auth-header-bearer-opaque',
    family: 'auth_header',
    text: 'Authorization: Bearer ya29.a0IuKKWLZGXcZlHp3BStQ-uLyzP7XJssuPHe3JBeuymsOZats0dLNJ58yisCObyM8xhZOu6kgE-hqFbF4n4GaJEz-gaqNFhQ8W0ArTxWOTzm63dMoPMuZFFuB5Af9TulZvHG0SK30k9JdT238TqzyTQqLoL0no9it7',
    secrets: [
      'ya29.a0IuKKWLZGXcZlHp3BStQ-uLyzP7XJssuPHe3JBeuymsOZats0dLNJ58yisCObyM8xhZOu6kgE-hqFbF4n4GaJEz-gaqNFhQ8W0ArTxWOTzm63dMoPMuZFFuB5Af9TulZvHG0SK30k9JdT238TqzyTQqLoL0no9it7',
    ],
    keeps: ['Authorization'],
  },
  {
    id: 'auth-header-proxy-authorization',
    family: 'auth_header',
    text: 'CONNECT registry.npmjs.org:443 HTTP/1.1\n' +
      'Proxy-Authorization: Basic cHJveHl1c2VyOjJGaTZuZmNiOE9rdDkwY2M=\n' +
      'User-Agent: npm/10.8.1 node/v20.14.0 linux x64\n',
    secrets: ['cHJveHl1c2VyOjJGaTZuZmNiOE9rdDkwY2M='],
    keeps: [
      'CONNECT registry.npmjs.org:443 HTTP/1.1',
      'Proxy-Authorization',
      'User-Agent: npm/10.8.1 node/v20.14.0 linux x64',
    ],
  },
  {
    id: 'auth-header-x-api-key',
    family: 'auth_header',
    text: 'POST /v1/events HTTP/2\n' +
      'host: ingest.acme.io\n' +
      'x-api-key: feffd7cb17c2d505a0316e8c067a35d2\n' +
      'content-type: application/json\n',
    secrets: ['feffd7cb17c2d505a0316e8c067a35d2'],
    keeps: ['POST /v1/events HTTP/2', 'host: ingest.acme.io', 'x-api-key', 'content-type: application/json'],
  },
  {
    id: 'auth-header-curl-token',
    family: 'auth_header',
    text: "curl -H 'Authorization: token 6a8da0901c227e41005de7866e38abeb964a838b' https://github.acme.io/api/v3/orgs/platform/repos",
    secrets: ['6a8da0901c227e41005de7866e38abeb964a838b'],
    keeps: ['Authorization', 'https://github.acme.io/api/v3/orgs/platform/repos'],
  },
  {
    id: 'auth-header-curl-user-password',
    family: 'auth_header',
    text: "curl -u admin:PwiHI2Y563KeCcZRu8 -X POST -H 'Content-Type: application/json' https://grafana.acme.io/api/dashboards/db -d @dashboard.json",
    secrets: ['PwiHI2Y563KeCcZRu8'],
    keeps: ['curl -u admin', 'https://grafana.acme.io/api/dashboards/db -d @dashboard.json'],
  },
  {
    id: 'auth-header-python-dict-log',
    family: 'auth_header',
    text: "DEBUG request headers: {'Accept': 'application/json', 'Authorization': 'Bearer HqRXV01fWhkIk7uYg8lH7V8QFwOaMGnnYAaXLr6jay9d4bqO', 'User-Agent': 'acme-sync/2.3.1'}",
    secrets: ['HqRXV01fWhkIk7uYg8lH7V8QFwOaMGnnYAaXLr6jay9d4bqO'],
    keeps: [
      "DEBUG request headers: {'Accept': 'application/json',",
      "'Authorization'",
      "'User-Agent': 'acme-sync/2.3.1'",
    ],
  },
  {
    id: 'auth-header-nginx-proxy-set-header',
    family: 'auth_header',
    text: 'location /metrics/ {\n' +
      '    proxy_pass http://prometheus:9090/;\n' +
      '    proxy_set_header Authorization "Basic Z3JhZmFuYS1wcm94eTpBcHg1Y3ZWTXlPY0Z4OEdwSlBvOVl5";\n' +
      '}\n',
    secrets: ['Z3JhZmFuYS1wcm94eTpBcHg1Y3ZWTXlPY0Z4OEdwSlBvOVl5'],
    keeps: ['location /metrics/ {', 'proxy_pass http://prometheus:9090/;', 'proxy_set_header Authorization'],
  },
  {
    id: 'auth-header-x-auth-token-openstack',
    family: 'auth_header',
    text: 'openstack --os-auth-type token --os-token gAAAAABYprKlCKmQvlojTiBmvBw70WwTvOhHYpBwZ9SgdLvAOk3zg01EnHhdoVHWpDYi41WS6fEUCUMuH1Uv7XTCYvUXwhHPvXOGQ6Y43hpVGMfKoVTQrZilLKS_86TiEVZOgjD-6yclFDdgKEbTdk2OO9dULFnYsL2S2cpGky8b11PIGN24ybG server list\n' +
      '# or: curl -H "X-Auth-Token: gAAAAABYprKlCKmQvlojTiBmvBw70WwTvOhHYpBwZ9SgdLvAOk3zg01EnHhdoVHWpDYi41WS6fEUCUMuH1Uv7XTCYvUXwhHPvXOGQ6Y43hpVGMfKoVTQrZilLKS_86TiEVZOgjD-6yclFDdgKEbTdk2OO9dULFnYsL2S2cpGky8b11PIGN24ybG" https://keystone.acme.io:5000/v3/projects',
    secrets: [
      'gAAAAABYprKlCKmQvlojTiBmvBw70WwTvOhHYpBwZ9SgdLvAOk3zg01EnHhdoVHWpDYi41WS6fEUCUMuH1Uv7XTCYvUXwhHPvXOGQ6Y43hpVGMfKoVTQrZilLKS_86TiEVZOgjD-6yclFDdgKEbTdk2OO9dULFnYsL2S2cpGky8b11PIGN24ybG',
    ],
    keeps: [
      'openstack --os-auth-type token --os-token',
      'server list',
      'X-Auth-Token',
      'https://keystone.acme.io:5000/v3/projects',
    ],
  },
  {
    id: 'auth-header-har-json',
    family: 'auth_header',
    text: '{"name": "authorization", "value": "Bearer Km7NUj1LQwUpR_iASirRnEhn08EusfIYXCVGb5981C_"},\n' +
      '{"name": "x-request-id", "value": "5b8e2c41-7f0a-4d93-b1e6-0a9c3f7d2e18"}',
    secrets: ['Km7NUj1LQwUpR_iASirRnEhn08EusfIYXCVGb5981C_'],
    keeps: [
      '"name": "authorization"',
      '{"name": "x-request-id", "value": "5b8e2c41-7f0a-4d93-b1e6-0a9c3f7d2e18"}',
    ],
  },

  // ---- cookie_session --------------------------------------------------------------------------------
  // Session cookies: Cookie and Set-Cookie headers, express connect.sid, PHPSESSID, JSESSIONID,
  // Rails sessions, cookie jars.
  {
    id: 'cookie-session-and-csrf',
    family: 'cookie_session',
    text: 'Cookie: session=FS0gM3ofBPUHfjVHZndjS_zgjGfh1o5eu_R_20rqlEU; csrftoken=7lNc2iUt2QOhgJaZtkJiwDAP3c2XdTRh; django_language=en',
    secrets: ['FS0gM3ofBPUHfjVHZndjS_zgjGfh1o5eu_R_20rqlEU', '7lNc2iUt2QOhgJaZtkJiwDAP3c2XdTRh'],
    keeps: ['Cookie:', 'session', 'csrftoken', 'django_language'],
  },
  {
    id: 'cookie-set-cookie-sessionid',
    family: 'cookie_session',
    text: 'Set-Cookie: sessionid=dek4p9w89xebx0ydqx37n4ls5evd523b; expires=Tue, 25 Jun 2024 09:12:44 GMT; HttpOnly; Max-Age=1209600; Path=/; SameSite=Lax; Secure',
    secrets: ['dek4p9w89xebx0ydqx37n4ls5evd523b'],
    keeps: [
      'Set-Cookie: sessionid',
      'expires=Tue, 25 Jun 2024 09:12:44 GMT; HttpOnly; Max-Age=1209600; Path=/; SameSite=Lax; Secure',
    ],
  },
  {
    id: 'cookie-express-connect-sid',
    family: 'cookie_session',
    text: 'Cookie: connect.sid=s%3A5-6UgKEeiynTU_Bs8hzV05av97NIAMW3.9I8bCh%2BsOvYm3caItM5XkLEtUrViyd4iHVnJNI%2BcfR4',
    secrets: ['5-6UgKEeiynTU_Bs8hzV05av97NIAMW3', '9I8bCh%2BsOvYm3caItM5XkLEtUrViyd4iHVnJNI%2BcfR4'],
    keeps: ['Cookie: connect.sid'],
  },
  {
    id: 'cookie-phpsessid',
    family: 'cookie_session',
    text: 'GET /wp-admin/ HTTP/1.1\n' +
      'Cookie: PHPSESSID=cp7en69o72m6q2nsj7s161969u; wp-settings-time-1=1718097164\n',
    secrets: ['cp7en69o72m6q2nsj7s161969u'],
    keeps: ['GET /wp-admin/ HTTP/1.1', 'PHPSESSID', 'wp-settings-time-1'],
  },
  {
    id: 'cookie-jsessionid',
    family: 'cookie_session',
    text: '< Set-Cookie: JSESSIONID=D0952D1381B8311CA68F69C7C23C43DF; Path=/portal; Secure; HttpOnly',
    secrets: ['D0952D1381B8311CA68F69C7C23C43DF'],
    keeps: ['Set-Cookie: JSESSIONID', 'Path=/portal; Secure; HttpOnly'],
  },
  {
    id: 'cookie-rails-session-cookie-jar',
    family: 'cookie_session',
    text: '# Netscape HTTP Cookie File\n' +
      '#HttpOnly_.acme.io\tTRUE\t/\tTRUE\t1718702364\t_acme_session\t63vTmScAtVwdNdqTWG0YmcoP64%2FtAhc%2Be90ldD2R8VS9kyohUIwYWGdJGLhf1LR53hXGuhIm8yFwbPB8iCclv5CXw2zxCtzNo%2FE1lnSWIs4RQ3GhSNnMXK7CKqL8c%2FDI6A%3D%3D--94675e2f4cf9e588630d2cba0cbc4361be042c6f\n',
    secrets: [
      '63vTmScAtVwdNdqTWG0YmcoP64%2FtAhc%2Be90ldD2R8VS9kyohUIwYWGdJGLhf1LR53hXGuhIm8yFwbPB8iCclv5CXw2zxCtzNo%2FE1lnSWIs4RQ3GhSNnMXK7CKqL8c%2FDI6A%3D%3D--94675e2f4cf9e588630d2cba0cbc4361be042c6f',
    ],
    keeps: ['# Netscape HTTP Cookie File', '#HttpOnly_.acme.io', '_acme_session'],
  },
  {
    id: 'cookie-document-cookie-console',
    family: 'cookie_session',
    text: '> document.cookie\n' +
      "'_ga=GA1.1.1803421943.1718097164; auth_token=ecBYMTxUMao4fbGbQnNJ98cdUHAZoVWrmAhY4X1v; theme=dark'",
    secrets: ['ecBYMTxUMao4fbGbQnNJ98cdUHAZoVWrmAhY4X1v'],
    keeps: ['> document.cookie', '_ga', 'auth_token', 'theme'],
  },

  // ---- assignment ------------------------------------------------------------------------------------
  // Key = value assignments whose key names a secret (secret, token, passw, pwd, api key, private,
  // credential, auth) across .env, shell, YAML, JSON, TOML, INI, Python, JS, Ruby, PHP, PowerShell,
  // XML, properties.
  {
    id: 'assign-env-database-password',
    family: 'assignment',
    text: 'DATABASE_HOST=db01.acme.lan\nDATABASE_PASSWORD=Q8RnSEW4snmFRvfqWPm0\n',
    secrets: ['Q8RnSEW4snmFRvfqWPm0'],
    keeps: ['DATABASE_HOST=db01.acme.lan', 'DATABASE_PASSWORD'],
  },
  {
    id: 'assign-export-django-secret-key',
    family: 'assignment',
    text: "export SECRET_KEY='t-&cs)9511fup42s8ol@87evv7$9z0s&2m+v=f5ggp7e%4uz3!'\n" +
      'python manage.py runserver 0.0.0.0:8000',
    secrets: ['t-&cs)9511fup42s8ol@87evv7$9z0s&2m+v=f5ggp7e%4uz3!'],
    keeps: ['export SECRET_KEY', 'python manage.py runserver 0.0.0.0:8000'],
  },
  {
    id: 'assign-yaml-client-secret',
    family: 'assignment',
    text: 'auth0:\n' +
      '  domain: acme.eu.auth0.com\n' +
      '  client_id: tPfVUARpeptXTryjkwIkzL0iE6ok1NRf\n' +
      '  client_secret: 7rpo-g6iCgF_NtKY4coMYNQV6D-3vt-ewdiqDI2GGP2W3_WA3xqp0OlJFmczb9bX\n' +
      '  audience: https://api.acme.io\n',
    secrets: ['7rpo-g6iCgF_NtKY4coMYNQV6D-3vt-ewdiqDI2GGP2W3_WA3xqp0OlJFmczb9bX'],
    keeps: ['domain: acme.eu.auth0.com', 'client_id', 'client_secret', 'audience: https://api.acme.io'],
  },
  {
    id: 'assign-json-password-with-spaces',
    family: 'assignment',
    text: '{"username": "svc-reporting", "password": "correct horse battery staple", "host": "warehouse.acme.internal"}',
    secrets: ['correct horse battery staple'],
    keeps: ['"username": "svc-reporting"', '"password"', '"host": "warehouse.acme.internal"'],
  },
  {
    id: 'assign-python-db-pwd',
    family: 'assignment',
    text: "db_pwd = 'IqoWsdJvP2Q3LmyF'\n" +
      'conn = psycopg2.connect(host="10.0.4.21", user="etl", dbname="events", password=db_pwd)\n',
    secrets: ['IqoWsdJvP2Q3LmyF'],
    keeps: ['db_pwd', 'psycopg2.connect(host="10.0.4.21", user="etl", dbname="events"'],
  },
  {
    id: 'assign-fish-set-x',
    family: 'assignment',
    text: 'set -x API_KEY RhNoe6udO7fbfNZxHKjcF9kDpF0l9WLK\n' +
      'set -x API_BASE https://api.acme.io/v2',
    secrets: ['RhNoe6udO7fbfNZxHKjcF9kDpF0l9WLK'],
    keeps: ['set -x API_KEY', 'set -x API_BASE https://api.acme.io/v2'],
  },
  {
    id: 'assign-yaml-private-token',
    family: 'assignment',
    text: 'PRIVATE_TOKEN: 8RZhJcPmD3ARv0YU8wnBe5Svjv\nPROJECT_ID: 4521\n',
    secrets: ['8RZhJcPmD3ARv0YU8wnBe5Svjv'],
    keeps: ['PRIVATE_TOKEN', 'PROJECT_ID: 4521'],
  },
  {
    id: 'assign-yaml-credentials',
    family: 'assignment',
    text: 'registry:\n' +
      '  url: https://nexus.acme.io\n' +
      '  username: ci\n' +
      '  credentials: fq9m1EiJ-TV0FVYO7sFBHBLD975ikg8ELsrxLP-v\n',
    secrets: ['fq9m1EiJ-TV0FVYO7sFBHBLD975ikg8ELsrxLP-v'],
    keeps: ['url: https://nexus.acme.io', 'username: ci', 'credentials'],
  },
  {
    id: 'assign-powershell-env',
    family: 'assignment',
    text: '$env:GITHUB_TOKEN = "ghp_YdIgS3Ugi0cur5dCQxFPD0gANx4R4nuo1SvR"\n' +
      'gh release create v2.3.1 --generate-notes',
    secrets: ['ghp_YdIgS3Ugi0cur5dCQxFPD0gANx4R4nuo1SvR'],
    keeps: ['$env:GITHUB_TOKEN', 'gh release create v2.3.1 --generate-notes'],
  },
  {
    id: 'assign-powershell-securestring',
    family: 'assignment',
    text: '$cred = New-Object System.Management.Automation.PSCredential ("ACME\\svc-deploy", (ConvertTo-SecureString "Mq7!vR2#kLp9zW4e" -AsPlainText -Force))\n' +
      'Invoke-Command -ComputerName build01 -Credential $cred -ScriptBlock { hostname }',
    secrets: ['Mq7!vR2#kLp9zW4e'],
    keeps: [
      'New-Object System.Management.Automation.PSCredential ("ACME\\svc-deploy",',
      'ConvertTo-SecureString',
      '-AsPlainText -Force',
      'Invoke-Command -ComputerName build01 -Credential $cred',
    ],
  },
  {
    id: 'assign-yaml-passwd',
    family: 'assignment',
    text: 'ldap:\n' +
      '  host: ldaps://ldap.acme.io:636\n' +
      '  bind_dn: cn=svc-gitea,ou=services,dc=acme,dc=io\n' +
      '  passwd: wAoSQa2mijIW9dPBLw\n',
    secrets: ['wAoSQa2mijIW9dPBLw'],
    keeps: ['host: ldaps://ldap.acme.io:636', 'bind_dn: cn=svc-gitea,ou=services,dc=acme,dc=io', 'passwd'],
  },
  {
    id: 'assign-ruby-hash-rocket',
    family: 'assignment',
    text: 'config.action_mailer.smtp_settings = {\n' +
      "  :address => 'smtp.mailgun.org',\n" +
      "  :user_name => 'postmaster@mg.acme.io',\n" +
      "  :password => 'NGR9vYFU9XAgSE9KS2py04'\n" +
      '}\n',
    secrets: ['NGR9vYFU9XAgSE9KS2py04'],
    keeps: [":address => 'smtp.mailgun.org'", ":user_name => 'postmaster@mg.acme.io'", ':password'],
  },
  {
    id: 'assign-php-array',
    family: 'assignment',
    text: "'mysql' => [\n" +
      "    'driver' => 'mysql',\n" +
      "    'host' => '127.0.0.1',\n" +
      "    'username' => 'forge',\n" +
      "    'password' => 'mewzCgPJ1zGJkHL27kny',\n" +
      '],\n',
    secrets: ['mewzCgPJ1zGJkHL27kny'],
    keeps: ["'driver' => 'mysql'", "'username' => 'forge'", "'password'"],
  },
  {
    id: 'assign-toml-api-key',
    family: 'assignment',
    text: '[openweather]\napi_key = "640e792089e995035a87ca1eb98a0e41"\nunits = "metric"\n',
    secrets: ['640e792089e995035a87ca1eb98a0e41'],
    keeps: ['[openweather]', 'api_key', 'units = "metric"'],
  },
  {
    id: 'assign-ini-password',
    family: 'assignment',
    text: '[database]\n' +
      'host = db01.acme.lan\n' +
      'user = billing\n' +
      'password = RiEgFbx7sQy0xJne\n' +
      'port = 5432\n',
    secrets: ['RiEgFbx7sQy0xJne'],
    keeps: ['[database]', 'host = db01.acme.lan', 'user = billing', 'port = 5432'],
  },
  {
    id: 'assign-js-object-auth',
    family: 'assignment',
    text: 'const es = new Client({\n' +
      "  node: 'https://es.acme.io:9200',\n" +
      "  auth: { username: 'elastic', password: '3NPKA1N2nTToq9V1sr2HJt9W' },\n" +
      '});\n',
    secrets: ['3NPKA1N2nTToq9V1sr2HJt9W'],
    keeps: ["node: 'https://es.acme.io:9200'", "username: 'elastic'", 'password'],
  },
  {
    id: 'assign-java-properties',
    family: 'assignment',
    text: 'spring.datasource.username=ledger\n' +
      'spring.datasource.password=mAHirpc7KgpqzITa5xAJ\n' +
      'spring.jpa.hibernate.ddl-auto=validate\n',
    secrets: ['mAHirpc7KgpqzITa5xAJ'],
    keeps: [
      'spring.datasource.username=ledger',
      'spring.datasource.password',
      'spring.jpa.hibernate.ddl-auto=validate',
    ],
  },
  {
    id: 'assign-docker-compose',
    family: 'assignment',
    text: 'services:\n' +
      '  db:\n' +
      '    image: postgres:16-alpine\n' +
      '    environment:\n' +
      '      POSTGRES_USER: orders\n' +
      '      POSTGRES_PASSWORD: TLBQaQ6Mh5m5IRUlz3R3\n' +
      '      POSTGRES_DB: orders\n',
    secrets: ['TLBQaQ6Mh5m5IRUlz3R3'],
    keeps: ['image: postgres:16-alpine', 'POSTGRES_USER: orders', 'POSTGRES_PASSWORD', 'POSTGRES_DB: orders'],
  },
  {
    id: 'assign-k8s-secret-stringdata',
    family: 'assignment',
    text: 'apiVersion: v1\n' +
      'kind: Secret\n' +
      'metadata:\n' +
      '  name: api-credentials\n' +
      'type: Opaque\n' +
      'stringData:\n' +
      '  api-token: nDdC1Uw9JZ8GtW019OMPn4N0DOznx2Lwy3hmyFci\n' +
      '  webhook-secret: da99681f161d187ca0a4397a1cb05ce44328146a\n',
    secrets: ['nDdC1Uw9JZ8GtW019OMPn4N0DOznx2Lwy3hmyFci', 'da99681f161d187ca0a4397a1cb05ce44328146a'],
    keeps: ['kind: Secret', 'name: api-credentials', 'type: Opaque', 'api-token', 'webhook-secret'],
  },
  {
    id: 'assign-cli-flag-password',
    family: 'assignment',
    text: 'mysqldump --user=backup --password=rpErHitBhyFsfsY869bO --host=db01.acme.lan --single-transaction shop > shop.sql',
    secrets: ['rpErHitBhyFsfsY869bO'],
    keeps: [
      'mysqldump --user=backup',
      '--password',
      '--host=db01.acme.lan --single-transaction shop > shop.sql',
    ],
  },
  {
    id: 'assign-cli-flag-token-uuid',
    family: 'assignment',
    text: 'npx codecov --token=f99d20a0-25be-443b-b608-21b03197af05 --file coverage/lcov.info',
    secrets: ['f99d20a0-25be-443b-b608-21b03197af05'],
    keeps: ['npx codecov --token', '--file coverage/lcov.info'],
  },
  {
    id: 'assign-terraform-tfvars',
    family: 'assignment',
    text: 'db_instance_class  = "db.t3.medium"\n' +
      'db_master_password = "yExzJdHhkRvG9NwQXXzOMW53"\n',
    secrets: ['yExzJdHhkRvG9NwQXXzOMW53'],
    keeps: ['db_instance_class  = "db.t3.medium"', 'db_master_password'],
  },
  {
    id: 'assign-python-getenv-default',
    family: 'assignment',
    text: 'API_TOKEN = os.environ.get("API_TOKEN", "Ix9KawRtnv0RJyGRlApNJw6oFXPPbsaU")',
    secrets: ['Ix9KawRtnv0RJyGRlApNJw6oFXPPbsaU'],
    keeps: ['API_TOKEN = os.environ.get("API_TOKEN"'],
  },
  {
    id: 'assign-wordpress-salts',
    family: 'assignment',
    text: "define( 'AUTH_KEY',         'flvEX&y2@GWD,uD$gb/@6((iE}-:>M2~^C(?^&{&GN!=N(1e5bhn9dgl)5S1zi(.' );\n" +
      "define( 'SECURE_AUTH_KEY',  'HW&[sVhOplJW{F+aiEq+v_u^Q:L}Iz6Rb[AWpqd-{[3R=0okcN7p&%[{7$s_!U^/' );\n",
    secrets: [
      'flvEX&y2@GWD,uD$gb/@6((iE}-:>M2~^C(?^&{&GN!=N(1e5bhn9dgl)5S1zi(.',
      'HW&[sVhOplJW{F+aiEq+v_u^Q:L}Iz6Rb[AWpqd-{[3R=0okcN7p&%[{7$s_!U^/',
    ],
    keeps: ["define( 'AUTH_KEY',", "define( 'SECURE_AUTH_KEY',"],
  },
  {
    id: 'assign-xml-web-config',
    family: 'assignment',
    text: '<appSettings>\n' +
      '  <add key="SmtpHost" value="smtp.office365.com" />\n' +
      '  <add key="SmtpPassword" value="VkplfC3LXE0mwVEAm1" />\n' +
      '</appSettings>',
    secrets: ['VkplfC3LXE0mwVEAm1'],
    keeps: ['<add key="SmtpHost" value="smtp.office365.com" />', 'SmtpPassword'],
  },
  {
    id: 'assign-dotenv-jwt-secret-quoted',
    family: 'assignment',
    text: 'JWT_SECRET="INoeHgSW8f9Ha5N1iq7sEn31pyWChNE0wtTVvyLgUjVRq5A67V2VbKJ9PmvyCiBU"\n' +
      'JWT_EXPIRES_IN=15m\n',
    secrets: ['INoeHgSW8f9Ha5N1iq7sEn31pyWChNE0wtTVvyLgUjVRq5A67V2VbKJ9PmvyCiBU'],
    keeps: ['JWT_SECRET', 'JWT_EXPIRES_IN=15m'],
  },
  {
    id: 'assign-gradle-properties',
    family: 'assignment',
    text: 'signing.keyId=4AEE18F8\n' +
      'signing.password=C3GFTck1ISW1dyQ9\n' +
      'ossrhUsername=acme-release\n' +
      'ossrhPassword=JVITI7CHWyfP1tY65wF9\n',
    secrets: ['C3GFTck1ISW1dyQ9', 'JVITI7CHWyfP1tY65wF9'],
    keeps: ['signing.keyId=4AEE18F8', 'signing.password', 'ossrhUsername=acme-release', 'ossrhPassword'],
  },
  {
    id: 'assign-apikey-query-param',
    family: 'assignment',
    text: 'GET https://www.alphavantage.co/query?function=TIME_SERIES_DAILY&symbol=IBM&apikey=DR6HQ722LHHBJ4YS&outputsize=compact',
    secrets: ['DR6HQ722LHHBJ4YS'],
    keeps: ['https://www.alphavantage.co/query?function=TIME_SERIES_DAILY&symbol=IBM', 'outputsize=compact'],
  },

  // ---- tricky ----------------------------------------------------------------------------------------
  // Edge cases: repeats, repeated key words, values split across lines, nested quoting, punctuation
  // and brackets, URL encoding, key case, text boundaries, non-ASCII.
  {
    id: 'tricky-same-secret-twice-on-one-line',
    family: 'tricky',
    text: 'retry 1/3 POST /v1/payment_intents with 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 -> 401; retry 2/3 with 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 -> 401',
    secrets: [
      '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',
    ],
    keeps: ['retry 1/3 POST /v1/payment_intents with', '-> 401; retry 2/3 with'],
  },
  {
    id: 'tricky-same-password-two-vars',
    family: 'tricky',
    text: 'DB_PASSWORD=R6C3i18qJasXRpfUqg PGPASSWORD=R6C3i18qJasXRpfUqg psql -h db01 -U app -d orders',
    secrets: ['R6C3i18qJasXRpfUqg'],
    keeps: ['DB_PASSWORD', 'PGPASSWORD', 'psql -h db01 -U app -d orders'],
  },
  {
    id: 'tricky-password-keyword-repeated',
    family: 'tricky',
    text: 'From the runbook, step 4 — password: password = "correct-horse-battery-9"',
    secrets: ['correct-horse-battery-9'],
    keeps: ['From the runbook, step 4 —'],
  },
  {
    id: 'tricky-token-keyword-repeated',
    family: 'tricky',
    text: "curl -H 'Authorization: Token token=WnXSjM8fqw-7i6bCRbAa' -H 'Accept: application/vnd.pagerduty+json;version=2' https://api.pagerduty.com/incidents",
    secrets: ['WnXSjM8fqw-7i6bCRbAa'],
    keeps: [
      'Authorization',
      'Accept: application/vnd.pagerduty+json;version=2',
      'https://api.pagerduty.com/incidents',
    ],
  },
  {
    id: 'tricky-value-split-line-continuation',
    family: 'tricky',
    text: '```\nAWS_SECRET_ACCESS_KEY=uUYuYriRsyok5Aq5d2vV\\\nRSCcHYpRFccYbEN31vwM\n```',
    secrets: ['uUYuYriRsyok5Aq5d2vV', 'RSCcHYpRFccYbEN31vwM'],
    keeps: ['AWS_SECRET_ACCESS_KEY'],
  },
  {
    id: 'tricky-wrapped-base64-key',
    family: 'tricky',
    text: 'Storage key from the portal (copied from a narrow terminal):\n' +
      '\n' +
      '```\n' +
      'AccountKey=N+9e3aiRx9N85VmTizjjWP89TGH2R3Dd7JFVk6rjluKBxl1+A7txLMw/SVcs\n' +
      'EkT4x6uCpGu9MTOVOP9SSalFyQ==\n' +
      '```\n',
    secrets: ['N+9e3aiRx9N85VmTizjjWP89TGH2R3Dd7JFVk6rjluKBxl1+A7txLMw/SVcs', 'EkT4x6uCpGu9MTOVOP9SSalFyQ=='],
    keeps: ['Storage key from the portal (copied from a narrow terminal):', 'AccountKey'],
  },
  {
    id: 'tricky-wrapped-jwt-in-log',
    family: 'tricky',
    text: 'token was:\n' +
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJlNmJiOWRiNy0yYmI2LTRlO\n' +
      'WEtOWQ3Yy0xZmY0Y2M3ODkyMzkiLCJpYXQiOjE3MTgwOTcxNjQsImV4cCI6MTcxODEwMDc2NH0.KaeONLAjhCDxI_xvChME85C7vCbK9v9raMi7AKefE8R\n' +
      '(wrapped by the terminal)',
    secrets: [
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJlNmJiOWRiNy0yYmI2LTRlO',
      'WEtOWQ3Yy0xZmY0Y2M3ODkyMzkiLCJpYXQiOjE3MTgwOTcxNjQsImV4cCI6MTcxODEwMDc2NH0.KaeONLAjhCDxI_xvChME85C7vCbK9v9raMi7AKefE8R',
    ],
    keeps: ['token was:', '(wrapped by the terminal)'],
  },
  {
    id: 'tricky-nested-quoted-json',
    family: 'tricky',
    text: 'SECRETS_JSON="{\\"password\\": \\"2TBw2Qt7qOIryiONY18G\\", \\"user\\": \\"svc_ci\\"}"',
    secrets: ['2TBw2Qt7qOIryiONY18G'],
    keeps: ['SECRETS_JSON'],
  },
  {
    id: 'tricky-json-inside-json-string',
    family: 'tricky',
    text: '{"name": "worker", "env": "{\\"api_key\\": \\"CNY9zxI5CVZcBLUL2LPlmowbrYxsh7GiOuFTpXCO\\", \\"region\\": \\"eu-west-1\\"}"}',
    secrets: ['CNY9zxI5CVZcBLUL2LPlmowbrYxsh7GiOuFTpXCO'],
    keeps: ['"name": "worker"', 'api_key', 'eu-west-1'],
  },
  {
    id: 'tricky-inside-parentheses',
    family: 'tricky',
    text: 'Rotated the Anthropic key yesterday (old one: sk-ant-api03-KV6uNUXIfbNWU7Yeh59EGAT-3eFsSo7jRJGyWa7KjquoDwg6sSscbpJpnh9UVclOVuMFvFaJwQfhknpdy_ddnUJxW01xyAA) — please update CI.',
    secrets: [
      'sk-ant-api03-KV6uNUXIfbNWU7Yeh59EGAT-3eFsSo7jRJGyWa7KjquoDwg6sSscbpJpnh9UVclOVuMFvFaJwQfhknpdy_ddnUJxW01xyAA',
    ],
    keeps: ['Rotated the Anthropic key yesterday (old one:', '— please update CI.'],
  },
  {
    id: 'tricky-inside-brackets-no-spaces',
    family: 'tricky',
    text: 'SLACK_TOKENS=[xoxb-3361358854-7445400501601-kMoxAYWoGpm2eXVI8csU2NyV,xoxb-1870553609-8031689589722-1ggpCm6PVFfDeNBZtcdelEwS]',
    secrets: [
      'xoxb-3361358854-7445400501601-kMoxAYWoGpm2eXVI8csU2NyV',
      'xoxb-1870553609-8031689589722-1ggpCm6PVFfDeNBZtcdelEwS',
    ],
    keeps: ['SLACK_TOKENS'],
  },
  {
    id: 'tricky-inside-backticks',
    family: 'tricky',
    text: 'Set `HF_TOKEN` to `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` in the Space settings, then restart.',
    secrets: ['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'],
    keeps: ['HF_TOKEN', 'in the Space settings, then restart.'],
  },
  {
    id: 'tricky-after-punctuation-no-spaces',
    family: 'tricky',
    text: 'creds:AKIAJ3YI4EGWJ7DELJLU,Xo1+3OLDYIsg5q3gCQ91DUtuDOnADd/R85wQpIN3;region:us-east-1',
    secrets: ['AKIAJ3YI4EGWJ7DELJLU', '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'],
    keeps: ['region:us-east-1'],
  },
  {
    id: 'tricky-url-encoded-form-body',
    family: 'tricky',
    text: 'POST /oauth/token\n' +
      'Content-Type: application/x-www-form-urlencoded\n' +
      '\n' +
      'grant_type=password&username=ops%40acme.io&password=Vq%217mL%23p2Zr%249wXe&client_id=cli',
    secrets: ['Vq%217mL%23p2Zr%249wXe'],
    keeps: ['POST /oauth/token', 'grant_type=password', 'username=ops%40acme.io', 'client_id=cli'],
  },
  {
    id: 'tricky-url-encoded-redirect',
    family: 'tricky',
    text: 'Location: https://login.acme.io/continue?next=https%3A%2F%2Fapp.acme.io%2Fcallback%3Faccess_token%3DL6pGGQB8uC1qhQczaYuusAEjc754PGVTYgNyCWL4%26state%3D8f2c1a',
    secrets: ['L6pGGQB8uC1qhQczaYuusAEjc754PGVTYgNyCWL4'],
    keeps: [
      'Location: https://login.acme.io/continue?next=https%3A%2F%2Fapp.acme.io%2Fcallback',
      'state%3D8f2c1a',
    ],
  },
  {
    id: 'markdown-emphasised-keys',
    family: 'markdown',
    text: '## Staging\n\n**Password:** Zq8!rT5pWx3K\n- **DB password**: Hx4-wQ9zLm2v\n*API token*: tk_9f8e7d6c5b4a3928\n__Secret:__ Dm3#kP8qRt6w',
    secrets: ['Zq8!rT5pWx3K', 'Hx4-wQ9zLm2v', 'tk_9f8e7d6c5b4a3928', 'Dm3#kP8qRt6w'],
    keeps: ['**Password:**', '**DB password**:', '__Secret:__'],
  },
  {
    id: 'sql-quoted-passwords',
    family: 'assignment',
    text: "CREATE USER 'app'@'%' IDENTIFIED BY 'Zq8rT5''pWx3K';\nALTER ROLE reporting WITH ENCRYPTED PASSWORD 'Lm2vHx4wQ9z';\nCREATE ROLE etl LOGIN PASSWORD \"Rt6wDm3kP8q\";",
    secrets: ["Zq8rT5''pWx3K", 'Lm2vHx4wQ9z', 'Rt6wDm3kP8q'],
    keeps: ['IDENTIFIED BY', 'WITH ENCRYPTED PASSWORD'],
  },
  {
    id: 'password-confirmation-field',
    family: 'assignment',
    text: 'POST /signup?email=a%40b.io&password=Zq8rT5pWx3K&password_confirmation=Zq8rT5pWx3K',
    secrets: ['Zq8rT5pWx3K'],
    keeps: ['password_confirmation='],
  },
  {
    id: 'tricky-uppercase-key',
    family: 'tricky',
    text: 'PASSWORD=iwgN7ufUTgwWYkYEzJ7u',
    secrets: ['iwgN7ufUTgwWYkYEzJ7u'],
    keeps: ['PASSWORD'],
  },
  {
    id: 'tricky-mixed-case-keys',
    family: 'tricky',
    text: 'pAsSwOrD=2PJ2G5xlol8CvZFQaa\n' +
      'APIKEY=d1812253044d8bc95dff819c600df53b\n' +
      'Secret_Key: 76aQ2Gr0Tkazrnf3E7vUqeH1M4WhEZ\n' +
      'X-Api-KEY: V1SveZNj8gl0Nz9JufxGbS5t\n',
    secrets: [
      '2PJ2G5xlol8CvZFQaa',
      'd1812253044d8bc95dff819c600df53b',
      '76aQ2Gr0Tkazrnf3E7vUqeH1M4WhEZ',
      'V1SveZNj8gl0Nz9JufxGbS5t',
    ],
    keeps: ['pAsSwOrD', 'APIKEY', 'Secret_Key', 'X-Api-KEY'],
  },
  {
    id: 'tricky-secret-at-start-and-end',
    family: 'tricky',
    text: 'ghp_pLwK4zNurh58qrRw6hBV5BudVVOCZM1LALh0 was pasted in #incident-4312 by mistake; the Slack bot token leaked too: xoxb-5674360569-2279440975091-Kbkx3dASBn6F8frVnoqhfvAJ',
    secrets: [
      'ghp_pLwK4zNurh58qrRw6hBV5BudVVOCZM1LALh0',
      'xoxb-5674360569-2279440975091-Kbkx3dASBn6F8frVnoqhfvAJ',
    ],
    keeps: ['was pasted in #incident-4312 by mistake; the Slack bot token leaked too:'],
  },
  {
    id: 'tricky-text-is-only-the-secret',
    family: 'tricky',
    text: 'sk-ant-api03-oOLZojYHbHK0bnCh45H-4en3-ID6ei4JZlC2JhEMmzQINNie1ZNcRLYAGb-BmcztWcLn9_ZDFUIWlsUtkXa6XEwbRVPjVAA',
    secrets: [
      'sk-ant-api03-oOLZojYHbHK0bnCh45H-4en3-ID6ei4JZlC2JhEMmzQINNie1ZNcRLYAGb-BmcztWcLn9_ZDFUIWlsUtkXa6XEwbRVPjVAA',
    ],
  },
  {
    id: 'tricky-non-ascii-german',
    family: 'tricky',
    text: 'Das Passwort für die Staging-DB: password=t5l3sGxc2JVwZhjHpfrX — bitte nicht weitergeben ✅',
    secrets: ['t5l3sGxc2JVwZhjHpfrX'],
    keeps: ['Das Passwort für die Staging-DB:', '— bitte nicht weitergeben ✅'],
  },
  {
    id: 'tricky-non-ascii-japanese',
    family: 'tricky',
    text: '本番のAPIキー：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。Slackに貼らないでください。',
    secrets: [
      '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',
    ],
    keeps: ['本番のAPIキー：', 'Slackに貼らないでください。'],
  },
  {
    id: 'tricky-non-ascii-cyrillic-emoji',
    family: 'tricky',
    text: '🔑 токен бота: 6858910813:AAK0_t1ksDsFSQX-j-egeN2zim0lCPUAEh7 🚀 не коммитить',
    secrets: ['AAK0_t1ksDsFSQX-j-egeN2zim0lCPUAEh7'],
    keeps: ['🔑 токен бота:', '🚀 не коммитить'],
  },
  {
    id: 'tricky-crlf-env-file',
    family: 'tricky',
    text: 'DB_HOST=db01\r\n' +
      'DB_PASSWORD=rdbMTjyt8pzAF8ia9ICM\r\n' +
      'API_TOKEN=bPbdPKDVQ6UOtcBMt3lluegoksO9yAjz\r\n' +
      'LOG_LEVEL=info\r\n',
    secrets: ['rdbMTjyt8pzAF8ia9ICM', 'bPbdPKDVQ6UOtcBMt3lluegoksO9yAjz'],
    keeps: ['DB_HOST=db01', 'DB_PASSWORD', 'API_TOKEN', 'LOG_LEVEL=info'],
  },
  {
    id: 'tricky-tab-separated-table',
    family: 'tricky',
    text: 'NAME\tVALUE\tSCOPE\n' +
      'GITLAB_TOKEN\tglpat-ecZnCW501rYmGKMxVEB3\tapi\n' +
      'LOG_LEVEL\tdebug\tall\n',
    secrets: ['glpat-ecZnCW501rYmGKMxVEB3'],
    keeps: ['NAME\tVALUE\tSCOPE', 'GITLAB_TOKEN', 'LOG_LEVEL\tdebug\tall'],
  },
  {
    id: 'tricky-stack-trace-with-key',
    family: 'tricky',
    text: 'Error: Unauthorized (401) sending via SendGrid with key 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\n' +
      '    at MailService.send (/app/src/mail/service.ts:88:13)\n' +
      '    at async OrderController.confirm (/app/src/orders/controller.ts:142:5)',
    secrets: ['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'],
    keeps: [
      'Error: Unauthorized (401) sending via SendGrid with key',
      'at MailService.send (/app/src/mail/service.ts:88:13)',
      'at async OrderController.confirm (/app/src/orders/controller.ts:142:5)',
    ],
  },
  // ---- layouts -----------------------------------------------------------------------------------------
  // Secrets in layouts beyond `key = value` on one line: YAML values below their key, Markdown
  // tables, XML elements, .netrc and .pgpass files, short password flags, unencoded URL passwords.
  {
    id: 'layout-yaml-block-literal',
    family: 'layout',
    text: 'database:\n  host: db.internal\n  password: |\n    Wq7vLr2Xe9-block-literal\n  pool: 10\n',
    secrets: ['Wq7vLr2Xe9-block-literal'],
    keeps: ['database:', 'host: db.internal', 'password: |', 'pool: 10'],
  },
  {
    id: 'layout-yaml-block-folded',
    family: 'layout',
    text: 'smtp:\n  password: >-\n    Zt4kPm8Qa1-folded-value\n',
    secrets: ['Zt4kPm8Qa1-folded-value'],
    keeps: ['smtp:', 'password: >-'],
  },
  {
    id: 'layout-yaml-next-line',
    family: 'layout',
    text: 'redis:\n  auth_token:\n    Jc5nRw3Ty8Hv2Lp6Qx9Mz4B\n  port: 6379\n',
    secrets: ['Jc5nRw3Ty8Hv2Lp6Qx9Mz4B'],
    keeps: ['redis:', 'auth_token:', 'port: 6379'],
  },
  {
    id: 'layout-markdown-table-row',
    family: 'layout',
    text: '| Variable | Value |\n| --- | --- |\n| DB_HOST | db.internal |\n| DB_PASSWORD | Hq3Vt8Lw2Zr6 |\n| API_TOKEN | `Pk7Xm2Nq9Rs4Tv6Wy8Za3Bc` |',
    secrets: ['Hq3Vt8Lw2Zr6', 'Pk7Xm2Nq9Rs4Tv6Wy8Za3Bc'],
    keeps: ['| Variable | Value |', '| DB_HOST | db.internal |', 'DB_PASSWORD', 'API_TOKEN'],
  },
  {
    id: 'layout-xml-elements',
    family: 'layout',
    text: '<datasource>\n  <username>shop</username>\n  <password>Tm6Yq1Ws4Xe9</password>\n  <apiKey>Gd2Jh7Kl3Mn8Pq4Rs9Tu5V</apiKey>\n</datasource>',
    secrets: ['Tm6Yq1Ws4Xe9', 'Gd2Jh7Kl3Mn8Pq4Rs9Tu5V'],
    keeps: ['<username>shop</username>', '<password>', '</password>', '<apiKey>'],
  },
  {
    id: 'layout-xml-namespaced-passphrase',
    family: 'layout',
    text: '<cfg:Password type="plain">correct stapler orbit</cfg:Password>',
    secrets: ['correct stapler orbit'],
    keeps: ['<cfg:Password type="plain">', '</cfg:Password>'],
  },
  {
    id: 'layout-netrc-one-line',
    family: 'layout',
    text: 'machine api.heroku.com login dana@acme.io password Fy8Rk2Dp5Lx9Vn3',
    secrets: ['Fy8Rk2Dp5Lx9Vn3'],
    keeps: ['machine api.heroku.com login dana@acme.io password'],
  },
  {
    id: 'layout-netrc-lines',
    family: 'layout',
    text: '# ~/.netrc\nmachine git.acme.io\n  login ci-bot\n  password Bw4Qn7Zs1Hc6Ty',
    secrets: ['Bw4Qn7Zs1Hc6Ty'],
    keeps: ['machine git.acme.io', 'login ci-bot', 'password'],
  },
  {
    id: 'layout-pgpass',
    family: 'layout',
    text: '# ~/.pgpass\ndb.internal:5432:shop:shopadmin:Ur5Gt8Wm2Kv-pg\n*:*:*:replicator:Nx3Cb6Yh9Pj-pg\n',
    secrets: ['Ur5Gt8Wm2Kv-pg', 'Nx3Cb6Yh9Pj-pg'],
    keeps: ['db.internal:5432:shop:shopadmin:', '*:*:*:replicator:'],
  },
  {
    id: 'layout-mysql-joined-p',
    family: 'layout',
    text: 'mysqldump -h db.internal -u root -pQs4Lf7Nb2Xw shop > shop.sql',
    secrets: ['Qs4Lf7Nb2Xw'],
    keeps: ['mysqldump -h db.internal -u root -p', 'shop > shop.sql'],
  },
  {
    id: 'layout-mysql-quoted-p',
    family: 'layout',
    text: "mysql -h 127.0.0.1 -u app -p'Kz5 Wq8 Nd2' -e 'SELECT 1'",
    secrets: ['Kz5 Wq8 Nd2'],
    keeps: ['mysql -h 127.0.0.1 -u app -p', "-e 'SELECT 1'"],
  },
  {
    id: 'layout-sshpass',
    family: 'layout',
    text: "sshpass -p 'Vr6Hm1Zk8Dq3' ssh deploy@10.0.4.12 'systemctl restart shop'",
    secrets: ['Vr6Hm1Zk8Dq3'],
    keeps: ['sshpass -p', "ssh deploy@10.0.4.12 'systemctl restart shop'"],
  },
  {
    id: 'layout-docker-login-p',
    family: 'layout',
    text: 'docker login -u acme-ci -p Lc9Wd3Hs6Qm1Tz registry.acme.io',
    secrets: ['Lc9Wd3Hs6Qm1Tz'],
    keeps: ['docker login -u acme-ci -p', 'registry.acme.io'],
  },
  {
    id: 'layout-url-password-with-at-and-slash',
    family: 'layout',
    text: 'DATABASE_URL=postgres://shop:Jm4@Kx/9Qv-raw@db.internal:5432/shop\nREDIS_URL=redis://:Hb2@Nw7Yt-raw@cache.internal:6379/0',
    secrets: ['Jm4@Kx/9Qv-raw', 'Hb2@Nw7Yt-raw'],
    keeps: ['postgres://shop:', '@db.internal:5432/shop', 'redis://:', '@cache.internal:6379/0'],
  },
  {
    id: 'layout-ini-word-password',
    family: 'layout',
    text: '[mail]\nhost = smtp.acme.io\npassword = marmaladeorbit\n',
    secrets: ['marmaladeorbit'],
    keeps: ['[mail]', 'host = smtp.acme.io', 'password = '],
  },
  {
    id: 'layout-lowercase-secret-key',
    family: 'layout',
    text: 'SECRET_KEY=quietlanternharbour\nDEBUG=false',
    secrets: ['quietlanternharbour'],
    keeps: ['SECRET_KEY=', 'DEBUG=false'],
  },
  {
    id: 'layout-indexed-assignment',
    family: 'layout',
    text: 'os.environ["PAYMENTS_API_KEY"] = "Wk5Rt9Yp2Lm7Qz3Xc8Vb"\n$_ENV[\'DB_PASSWORD\'] = \'Gh3Jk6Lm9Np\';',
    secrets: ['Wk5Rt9Yp2Lm7Qz3Xc8Vb', 'Gh3Jk6Lm9Np'],
    keeps: ['os.environ["PAYMENTS_API_KEY"] = "', "$_ENV['DB_PASSWORD'] = '"],
  },
  {
    id: 'layout-quoted-cookie-before-markup',
    family: 'layout',
    text: '<pre>Cookie: sid="Rq7Tn2Wx5Zb8Kd4M">',
    secrets: ['Rq7Tn2Wx5Zb8Kd4M'],
    keeps: ['<pre>Cookie: sid="', '">'],
  },
  {
    id: 'layout-openssl-pass-arg',
    family: 'layout',
    text: '[openssl enc -aes-256-cbc -pass pass:Ys8Gc3Vn6Hq1 -in backup.tar]',
    secrets: ['Ys8Gc3Vn6Hq1'],
    keeps: ['[openssl enc -aes-256-cbc -pass pass:', ' -in backup.tar]'],
  },
  {
    id: 'layout-yaml-block-holding-env-file',
    family: 'layout',
    text: 'stringData:\n  credentials: |\n    [default]\n    db_password = Xe4Rt7Yu1Io9\n',
    secrets: ['Xe4Rt7Yu1Io9'],
    keeps: ['stringData:', 'credentials: |', '[default]', 'db_password = '],
  },
  {
    id: 'layout-yaml-long-block',
    family: 'layout',
    text: 'private_key_passphrase: |\n  velvet ridge amber line 0\n  velvet ridge birch line 1\n  velvet ridge cobalt line 2\n  velvet ridge dune line 3\n  velvet ridge ember line 4\n  velvet ridge fjord line 5\n  velvet ridge garnet line 6\n  velvet ridge harbor line 7\n  velvet ridge indigo line 8\n  velvet ridge juniper line 9\n  velvet ridge kestrel line 10\n  velvet ridge lichen line 11\n  velvet ridge meadow line 12\n  velvet ridge nectar line 13\n  velvet ridge onyx line 14\n  velvet ridge pebble line 15\n  velvet ridge quill line 16\n  velvet ridge russet line 17\n  velvet ridge saffron line 18\n  velvet ridge tundra line 19\n  velvet ridge umber line 20\n  velvet ridge violet line 21\n  velvet ridge willow line 22\n  velvet ridge xenon line 23\n  velvet ridge yarrow line 24\n  velvet ridge zephyr line 25\n  velvet ridge acorn line 26\n  velvet ridge bramble line 27\n  velvet ridge cinder line 28\n  velvet ridge delta line 29\n  velvet ridge egret line 30\n  velvet ridge fennel line 31\n  velvet ridge glacier line 32\n  velvet ridge heron line 33\n  velvet ridge iris line 34\n  velvet ridge jasper line 35\n  velvet ridge kelp line 36\n  velvet ridge lotus line 37\n  velvet ridge marble line 38\n  velvet ridge nimbus line 39\n  velvet ridge orchid line 40\n  velvet ridge prairie line 41\n  velvet ridge quartz line 42\n  velvet ridge raven line 43\n  velvet ridge sorrel line 44\n  velvet ridge thistle line 45\n  velvet ridge upland line 46\n  velvet ridge vesper line 47\n  velvet ridge walnut line 48\n  velvet ridge yucca line 49\n',
    secrets: ['velvet ridge amber line 0', 'velvet ridge yucca line 49'],
    keeps: ['private_key_passphrase: |'],
  },
  {
    id: 'layout-json-value-on-next-line',
    family: 'layout',
    text: '{\n  "password":\n    "Nh5Bg2Vf8Cd",\n  "user": "bob"\n}',
    secrets: ['Nh5Bg2Vf8Cd'],
    keeps: ['"password":\n    "', '",\n  "user": "bob"\n}'],
  },
  {
    id: 'layout-yaml-password-of-words',
    family: 'layout',
    text: 'smtp:\n  password: marmot lagoon quartz stapler # rotated in May\n',
    secrets: ['marmot lagoon quartz stapler', 'lagoon quartz stapler'],
    keeps: ['password: ', '# rotated in May'],
  },
  {
    id: 'layout-properties-password-of-words',
    family: 'layout',
    text: 'db.url = jdbc:postgresql://db.internal/shop\ndb.password = copper falcon meadow river\n',
    secrets: ['copper falcon meadow river', 'falcon meadow river'],
    keeps: ['db.url = jdbc:postgresql://db.internal/shop', 'db.password = '],
  },
  {
    id: 'layout-ini-camel-and-commented',
    family: 'layout',
    text: '[db]\npassword = SuperSecretVault\n[cache]\npassword = lantern_quiet_9 ; prod only\n',
    secrets: ['SuperSecretVault', 'lantern_quiet_9'],
    keeps: ['[db]', '[cache]', '; prod only'],
  },
  {
    id: 'layout-quoted-values-starting-with-symbols',
    family: 'layout',
    text: 'DB_PASSWORD="!Qaz2wsx#Edc"\n{"password": "$uperSecret1"}\nSECRET_KEY=\'=d8Kq2LmZ9xR4vB7n\'',
    secrets: ['!Qaz2wsx#Edc', '$uperSecret1', '=d8Kq2LmZ9xR4vB7n'],
    keeps: ['DB_PASSWORD="', '{"password": "', "SECRET_KEY='"],
  },
  {
    id: 'layout-xml-cdata-and-entry-key',
    family: 'layout',
    text: '<password><![CDATA[Rb6Tn1Wm4Qz]]></password>\n<entry key="db.password">Lk3Jh8Gf5Ds</entry>',
    secrets: ['Rb6Tn1Wm4Qz', 'Lk3Jh8Gf5Ds'],
    keeps: ['<password><![CDATA[', ']]></password>', '<entry key="db.password">', '</entry>'],
  },
  {
    id: 'layout-netrc-any-order',
    family: 'layout',
    text: 'machine ftp.acme.io password Pl9Ok8Ij7Uh login bob\nmachine db.acme.io login ci account ops password Mn2Bv5Cx8Zq',
    secrets: ['Pl9Ok8Ij7Uh', 'Mn2Bv5Cx8Zq'],
    keeps: ['machine ftp.acme.io password ', ' login bob', 'machine db.acme.io login ci account ops password '],
  },
  {
    id: 'layout-pgpass-ip-hosts',
    family: 'layout',
    text: '    10.0.0.5:5432:shop:shop:Tg6Yh3Uj8Ik\n    127.0.0.1:5432:*:postgres:Wd4Fr7Gt1Hy  \n',
    secrets: ['Tg6Yh3Uj8Ik', 'Wd4Fr7Gt1Hy'],
    keeps: ['10.0.0.5:5432:shop:shop:', '127.0.0.1:5432:*:postgres:'],
  },
  {
    id: 'layout-cli-continuations-and-joined',
    family: 'layout',
    text: 'mysql -h db.internal \\\n  -u root \\\n  -pJv8Kc3Lx6Mz shop\nsshpass -pQw2Er5Ty8Ui ssh deploy@bastion\ndocker login -u bob -pAs4Df7Gh1Jk registry.acme.io',
    secrets: ['Jv8Kc3Lx6Mz', 'Qw2Er5Ty8Ui', 'As4Df7Gh1Jk'],
    keeps: ['mysql -h db.internal', '-u root', ' shop', 'ssh deploy@bastion', 'docker login -u bob -p', 'registry.acme.io'],
  },
  {
    id: 'layout-url-passwords-unusual',
    family: 'layout',
    text: 'DATABASE_URL=postgres://app:kT9/vQ2+mZ8x@db/app\nSet `postgres://shop:Qp4@Zx8w@db.internal` first.\nLEGACY=postgres://admin:2024@Summer9@db.internal:5432/app\nSMTP=smtp://me@example.com:Gm7Hk2Lq9@smtp.gmail.com:587',
    secrets: ['kT9/vQ2+mZ8x', 'Qp4@Zx8w', '2024@Summer9', 'Gm7Hk2Lq9'],
    keeps: ['postgres://app:', '@db/app', 'postgres://shop:', '@db.internal` first.', '@db.internal:5432/app', 'smtp://me@example.com:', '@smtp.gmail.com:587'],
  },
  {
    id: 'layout-review-leaks',
    family: 'layout',
    text: 'postgres://admin:#Hx4Secr3tQ@db.internal:5432/app\n<password>Pz]7ssw0rdK</password>\n{"db": {"password":\n  "Yt6Gb3Nm9Kq"}}\npassword: &pw Vc2Xz5Lk8Jh\n',
    secrets: ['#Hx4Secr3tQ', 'Pz]7ssw0rdK', 'Yt6Gb3Nm9Kq', 'Vc2Xz5Lk8Jh'],
    keeps: ['postgres://admin:', '@db.internal:5432/app', '<password>', '{"db": {"password":', 'password: &pw '],
  },
  {
    id: 'layout-yaml-comment-and-wrapped-token',
    family: 'layout',
    text: 'password: # from vault\n  Qm8Wn2Ek5Rt\nsigning_key: |\n  Zx7Cv4Bn1Ml9Kj6Hg3Fd8Sa5Pq2Wo4Ei\n  Ru7Ty1Ui8Op3As6Df9Gh2Jk5Lz\n',
    secrets: ['Qm8Wn2Ek5Rt', 'Zx7Cv4Bn1Ml9Kj6Hg3Fd8Sa5Pq2Wo4Ei', 'Ru7Ty1Ui8Op3As6Df9Gh2Jk5Lz'],
    keeps: ['password: # from vault', 'signing_key: |'],
  },
  {
    id: 'layout-escaped-json-env',
    family: 'layout',
    text: '{"env": "A=1\\nDB_PASS=Tr5Yu8Io2Pq\\naccess_key=Kf3Jd6Hs9La2Mn4B\\n"}',
    secrets: ['Tr5Yu8Io2Pq', 'Kf3Jd6Hs9La2Mn4B'],
    keeps: ['{"env": "A=1\\nDB_PASS=', '\\naccess_key='],
  },
  {
    id: 'layout-cli-in-prose-and-markup',
    family: 'layout',
    text: '- mysql -u root -pBx5Nv8Cm2 shop\nI ran "mysql -uroot -pLq7Wz3Rt6" and it failed\n{"cmd": "mysql -uroot -pHd4Jf8Ks1", "x": 1}',
    secrets: ['Bx5Nv8Cm2', 'Lq7Wz3Rt6', 'Hd4Jf8Ks1'],
    keeps: ['- mysql -u root -p', ' shop', 'I ran "mysql -uroot -p', '" and it failed', '{"cmd": "mysql -uroot -p', '", "x": 1}'],
  },
  {
    id: 'layout-secret-of-short-words',
    family: 'layout',
    text: 'a: 1\nclient_secret: Zq3 X9v L2m\n',
    secrets: ['Zq3 X9v L2m'],
    keeps: ['a: 1', 'client_secret: '],
  },
  // ---- the last held-out formats: wrapped tokens, base64-wrapped credentials, export lines, quoted
  // and repeated assignments, prose ------------------------------------------------------------------
  {
    id: 'github-token-wrapped-in-log',
    family: 'wrapped',
    text: 'clone failed with key ghp_R7mK2pQ9xL4vN8tB3w\nY6zC1dF5hJ0sA2eG7k\nretrying in 5s',
    secrets: ['ghp_R7mK2pQ9xL4vN8tB3w', 'Y6zC1dF5hJ0sA2eG7k'],
    keeps: ['clone failed with key', 'retrying in 5s'],
  },
  {
    id: 'stripe-key-wrapped-in-fence',
    family: 'wrapped',
    text: '```\nsk_live_51HqJ2xKlmNoPqRsAb\nTuVwXyZ0123456789cdEf\n```',
    secrets: ['sk_live_51HqJ2xKlmNoPqRsAb', 'TuVwXyZ0123456789cdEf'],
    keeps: ['```'],
  },
  {
    id: 'k8s-secret-data-base64-github-token',
    family: 'base64',
    text: 'apiVersion: v1\nkind: Secret\ndata:\n  gh: Z2hwX1I3bUsycFE5eEw0dk44dEIzd1k2ekMxZEY1aEowc0EyZUc3aw==\n',
    secrets: ['Z2hwX1I3bUsycFE5eEw0dk44dEIzd1k2ekMxZEY1aEowc0EyZUc3aw=='],
    keeps: ['kind: Secret', 'data:', 'gh:'],
  },
  {
    id: 'base64-encoded-aws-config',
    family: 'base64',
    text: 'the encoded config is YXdzX2FjY2Vzc19rZXlfaWQgPSBBS0lBWjdRWDJNNE42UDhSM1Q1VgpyZWdpb24gPSBldS13ZXN0LTEK (decode it with base64 -d)',
    secrets: ['YXdzX2FjY2Vzc19rZXlfaWQgPSBBS0lBWjdRWDJNNE42UDhSM1Q1VgpyZWdpb24gPSBldS13ZXN0LTEK'],
    keeps: ['the encoded config is', '(decode it with base64 -d)'],
  },
  {
    id: 'export-line-secret-key',
    family: 'assignment',
    text: 'export DJANGO_SECRET_KEY=9x#k2m!p9q@w3e4r5t6y7u8i9o0z\nexport DEBUG=false',
    secrets: ['9x#k2m!p9q@w3e4r5t6y7u8i9o0z'],
    keeps: ['export DJANGO_SECRET_KEY=', 'export DEBUG=false'],
  },
  {
    id: 'single-quoted-password-in-code',
    family: 'assignment',
    text: "db = connect(host='db.internal', user='shop', password='Tr0ub4dor&3xyz')",
    secrets: ['Tr0ub4dor&3xyz'],
    keeps: ["host='db.internal'", "user='shop'", 'password='],
  },
  {
    id: 'same-key-twice-on-one-line',
    family: 'assignment',
    text: 'token=Qw3rTy7UiOp9AsDfGhJkL2zX old token=Zx8Qp2LmN7vR4tY9wK3sD6fH',
    secrets: ['Qw3rTy7UiOp9AsDfGhJkL2zX', 'Zx8Qp2LmN7vR4tY9wK3sD6fH'],
    keeps: ['token=', 'old token='],
  },
  {
    id: 'prose-secret-colon',
    family: 'prose',
    text: 'For the staging box the secret: hunter2hunter2 (rotate it after the demo).',
    secrets: ['hunter2hunter2'],
    keeps: ['For the staging box the secret:', '(rotate it after the demo).'],
  },

  {
    id: 'docker-config-base64-wrapped-76',
    family: 'base64',
    text: 'data:\n  .dockerconfigjson: |\neyJhdXRocyI6IHsiZ2hjci5pbyI6IHsiYXV0aCI6ICJiV1U2WjJod1gxSTNiVXN5Y0ZFNWVFdzBk\nazQ0ZEVJemQxazJla014WkVZMWFFb3djMEV5WlVjM2F3PT0iLCAiZW1haWwiOiAibWVAZXhhbXBs\nZS5jb20ifX19\n',
    secrets: ["eyJhdXRocyI6IHsiZ2hjci5pbyI6IHsiYXV0aCI6ICJiV1U2WjJod1gxSTNiVXN5Y0ZFNWVFdzBk", "azQ0ZEVJemQxazJla014WkVZMWFFb3djMEV5WlVjM2F3PT0iLCAiZW1haWwiOiAibWVAZXhhbXBs", "ZS5jb20ifX19"],
    keeps: ['.dockerconfigjson'],
  },
  {
    id: 'base64-utf8-text-with-token',
    family: 'base64',
    text: 'note: Y2zDqTogZ2hwX1I3bUsycFE5eEw0dk44dEIzd1k2ekMxZEY1aEowc0EyZUc3aw==',
    secrets: ['Y2zDqTogZ2hwX1I3bUsycFE5eEw0dk44dEIzd1k2ekMxZEY1aEowc0EyZUc3aw=='],
    keeps: ['note:'],
  },
  // ---- secrets by class: one spelling of each class whose other spellings reached a store raw; --------
  // test/secrets/classes.ts generates the rest of each class.
  {
    id: 'class-django-export-line',
    family: 'django',
    text: "export DJANGO_SECRET_KEY=k7)m(2!x9q@#v4w&z8^b1n=p+r5t-y3u_e6*o0l$h9jg2f%c\npython manage.py runserver",
    secrets: ['k7)m(2!x9q@#v4w&z8^b1n=p+r5t-y3u_e6*o0l$h9jg2f%c'],
    keeps: ['export DJANGO_SECRET_KEY=', 'python manage.py runserver'],
  },
  {
    id: 'class-django-settings-default',
    family: 'django',
    text: "SECRET_KEY = os.environ.get('DJANGO_SECRET_KEY', 'django-insecure-w!3k$9(q)x2m@7z#l1v&8b^n0p+r4t-y6u_e5i*o=g7hj2f')",
    secrets: ['w!3k$9(q)x2m@7z#l1v&8b^n0p+r4t-y6u_e5i*o=g7hj2f'],
    keeps: ["SECRET_KEY = os.environ.get('DJANGO_SECRET_KEY', '"],
  },
  {
    id: 'class-quoted-password-holding-a-quote',
    family: 'quoting',
    text: "export PGPASSWORD='Tz9qWm3!'\"'\"'Rk4!mW2v'\nDB_PASSWORD='Lq8Zt5Kc\\'Xw3#Pn7r'\n{\"password\": \"Vb6Hy2Pw\\\"Hy2%Kd9s\"}",
    secrets: ['Tz9qWm3!', 'Rk4!mW2v', 'Lq8Zt5Kc', 'Xw3#Pn7r', 'Vb6Hy2Pw', 'Hy2%Kd9s'],
    keeps: ['export PGPASSWORD=', 'DB_PASSWORD=', '{"password": '],
  },
  {
    id: 'class-key-name-twice-on-its-line',
    family: 'assignment',
    text: '# database\nhost: db.internal\npassword: password = Qm4!vR8zT2wx # password\n--password password=Nk7#pL2qW9ds\nport: 5432\n',
    secrets: ['Qm4!vR8zT2wx', 'Nk7#pL2qW9ds'],
    keeps: ['host: db.internal', 'port: 5432', '# password'],
  },
  {
    id: 'class-github-token-wrapped-after-20',
    family: 'github',
    text: 'GH_TOKEN="ghp_Wq7Rt2Lm9Xc4Vn8B" +\n  "Hd5Jf3Kp6Sa0Ge2Uo7Iy4T"\nghp_Zx8Kq3Wm7Rt2Ln9Bv\n5Hc4Jd6Fs1Ga0Pe8Uo3Iy',
    secrets: ['ghp_Wq7Rt2Lm9Xc4Vn8B', 'Hd5Jf3Kp6Sa0Ge2Uo7Iy4T', 'ghp_Zx8Kq3Wm7Rt2Ln9Bv', '5Hc4Jd6Fs1Ga0Pe8Uo3Iy'],
    keeps: ['GH_TOKEN='],
  },
  {
    id: 'class-base64-of-aws-env-lines',
    family: 'base64',
    text: 'userData: QVdTX0FDQ0VTU19LRVlfSUQ9QUtJQVFYN1JNTjJMUFo0VEtXOEUKQVdTX1NFQ1JFVF9BQ0NFU1NfS0VZPVZxMytMbThSa1QyelhjOS9XYjdOcEg0ZEZnMUpzWWE2VWUwSW81S3IK\nenv_b64: ZXhwb3J0IEFXU19TRUNSRVRfQUNDRVNTX0tFWT1IbjRUK3BROHpMdzJSeDYvVmI5TWtDM2RZZjdKc0cxYVVlNUlvME5xCg',
    secrets: [
      'QVdTX0FDQ0VTU19LRVlfSUQ9QUtJQVFYN1JNTjJMUFo0VEtXOEUKQVdTX1NFQ1JFVF9BQ0NFU1NfS0VZPVZxMytMbThSa1QyelhjOS9XYjdOcEg0ZEZnMUpzWWE2VWUwSW81S3IK',
      'ZXhwb3J0IEFXU19TRUNSRVRfQUNDRVNTX0tFWT1IbjRUK3BROHpMdzJSeDYvVmI5TWtDM2RZZjdKc0cxYVVlNUlvME5xCg',
    ],
    keeps: ['userData: ', 'env_b64: '],
  },
  {
    id: 'class-password-in-prose',
    family: 'prose',
    text: 'Heads up: the admin password is Hx7!qRz2Lw. The passphrase for the VPN was "amber-7-falcon-Qz".',
    secrets: ['Hx7!qRz2Lw', 'amber-7-falcon-Qz'],
    keeps: ['the admin password is', 'The passphrase for the VPN was'],
  },
  {
    // The near side of what stays (test results under a password key, the shell's PWD, nsswitch
    // sources, versions in prose): a PIN with no result word, a test environment's password
    // (`_TEST`), `DB_PWD`, a `PWD` holding no directory, a password word after nsswitch sources.
    id: 'near-miss-of-results-and-settings',
    family: 'tricky',
    text: 'password: 48213957\nDB_PASSWORD_TEST=hunter2xq7\nDB_PWD=x9secretK4\npwd: hunter4xz8\nPWD=\'Qz8pLm4Nv2\'\npasswd: Wq7files2\nNote: the password is Tr0ub4dor-and-7, not v2-compatible.',
    secrets: ['48213957', 'hunter2xq7', 'x9secretK4', 'hunter4xz8', 'Qz8pLm4Nv2', 'Wq7files2', 'Tr0ub4dor-and-7'],
    keeps: ['DB_PASSWORD_TEST=', 'DB_PWD=', 'pwd: ', 'PWD=', 'passwd: ', 'the password is', 'not v2-compatible.'],
  },
];

export const BENIGN_CASES: readonly BenignCase[] = [
  {
    id: 'password-policy-counts',
    family: 'config',
    text: "PASSWORD_RESET_TIMEOUT=259200\npassword_max_age=90\nPASSWORD_RETRIES=3\npassword_history: 5\nAUTH_PASSWORD_ATTEMPTS=5\npassword_reuse_days: 365",
  },
  // ---- git -------------------------------------------------------------------------------------------
  // Git object names: full 40-hex and abbreviated SHAs in the places they usually appear.
  {
    id: 'git-commit-header',
    family: 'git',
    text: 'commit c887e3020394c5ddfc8a3296c139af4c23184c6e\n' +
      'Author: Dana Kim <dana@acme.io>\n' +
      'Date:   Tue Jun 11 09:12:44 2024 +0200\n' +
      '\n' +
      '    fix(auth): refresh the access token before it expires\n',
  },
  {
    id: 'git-show-short-sha',
    family: 'git',
    text: '$ git show --stat d625dfb\n' +
      ' src/auth/refresh.ts | 14 ++++++++------\n' +
      ' 1 file changed, 8 insertions(+), 6 deletions(-)',
  },
  {
    id: 'git-head-is-now-at',
    family: 'git',
    text: 'HEAD is now at 2e7b5cd chore(deps): bump esbuild from 0.21.4 to 0.21.5',
  },
  {
    id: 'git-merge-two-shas',
    family: 'git',
    text: 'HEAD is now at edafdcc Merge ce29ed67980fa22e74e48d6ef01a831062e144f8 into d42093f89d187513fea9c7f05a2fd8cc4c8281f7',
  },
  {
    id: 'git-cherry-picked-from',
    family: 'git',
    text: '(cherry picked from commit 8eacff1eb54e129aa1cb9a37f0eeb173d5e9d9e0)',
  },
  {
    id: 'git-changelog-short-sha-parens',
    family: 'git',
    text: '### Bug Fixes\n' +
      '\n' +
      '- handle an empty cursor in pagination (9259354)\n' +
      '- retry the token refresh once on 401 (4609610)\n',
  },
  {
    id: 'git-bare-sha-prose',
    family: 'git',
    text: 'The regression was introduced by 3d4948f87ca96fb336a1f7bd08492aa5fcfba021 when we switched the YAML parser; reverting it fixes the nightly build.',
  },
  {
    id: 'git-log-oneline',
    family: 'git',
    text: '$ git log --oneline -4\n' +
      'c4499b3b3 (HEAD -> main, origin/main) docs: explain the password policy\n' +
      '82cde7f51 feat(api): paginate /v2/orders\n' +
      'de7c99b7c test: cover expired bearer tokens\n' +
      '381e81fc7 ci: cache node_modules',
  },
  {
    id: 'git-rebase-todo',
    family: 'git',
    text: 'pick 654dcd77 feat: add token bucket rate limiter\n' +
      'squash 3c5b7508 fixup: rename secretName to secretRef\n' +
      'pick 4db95c93 docs: update credentials section',
  },
  {
    id: 'git-revert-message',
    family: 'git',
    text: 'Revert "feat: rotate signing keys nightly"\n' +
      '\n' +
      'This reverts commit 38a7efb5b73b15c2084b0f943599d21199694502.',
  },
  {
    id: 'git-github-commit-url',
    family: 'git',
    text: 'See https://github.com/acme/platform/commit/e4cef00baf60fc1d149a3bfce495649a6e0c238e and the follow-up in #4312.',
  },
  {
    id: 'git-describe',
    family: 'git',
    text: 'v2.4.0-17-g575bc4a92b',
  },

  // ---- hash ------------------------------------------------------------------------------------------
  // Identifiers and digests: UUIDs, lockfile integrity hashes, sha256 digests, checksums, SRI,
  // go.sum, ETags, trace ids.
  {
    id: 'hash-uuid-log-line',
    family: 'hash',
    text: 'request_id=f647b5bc-01e3-4229-9b43-0105ac52f526 status=200 method=GET path=/v2/orders duration_ms=48',
  },
  {
    id: 'hash-uuids-json',
    family: 'hash',
    text: '{"orderId": "abe6b886-0087-49cc-9007-5ec02b4ce4fd", "customerId": "cec7134a-c959-4e20-8094-db58f5fd5339", "status": "shipped"}',
  },
  {
    id: 'hash-uuid-uppercase',
    family: 'hash',
    text: 'Registered device 636C876F-57D3-4DEF-A68F-F66BA37C0D79 for tenant acme-eu.',
  },
  {
    id: 'hash-package-lock-integrity',
    family: 'hash',
    text: '"node_modules/esbuild": {\n' +
      '  "version": "0.21.5",\n' +
      '  "resolved": "https://registry.npmjs.org/esbuild/-/esbuild-0.21.5.tgz",\n' +
      '  "integrity": "sha512-9hw2wdbSC6mgs3oKP7G+5PLhOd64cwOp54OjCl8UsJqSUTX6ScQPjf1VUOnhLP6ZvdXFlwTYIAOGOzqZiT8cRw==",\n' +
      '  "hasInstallScript": true\n' +
      '}',
  },
  {
    id: 'hash-yarn-lock-integrity',
    family: 'hash',
    text: '"@babel/core@^7.24.0":\n' +
      '  version "7.24.7"\n' +
      '  resolved "https://registry.yarnpkg.com/@babel/core/-/core-7.24.7.tgz#67a757600497b752931849eaedae8d3b1f172b56"\n' +
      '  integrity sha512-q1b5RD+llBwcF8coknisbsW5odO37Vr+mpQyGcHRFt+AyLI7TmGUXj9+pyedjGBl3Qxn/0Alm8Z4QV5SgC8FrQ==\n',
  },
  {
    id: 'hash-integrity-sha1',
    family: 'hash',
    text: '"integrity": "sha1-vTpiFy+ie2Xu/9vH36Np9iDc0c4="',
  },
  {
    id: 'hash-docker-digest-pull',
    family: 'hash',
    text: '$ docker pull node:20.14.0-bookworm-slim\n' +
      'Digest: sha256:98a52c2a1d3b36d448126a2f59947851c548cec61c801830ea807691b9db8c9d\n' +
      'Status: Downloaded newer image for node:20.14.0-bookworm-slim',
  },
  {
    id: 'hash-checksum-file',
    family: 'hash',
    text: 'c5bfee524160be21448cb02ec44e82e69f3aa6022a44593eebdf0b7853b31dd4  node-v20.14.0-linux-x64.tar.gz\n' +
      '60ad14ac2f1a085bc40c0b22fae09618cf10f54b31c021aece0e26aa4afc270c  node-v20.14.0-linux-arm64.tar.gz\n',
  },
  {
    id: 'hash-md5sum-output',
    family: 'hash',
    text: '$ md5sum dist/*.whl\n' +
      '3071c4b09794b0c575e24d3267285794  dist/acme_client-2.3.1-py3-none-any.whl',
  },
  {
    id: 'hash-go-sum',
    family: 'hash',
    text: 'github.com/spf13/cobra v1.8.0 h1:eMv8OBoJnNIQefNHMJ+t+unLRu9v4VDwkzlvz+dIn3s=\n' +
      'github.com/spf13/cobra v1.8.0/go.mod h1:1lrgJwmK9dmk0dbosrG+5qcuTctHvtTpaHKtswpkClA=\n',
  },
  {
    id: 'hash-cargo-lock-checksum',
    family: 'hash',
    text: '[[package]]\n' +
      'name = "serde"\n' +
      'version = "1.0.203"\n' +
      'source = "registry+https://github.com/rust-lang/crates.io-index"\n' +
      'checksum = "bc04af9e71e87d380355620d587806ff5f7fa69a56db7264077933157492cbc4"\n',
  },
  {
    id: 'hash-sri-script-tag',
    family: 'hash',
    text: '<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js" integrity="sha384-nieN8DDbxM+vfjZ0figQ8LWqaaKxGV78qO0IkhvJpDJyq2VHRNHubLOALLISptZT" crossorigin="anonymous"></script>',
  },
  {
    id: 'hash-etag-headers',
    family: 'hash',
    text: 'HTTP/1.1 304 Not Modified\n' +
      'ETag: "e01edcbb017db4f8e179b4d1cf109a4f00a3ab9c"\n' +
      'Cache-Control: max-age=0, must-revalidate',
  },
  {
    id: 'hash-traceparent',
    family: 'hash',
    text: 'traceparent: 00-2ff143445773f3ade44988fd4b941cd3-1ba2a4d6ec39af37-01',
  },
  {
    id: 'hash-vite-asset-names',
    family: 'hash',
    text: 'dist/assets/index-9ZeYL8P1.js   142.31 kB │ gzip: 45.87 kB\n' +
      'dist/assets/index-oB6mPwVE.css   12.04 kB │ gzip: 3.11 kB',
  },
  {
    id: 'hash-ssh-host-fingerprint',
    family: 'hash',
    text: 'ED25519 key fingerprint is SHA256:QOPzdUVrm6TN3AdJiMqfZfBKRQ+qwKuhIp/08aqZBeo.\n' +
      'This key is not known by any other names.',
  },
  {
    id: 'hash-gpg-key-id',
    family: 'hash',
    text: 'gpg: Signature made Tue 11 Jun 2024 09:12:44 CEST\n' +
      'gpg:                using RSA key D804F6BCAE87AC61E1E23D5C895440DC10A12098\n' +
      'gpg: Good signature from "Acme Release Team <release@acme.io>" [ultimate]',
  },
  {
    id: 'hash-s3-request-ids',
    family: 'hash',
    text: 'x-amz-request-id: BCEC9126F10516D3\n' +
      'x-amz-id-2: 8EY8jBcd3OJMPpn9bpIG1YHKs0dhsLtFbbgitRDnBOtiuSIZWf+PxIjTV2kCTbjORjHveqS2bke/',
  },

  // ---- encoding --------------------------------------------------------------------------------------
  // Base64 of ordinary prose and a tiny data: URI.
  {
    id: 'encoding-base64-prose',
    family: 'encoding',
    text: 'payload=RGVwbG95IGZpbmlzaGVkIGZvciB3ZWIgYW5kIGFwaSBhdCAwOToxMiBVVEM7IG5vIGVycm9ycy4=',
  },
  {
    id: 'encoding-base64-prose-json',
    family: 'encoding',
    text: '{"message": "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZyB3aGlsZSB0aGUgYnVpbGQgcnVucy4=", "encoding": "base64"}',
  },
  {
    id: 'encoding-data-uri-png',
    family: 'encoding',
    text: '<img alt="" width="1" height="1" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=">',
  },

  // ---- path ------------------------------------------------------------------------------------------
  // File paths: deep POSIX paths with hash-like segments, pnpm store paths, Windows paths, Nix
  // store, Docker overlay dirs.
  {
    id: 'path-pnpm-store',
    family: 'path',
    text: '/home/runner/work/acme/acme/node_modules/.pnpm/@esbuild+linux-x64@0.21.5/node_modules/@esbuild/linux-x64/bin/esbuild',
  },
  {
    id: 'path-windows',
    family: 'path',
    text: 'C:\\Users\\dana\\AppData\\Local\\Temp\\vitest-fd209f\\coverage\\lcov-report\\src\\auth\\tokenStore.ts.html',
  },
  {
    id: 'path-pip-wheel-cache',
    family: 'path',
    text: 'Stored in directory: /root/.cache/pip/wheels/8b/3f/1c/636ea7f5d5097e9ea1d726c636e38d06a51d3f1f006f07251f4ca330',
  },
  {
    id: 'path-docker-overlay',
    family: 'path',
    text: '/var/lib/docker/overlay2/23a4e5f26a145c611460cf98c0648c273958ed3ba493b83bfc20f35e6c8409cb/merged/usr/local/lib/node_modules',
  },
  {
    id: 'path-nix-store',
    family: 'path',
    text: '/nix/store/dys8xhici1pa6vzl6s8vjqdfgxx249kg-nodejs-20.14.0/bin/node',
  },
  {
    id: 'path-go-mod-cache',
    family: 'path',
    text: '/home/dana/go/pkg/mod/github.com/aws/aws-sdk-go-v2/credentials@v1.17.18/stscreds/assume_role_provider.go',
  },
  {
    id: 'path-long-source-tree',
    family: 'path',
    text: 'src/features/organization-settings/components/member-permissions/OrganizationMemberPermissionsTable.test.tsx',
  },
  // The product's own paths: prompt files under a session folder with a timestamp and a hash,
  // artifact folders with random-looking names, params files in temporary folders, doctor's lines.
  {
    id: 'path-prompt-hashed-session',
    family: 'path',
    text: 'prompt dry run OK bazinga/prompts/bazinga_1764982800_9f8e7d6c5b4a/developer_CART_2.md: served',
  },
  {
    id: 'path-artifact-random-folder',
    family: 'path',
    text: 'bazinga/artifacts/a8F3kq9ZpL2mN7xR4tV1/research_AUTH_group.md',
  },
  {
    id: 'path-params-temp-folder',
    family: 'path',
    text: 'params: tmp/bazinga-params-Xk3jQ9zP2mW7rT5yU1nB/params_developer_AUTH.json',
  },
  {
    id: 'path-hashed-file-name',
    family: 'path',
    text: 'wrote bazinga/prompts/s1/qa_expert_Zq8Rk2Lp9Xw4Mn7Tb3Vc.md (12,291 tokens)',
  },
  {
    id: 'path-macos-derived-data',
    family: 'path',
    text: '~/Library/Developer/Xcode/DerivedData/Acme-enfojvlvyrvfyfynrvlcsohawwgt/Build/Products/Debug-iphonesimulator/Acme.app',
  },

  // ---- url -------------------------------------------------------------------------------------------
  // URLs without credentials: query strings, @ in paths (npm scopes), git SSH remotes, mailto:,
  // document ids.
  {
    id: 'url-npm-scoped-tarball',
    family: 'url',
    text: 'https://registry.npmjs.org/@types/node/-/node-20.14.2.tgz',
  },
  {
    id: 'url-npm-scoped-package',
    family: 'url',
    text: 'Resolved https://registry.npmjs.org/@types/node and https://www.npmjs.com/package/@tanstack/react-query?activeTab=versions',
  },
  {
    id: 'url-git-ssh-remote',
    family: 'url',
    text: 'git clone git@github.com:acme/platform.git && cd platform',
  },
  {
    id: 'url-ssh-gitlab-port',
    family: 'url',
    text: 'ssh://git@gitlab.acme.io:2222/platform/infra.git',
  },
  {
    id: 'url-mailto',
    family: 'url',
    text: 'Report vulnerabilities to mailto:security@acme.io?subject=Vulnerability%20report',
  },
  {
    id: 'url-query-string',
    family: 'url',
    text: 'https://www.google.com/search?q=token+expired+after+refresh&hl=en&num=20',
  },
  {
    id: 'url-cloudwatch-console',
    family: 'url',
    text: 'https://console.aws.amazon.com/cloudwatch/home?region=us-east-1#logsV2:log-groups/log-group/$252Faws$252Flambda$252Forders-api',
  },
  {
    id: 'url-github-compare',
    family: 'url',
    text: 'https://github.com/acme/platform/compare/v2.3.0...v2.4.0',
  },
  {
    id: 'url-s3-uri',
    family: 'url',
    text: 's3://acme-artifacts/builds/2024-06-11/web-5a67623.tar.gz',
  },
  {
    id: 'url-google-doc',
    family: 'url',
    text: 'Design doc: https://docs.google.com/document/d/1BrEi9ehROMn5MtMOfX54wlwIUaYvlNnK_Vg6n6UtYWE/edit#heading=h.3znysh7',
  },
  {
    id: 'url-actions-run',
    family: 'url',
    text: 'https://github.com/acme/platform/actions/runs/9474216031/job/26102847362#step:5:118',
  },
  {
    id: 'url-oauth-authorize-no-secret',
    family: 'url',
    text: 'https://accounts.google.com/o/oauth2/v2/auth?client_id=84213307762-hq7vj2s9c4k1pl0m3n8r5t6w2x9b4d1e.apps.googleusercontent.com&redirect_uri=https%3A%2F%2Fapp.acme.io%2Fauth%2Fcallback&response_type=code&scope=openid%20email&state=af0ifjsldkj',
  },

  // ---- css -------------------------------------------------------------------------------------------
  // Colours: hex, rgba, hsl.
  {
    id: 'css-colours',
    family: 'css',
    text: '.btn-primary { color: #fff; background-color: #1a2b3c; border-color: rgba(26, 43, 60, 0.85); }',
  },
  {
    id: 'css-tailwind-palette',
    family: 'css',
    text: "brand: { 50: '#f0f7ff', 500: '#3b82f6', 900: '#1e3a8a' },",
  },
  {
    id: 'css-box-shadow',
    family: 'css',
    text: 'box-shadow: 0 1px 2px rgba(0, 0, 0, .05), 0 0 0 3px hsl(217 91% 60% / 0.4);',
  },

  // ---- identifier ------------------------------------------------------------------------------------
  // Long identifiers that contain secret-ish words.
  {
    id: 'identifier-camel-case',
    family: 'identifier',
    text: 'const perms = await getAuthenticatedUserPermissionsForOrganizationMember(orgId, memberId);',
  },
  {
    id: 'identifier-snake-case',
    family: 'identifier',
    text: 'def validate_password_reset_token_expiration_window(user_id: int) -> bool:',
  },
  {
    id: 'identifier-screaming-constant',
    family: 'identifier',
    text: 'MAX_CONCURRENT_TOKEN_REFRESH_REQUESTS_PER_TENANT = 8',
  },
  {
    id: 'identifier-java-class',
    family: 'identifier',
    text: 'at com.acme.auth.credentials.AbstractSingletonCredentialsProviderFactoryBean.resolve(AbstractSingletonCredentialsProviderFactoryBean.java:212)',
  },
  {
    id: 'identifier-test-names',
    family: 'identifier',
    text: '✓ rejects an expired refresh token (12 ms)\n' +
      '✓ test_password_reset_email_contains_single_use_link\n' +
      '✓ AuthorizationHeaderParser > returns null when the header is missing',
  },

  // ---- config ----------------------------------------------------------------------------------------
  // Config keys with non-secret values: URLs, numbers, booleans, names of secrets (not values),
  // header names.
  {
    id: 'config-password-reset-url',
    family: 'config',
    text: 'password_reset_url: https://example.com/reset',
  },
  {
    id: 'config-tokenizer',
    family: 'config',
    text: 'tokenizer: cl100k_base',
  },
  {
    id: 'config-max-tokens',
    family: 'config',
    text: 'model: claude-3-5-sonnet-20240620\nmax_tokens: 4096\ntemperature: 0.2',
  },
  {
    id: 'config-token-count',
    family: 'config',
    text: 'token_count=1532 prompt_tokens=1204 completion_tokens=328',
  },
  {
    id: 'config-password-min-length',
    family: 'config',
    text: 'password_min_length = 12\npassword_require_symbol = true',
  },
  {
    id: 'config-secret-name-reference',
    family: 'config',
    text: 'secret_name: prod-db-credentials\nrecovery_window_in_days: 7',
  },
  {
    id: 'config-api-key-header-name',
    family: 'config',
    text: 'apiKeyHeader: "X-API-Key"',
  },
  {
    id: 'config-auth-true',
    family: 'config',
    text: 'auth: true\nsession_ttl_minutes: 30',
  },
  {
    id: 'config-auth-enabled-false',
    family: 'config',
    text: 'AUTH_ENABLED=false\nPASSWORD_HASH_ROUNDS=12',
  },
  {
    id: 'config-token-type',
    family: 'config',
    text: 'token_type: Bearer\nexpires_in: 3600',
  },
  {
    id: 'config-secret-key-ref-k8s',
    family: 'config',
    text: 'env:\n' +
      '  - name: DB_PASSWORD\n' +
      '    valueFrom:\n' +
      '      secretKeyRef:\n' +
      '        name: prod-db-credentials\n' +
      '        key: password',
  },
  {
    id: 'config-password-file-path',
    family: 'config',
    text: 'POSTGRES_PASSWORD_FILE: /run/secrets/postgres_password',
  },
  {
    id: 'config-ttls',
    family: 'config',
    text: 'jwt_expiry_seconds: 3600\nrefresh_token_ttl: 30d\napi_key_rotation_days: 90',
  },
  {
    id: 'config-password-rules-attr',
    family: 'config',
    text: '<input type="password" id="password" autocomplete="new-password" passwordrules="minlength: 12; required: upper; required: digit;">',
  },
  {
    id: 'config-already-redacted',
    family: 'config',
    text: 'DB_PASSWORD=[REDACTED:password]',
  },

  // ---- env_ref ---------------------------------------------------------------------------------------
  // References to secrets by name, never by value.
  {
    id: 'env-ref-compose-interpolation',
    family: 'env_ref',
    text: 'password: ${DB_PASSWORD}',
  },
  {
    id: 'env-ref-shell-variable',
    family: 'env_ref',
    text: 'gunicorn app:app --env SECRET_KEY="$SECRET_KEY" --workers 4',
  },
  {
    id: 'env-ref-process-env',
    family: 'env_ref',
    text: "const apiKey = process.env.API_KEY ?? '';",
  },
  {
    id: 'env-ref-os-environ',
    family: 'env_ref',
    text: 'secret = os.environ["AWS_SECRET_ACCESS_KEY"]',
  },
  {
    id: 'env-ref-github-actions-secrets',
    family: 'env_ref',
    text: '      - run: npm publish --provenance\n' +
      '        env:\n' +
      '          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}',
  },
  {
    id: 'env-ref-prose-secret-key',
    family: 'env_ref',
    text: 'Set SECRET_KEY in the environment before starting gunicorn; the app refuses to boot without it.',
  },
  {
    id: 'env-ref-spring-placeholder',
    family: 'env_ref',
    text: 'spring.datasource.password=${DB_PASSWORD:}',
  },
  {
    id: 'env-ref-terraform-var',
    family: 'env_ref',
    text: 'password = var.db_master_password',
  },

  // ---- prose -----------------------------------------------------------------------------------------
  // Prose about secrets, tokens and credentials.
  {
    id: 'prose-rotate-key',
    family: 'prose',
    text: 'Action items: rotate the API key and update the password policy before the audit.',
  },
  {
    id: 'prose-bearer-expired',
    family: 'prose',
    text: 'The bearer token expired after 60 minutes, so the retry got a 401 and the job stopped.',
  },
  {
    id: 'prose-authorization-header-missing',
    family: 'prose',
    text: 'Authorization header missing',
  },
  {
    id: 'prose-postmortem',
    family: 'prose',
    text: '## Postmortem\n' +
      '\n' +
      'A deploy script printed its environment to the CI log. No credential was exposed because every secret comes from the vault at runtime, but we added a redaction step anyway.',
  },
  {
    id: 'prose-commit-message',
    family: 'prose',
    text: 'chore: remove hard-coded credentials from fixtures (#482)',
  },
  {
    id: 'prose-long-line',
    family: 'prose',
    text: 'We spent most of Tuesday chasing a flaky integration test that only failed on the shared two-core runner, and it turned out the database container took longer than five seconds to accept connections, so the first query raced the health check; raising the timeout and waiting on pg_isready instead of sleeping fixed it, and the suite has been green for forty consecutive runs since then.',
  },

  // ---- code ------------------------------------------------------------------------------------------
  // Code that handles tokens and passwords through variables, never literals.
  {
    id: 'code-get-token',
    family: 'code',
    text: 'const token = await getToken();\n' +
      'const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });',
  },
  {
    id: 'code-getpass',
    family: 'code',
    text: 'password = getpass.getpass()\nconn = connect(user=user, password=password)',
  },
  {
    id: 'code-python-fstring-bearer',
    family: 'code',
    text: 'session.headers["Authorization"] = f"Bearer {access_token}"',
  },
  {
    id: 'code-go-header',
    family: 'code',
    text: 'req.Header.Set("X-API-Key", cfg.APIKey)',
  },
  {
    id: 'code-fetch-credentials-include',
    family: 'code',
    text: "await fetch('/api/me', { credentials: 'include' });",
  },
  {
    id: 'code-password-field',
    family: 'code',
    text: "const passwordField = form.querySelector('#password');",
  },
  {
    id: 'code-missing-header-throw',
    family: 'code',
    text: "if (!req.headers.authorization) throw new UnauthorizedError('Authorization header missing');",
  },

  // ---- version ---------------------------------------------------------------------------------------
  // Semantic versions, ranges, build metadata.
  {
    id: 'version-package-json-ranges',
    family: 'version',
    text: '"dependencies": { "react": "^18.3.1", "typescript": "~5.4.5", "zod": "3.23.8" },\n' +
      '"engines": { "node": ">=20.11.0 <21" }',
  },
  {
    id: 'version-prerelease-build',
    family: 'version',
    text: 'Released v2.4.0-rc.1+build.20240611.904675f',
  },
  {
    id: 'version-cargo-toml',
    family: 'version',
    text: '[dependencies]\n' +
      'serde = { version = "1.0.203", features = ["derive"] }\n' +
      'tokio = { version = "1.38", features = ["full"] }',
  },

  // ---- time ------------------------------------------------------------------------------------------
  // Timestamps and dates.
  {
    id: 'time-iso-and-http-dates',
    family: 'time',
    text: 'started 2024-06-11T09:12:44.118Z, finished Tue, 11 Jun 2024 09:14:02 GMT (epoch 1718097242)',
  },
  {
    id: 'time-cron-and-duration',
    family: 'time',
    text: 'schedule: "17 3 * * 1-5"  # 03:17 on weekdays, timeout 45m30s',
  },

  // ---- network ---------------------------------------------------------------------------------------
  // Addresses and ports.
  {
    id: 'network-ipv4-ipv6',
    family: 'network',
    text: 'listening on 0.0.0.0:8080 and [::]:8080; upstream 10.42.3.17:5432; link-local fe80::1c2b:3dff:fe4e:5f60%eth0; docs 2001:db8:85a3::8a2e:370:7334',
  },
  {
    id: 'network-ports-table',
    family: 'network',
    text: 'PORT     STATE SERVICE\n' +
      '22/tcp   open  ssh\n' +
      '443/tcp  open  https\n' +
      '5432/tcp open  postgresql',
  },

  // ---- error -----------------------------------------------------------------------------------------
  // Error messages and stack traces.
  {
    id: 'error-jwt-malformed',
    family: 'error',
    text: 'JsonWebTokenError: jwt malformed\n' +
      '    at module.exports [as verify] (/app/node_modules/jsonwebtoken/verify.js:70:17)\n' +
      '    at authenticate (/app/src/middleware/auth.ts:23:9)',
  },
  {
    id: 'error-econnrefused',
    family: 'error',
    text: 'Error: connect ECONNREFUSED 127.0.0.1:5432\n' +
      '    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1605:16)',
  },
  {
    id: 'error-python-traceback',
    family: 'error',
    text: 'Traceback (most recent call last):\n' +
      '  File "/app/acme/auth/tokens.py", line 88, in refresh\n' +
      '    raise TokenExpiredError("refresh token expired")\n' +
      'acme.auth.errors.TokenExpiredError: refresh token expired',
  },
  {
    id: 'error-aws-access-denied',
    family: 'error',
    text: 'An error occurred (AccessDenied) when calling the AssumeRole operation: User: arn:aws:iam::123456789012:user/ci is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::123456789012:role/deploy',
  },
  {
    id: 'error-invalid-credentials-401',
    family: 'error',
    text: 'HTTP/1.1 401 Unauthorized\n' +
      'WWW-Authenticate: Bearer realm="api", error="invalid_token", error_description="The access token expired"',
  },

  // ---- package ---------------------------------------------------------------------------------------
  // Package names, images and cluster resources with hash-like suffixes.
  {
    id: 'package-esbuild-platforms',
    family: 'package',
    text: 'optionalDependencies: @esbuild/linux-x64@0.21.5, @esbuild/darwin-arm64@0.21.5, @esbuild/win32-x64@0.21.5',
  },
  {
    id: 'package-npm-ci-summary',
    family: 'package',
    text: 'added 1324 packages, and audited 1325 packages in 38s\n' +
      '\n' +
      '211 packages are looking for funding\n' +
      '  run `npm fund` for details\n' +
      '\n' +
      'found 0 vulnerabilities',
  },
  {
    id: 'package-docker-image-tags',
    family: 'package',
    text: 'ghcr.io/acme/api:2024.06.11-0a9454a\n' +
      'node:20.14.0-bookworm-slim@sha256:f9572d5c510f90eb0eb138ddbbaa804786d82dffb583e7f80ec6936e53c4ffed',
  },
  {
    id: 'package-k8s-pods',
    family: 'package',
    text: 'NAME                           READY   STATUS    RESTARTS   AGE\n' +
      'web-7d9f8b6c5d-x2k4p           1/1     Running   0          3h12m\n' +
      'worker-5c8b9d7f64-qm7zn        1/1     Running   2          3h12m',
  },
  {
    id: 'package-aws-arns',
    family: 'package',
    text: 'arn:aws:iam::123456789012:role/deploy\n' +
      'arn:aws:s3:::acme-artifacts/builds/*\n' +
      'account 123456789012, region eu-central-1',
  },
  {
    id: 'package-twilio-account-sid',
    family: 'package',
    text: 'Messages for account ACbdadcc28054233c094e3daf96d4cc177 are routed through the Dublin edge.',
  },
  {
    id: 'package-stripe-object-ids',
    family: 'package',
    text: '{"id": "cus_pyTE6i0iTxOBlX", "default_payment_method": "pm_C55BSGus0kLjvuVsCjyl0X57", "livemode": true}',
  },

  // ---- public_key ------------------------------------------------------------------------------------
  // Public keys are not secrets.
  {
    id: 'public-key-ssh-ed25519',
    family: 'public_key',
    text: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIITv8g5sqB/7g6bmxLGaG/8BOO61vyghA9H0YoMXO05M dana@laptop',
  },
  {
    id: 'public-key-pem',
    family: 'public_key',
    text: '-----BEGIN PUBLIC KEY-----\n' +
      'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEkkyv5wI4vZn0Fo3fmA9o24tv4war\n' +
      'qcV1b4xPtlGmy0ApzXpdTZOPBhHT4wwFAnKRIMgulcrxYsDLEHNMXzROxp==\n' +
      '-----END PUBLIC KEY-----',
  },

  // ---- markdown --------------------------------------------------------------------------------------
  // Markdown, HTML entities and non-ASCII text.
  {
    id: 'markdown-table',
    family: 'markdown',
    text: '| Variable | Required | Description |\n' +
      '| --- | --- | --- |\n' +
      '| `DB_PASSWORD` | yes | Password of the app database user |\n' +
      '| `API_TOKEN` | no | Token for the metrics API |',
  },
  {
    id: 'markdown-code-fence-no-secret',
    family: 'markdown',
    text: '```bash\nexport DB_PASSWORD="$(vault kv get -field=password secret/prod/db)"\n```',
  },
  {
    id: 'markdown-html-entities',
    family: 'markdown',
    text: '&lt;token&gt; &amp; &quot;password&quot; &#x2713; &nbsp;— 5&nbsp;€',
  },
  {
    id: 'markdown-unicode',
    family: 'markdown',
    text: 'Schlüssel-Rotation abgeschlossen ✅ — 新しいAPIキーは金庫にあります。Пароль не менялся.',
  },

  // ---- layouts -----------------------------------------------------------------------------------------
  // The layouts the secret cases above cover, holding no secret.
  {
    id: 'layout-yaml-nested-password-policy',
    family: 'layout',
    text: 'password:\n  min_length: 12\n  require_digit: true\ntoken:\n  - header\n  - cookie\n',
  },
  {
    id: 'layout-markdown-table-header',
    family: 'layout',
    text: '| Password | Description |\n|---|---|\n| optional | Set only for local runs |',
  },
  {
    id: 'layout-markdown-table-types',
    family: 'layout',
    text: '| Field | Type |\n| --- | --- |\n| password | string |\n| token | **required** |',
  },
  {
    id: 'layout-xml-policy-elements',
    family: 'layout',
    text: '<passwordPolicy>strict</passwordPolicy>\n<token>${API_TOKEN}</token>\n<maxTokens>4096</maxTokens>',
  },
  {
    id: 'layout-ssh-port-and-prompting-clients',
    family: 'layout',
    text: 'ssh -p 2222 deploy@bastion.acme.io\nmysql -u root -p shop\necho "$PW" | docker login -u acme-ci --password-stdin registry.acme.io',
  },
  {
    id: 'layout-url-with-port-and-email-path',
    family: 'layout',
    text: 'GET http://localhost:3000/users/alice@example.com and https://example.com:8443/@scope/pkg',
  },
  {
    id: 'layout-compiler-output-colons',
    family: 'layout',
    text: 'src/auth.ts:12:5: error TS2322\n12:30:45:00:00 elapsed',
  },
  {
    id: 'layout-code-assigns-variables',
    family: 'layout',
    text: '    password = userInput;\n    self.password = password\n    token = await getToken()',
  },
  {
    id: 'layout-python-and-typescript-password-blocks',
    family: 'layout',
    text: 'def login(user, password):\n    if password:\n        return True\n    return False\n\ninterface Form {\n  password:\n    | string\n    | undefined;\n}',
  },
  {
    id: 'layout-prose-login-password',
    family: 'layout',
    text: 'login failed: password incorrect\nInvalid login or password for user bob\nWARN login attempt password mismatch for bob',
  },
  {
    id: 'layout-docs-tables',
    family: 'layout',
    text: '| Name | Notes |\n| --- | --- |\n| DB_PASSWORD | N/A |\n| password | 64 |\n| password | varchar |\n| DB_PASSWORD | SecureString |\n| Password | bcrypt |\n| DB_PASSWORD | postgres |\n| alice | password | failed |',
  },
  {
    id: 'layout-commands-near-clients',
    family: 'layout',
    text: 'backup mysql data then cp -pr /var/lib/mysql /backup\nAfter docker login we use docker run -p 8080:80 nginx\nsshpass -f ~/.pw ssh -p 2222 user@host\nmysql -uroot -p$(cat /run/secrets/pw) shop',
  },
  {
    id: 'layout-urls-with-variables-and-drives',
    family: 'layout',
    text: 'curl "https://$HOST:$PORT/invite?email=bob@example.com"\nhttp://localhost:port/users/jane@example.org/profile\nfile://C:/Users/bob@corp.com/notes.txt',
  },
  {
    id: 'layout-helm-secret-names',
    family: 'layout',
    text: 'existingSecret: postgres-credentials\ntlsSecret: ingress-tls\nsecretName: shop-db',
  },
  {
    id: 'layout-escaped-yaml-in-json',
    family: 'layout',
    text: '{"config": "password:\\n  min_length: 12\\nauth: true\\nsession_ttl_minutes: 30"}',
  },
  {
    id: 'layout-indented-python-assignments',
    family: 'layout',
    text: 'for line in f:\n    password = line\n    token = pw',
  },
  {
    id: 'layout-review-look-alikes',
    family: 'layout',
    text: 'Change the default password before going live\nThe machine account password is rotated every 30 days\npip install git+ssh://git@gitlab.com:group/project.git@main\nworker:8080:queue:jobs:started\npostgres://USER:PASSWORD@HOST:PORT/DB\npassword: *prod_pw\npassword := pw',
  },
  {
    id: 'layout-docstrings-and-prose-commands',
    family: 'layout',
    text: '    Args:\n        password: The user password.\n        token: Optional token for the API.\nmysql dumps: find /backups -name "*.sql" -print\nDo docker login and then docker compose -p project2 up',
  },
  // ---- what agents write most: test results, counts, coverage, ratios, versions -------------------
  { id: 'results-qa-completion', family: 'results', text: 'PASS: 18/18 tests, coverage 91%' },
  { id: 'results-qa-report', family: 'results', text: 'QA Expert: PASS: 42/42 tests, coverage 87.5% (statements), 0 lint errors\nTests: 42 passed, 0 failed, 42 total\nTime: 3.214 s' },
  { id: 'results-go-test', family: 'results', text: '=== RUN   TestPasswordReset\n--- PASS: TestPasswordReset (0.02s)\n--- PASS: TestTokenRefresh2 (0.11s)\nPASS\nok  \tgithub.com/acme/shop/auth\t0.412s\tcoverage: 91.3% of statements' },
  { id: 'results-pytest', family: 'results', text: 'tests/test_auth.py::test_login PASSED\n==== 18 passed, 2 skipped in 1.20s ====\npass: 18 fail: 0 skip: 2' },
  { id: 'results-cargo-mocha', family: 'results', text: 'test result: ok. 18 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.12s\n  18 passing (120ms)\n  0 failing' },
  { id: 'results-ratios-and-versions', family: 'results', text: 'PASS=18 FAIL=0 | Pass rate 18/18 (100%) | node v20.11.1, vitest@4.1.12, BAZINGA v19 schema | commit 3f9a2c7 | tokens: 1840/8000' },
  { id: 'results-secrets-scan', family: 'results', text: 'passwords checked: 120/120, secrets scan: 0 findings, token count: 4096, max_tokens: 8192' },
  // ---- look-alikes of the spellings above ------------------------------------------------------------
  { id: 'prose-password-without-a-value', family: 'prose', text: 'The password is required. The admin password was rotated yesterday; the new passphrase is in the team vault. The password is at least 12 characters, and pw for prod is in 1Password.' },
  { id: 'prose-password-hash-words', family: 'prose', text: 'The password is stored as SHA256-hashed text; the password was reset at 10:30 and is now valid.' },
  { id: 'code-reads-the-environment', family: 'code', text: "DEBUG = os.environ.get('DEBUG', 'False')\nLOG_LEVEL=${LOG_LEVEL:-info}\nconst region = process.env.AWS_REGION || 'eu-central-1';\nSECRET_KEY = os.environ['DJANGO_SECRET_KEY']" },
  { id: 'kubernetes-env-names-and-values', family: 'layout', text: 'env:\n  - name: LOG_LEVEL\n    value: info\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password' },
  { id: 'base64-of-prose-wrapped', family: 'base64', text: 'motd: |\n  VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZywgdGhlbiBuYXBzIGlu\n  IHRoZSBzdW4gZm9yIGFuIGhvdXIgb3IgdHdvLgo=' },
  { id: 'words-after-a-line-break', family: 'wrapped', text: 'GITLAB_TOKEN=[REDACTED:gitlab_token]\nGITLAB_URL=https://gitlab.com\nowner: acme' },
  { id: 'regex-literal-under-a-key', family: 'code', text: 'export const SECRET_PATTERN = /pass|pwd|secret/i;\nconst TOKEN_RE = /^gh[pousr]_[A-Za-z0-9]{36}$/;' },
  // ---- look-alikes of the wrapped and base64 formats -------------------------------------------------
  { id: 'base64-png-pixel', family: 'base64', text: 'icon: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==' },
  { id: 'base64-of-prose', family: 'base64', text: 'payload: VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZywgdHdpY2UgYSBkYXku' },
  { id: 'identifiers-on-two-lines', family: 'wrapped', text: 'const ghp_lookup_table_name = 1;\nnext_identifier_on_line\n' },
  { id: 'prose-secret-word', family: 'prose', text: 'The secret: it lives in the vault, ask the on-call.' },
  // ---- a test run's result under a password's key, and settings that read like secrets ----------------
  { id: 'results-password-key-ratio-passed', family: 'results', text: 'Password: 12/12 passed' },
  { id: 'results-password-key-counts', family: 'results', text: 'password: 12 passed, 0 failed' },
  { id: 'results-password-key-coverage', family: 'results', text: 'Password: 91% coverage' },
  { id: 'results-pwd-key-ratio-passed', family: 'results', text: 'pwd: 18/18 passed' },
  { id: 'results-password-key-spellings', family: 'results', text: 'QA: password reset flow\nDB_PASSWORD: 42 of 42 tests\nadminPassword=3/3 ok\npassphrase: 12/12 (100%) passed; passwords: 7 passing, 0 failing\nPASSWORD = 5 skipped, 97.5% covered' },
  { id: 'results-password-ok', family: 'results', text: 'Password: OK' },
  { id: 'results-password-result-words', family: 'results', text: 'Password: PASSED\npwd: failed\npassphrase: skipped\nPASSWORD=ok\nadminPassword: Passing (3.2s)\ndb_password: OK — 12 passed, 0 failed' },
  { id: 'results-password-tests-key', family: 'results', text: 'password_tests=12/12' },
  { id: 'results-keys-naming-results', family: 'results', text: 'passwordTests: 18/18\nPASSWORD_RESULTS=12/12 PASS\npassword-checks: 4/4\npassword.coverage=91%\npwd_status: 3/3\ntoken_status: valid' },
  { id: 'env-shell-working-directory', family: 'env', text: 'PWD=/home/dev/shop' },
  { id: 'env-shell-previous-directory', family: 'env', text: 'OLDPWD=/tmp\nPWD=/tmp/build' },
  { id: 'env-shell-directories-spellings', family: 'env', text: '$ env | sort\nHOME=/home/dev\nOLDPWD=/home/dev\nPWD=/home/dev/shop\nSHELL=/bin/bash\n$ declare -p PWD\ndeclare -x PWD="/home/runner/work/shop/shop"\nexport OLDPWD=~/src\nenv:\n  PWD: /home/runner/work/shop/shop\nPWD=C:\\Users\\dev\\shop\nprocess.env.PWD = \'/srv/app\';' },
  { id: 'config-node-options-heap', family: 'config', text: 'NODE_OPTIONS=--max-old-space-size=4096' },
  { id: 'config-runtime-flags', family: 'config', text: 'NODE_OPTIONS=--max-old-space-size=8192\nNODE_OPTIONS=--max_old_space_size=4096 --enable-source-maps\nNODE_OPTIONS=--max-http-header-size=16384\nELECTRON_ARGS=--remote-debugging-port=9222\nCHROME_FLAGS=--window-size=1920=1080\nBUILD_ARGS=--build-arg=NODE_ENV=production\nTF_CLI_ARGS_plan=-var-file=prod/shop=eu' },
  { id: 'config-nsswitch-passwd', family: 'config', text: 'passwd: files systemd' },
  { id: 'config-nsswitch-file', family: 'config', text: '# /etc/nsswitch.conf\npasswd:         files systemd\ngroup:          files systemd\nshadow:         files\ngshadow:        files\n\nhosts:          files mdns4_minimal [NOTFOUND=return] dns myhostname\nnetworks:       files' },
  { id: 'config-nsswitch-sources', family: 'config', text: 'Alpine: passwd: compat\nwith SSSD: passwd: files sss\nwith LDAP: passwd: files ldap [NOTFOUND=return]\nwith winbind: passwd: compat winbind' },
  { id: 'prose-password-version-word', family: 'prose', text: 'the password is v2-compatible now' },
  { id: 'prose-password-version-words', family: 'prose', text: 'The password is v3-only. Since the upgrade the password is 1.2-beta compatible, the password was v1.4.2-rc1 before, and the pw is v10-ready.' },

];
