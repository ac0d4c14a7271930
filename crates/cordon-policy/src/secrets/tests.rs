//! One line per shape: what is found (with its kind and the exact text redacted), and the
//! near-misses of a source tree that must be left alone.

use super::*;
use serde_json::json;

/// `finds!(name, input, kind, secret)`: exactly one finding, of `kind`, covering `secret`.
macro_rules! finds {
    ($name:ident, $input:expr, $kind:ident, $secret:expr) => {
        #[test]
        fn $name() {
            let input: &str = &$input;
            let found = find(input);
            assert_eq!(found.len(), 1, "{input:?}: {found:?}");
            assert_eq!(found[0].kind, SecretKind::$kind, "{input:?}");
            assert_eq!(&input[found[0].range.clone()], $secret, "{input:?}");
        }
    };
}

/// `keeps!(name, input)`: nothing found.
macro_rules! keeps {
    ($name:ident, $input:expr) => {
        #[test]
        fn $name() {
            let input: &str = &$input;
            assert_eq!(find(input), vec![], "{input:?}");
            assert!(matches!(redact(input), Cow::Borrowed(_)));
        }
    };
}

const B62: &str = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz";

fn b62(n: usize) -> String {
    B62.chars().cycle().take(n).collect()
}

finds!(
    pem_rsa,
    "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\ny",
    PrivateKey,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
);
finds!(
    pem_encrypted,
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHzBJ\n-----END ENCRYPTED PRIVATE KEY-----",
    PrivateKey,
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHzBJ\n-----END ENCRYPTED PRIVATE KEY-----"
);
finds!(
    openssh_cut_off,
    "log: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n(truncated)",
    PrivateKey,
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n"
);
finds!(
    gcp_service_account_json,
    r#"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQ==\n-----END PRIVATE KEY-----\n"}"#,
    PrivateKey,
    // The whole string value goes: the key block and the name's value are joined.
    r"-----BEGIN PRIVATE KEY-----\nMIIEvQ==\n-----END PRIVATE KEY-----\n"
);
finds!(
    aws_key_id,
    "id=AKIAIOSFODNN7EXAMPLE,",
    AwsAccessKeyId,
    "AKIAIOSFODNN7EXAMPLE"
);
finds!(
    aws_session_key_id,
    "ASIAY34FZKBOKMUTVV7A",
    AwsAccessKeyId,
    "ASIAY34FZKBOKMUTVV7A"
);
finds!(
    aws_secret_by_context,
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    AwsSecretAccessKey,
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
);
finds!(
    gcp_api_key,
    format!("key: AIza{}", b62(35)),
    GcpApiKey,
    format!("AIza{}", b62(35))
);
finds!(
    azure_connection_string,
    format!(
        "DefaultEndpointsProtocol=https;AccountName=a;AccountKey={}==;EndpointSuffix=core.windows.net",
        b62(86)
    ),
    AzureStorageKey,
    format!("{}==", b62(86))
);
finds!(
    azure_sas,
    "https://a.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5%3D",
    AzureSasSignature,
    "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5%3D"
);
finds!(
    github_pat,
    format!("echo ghp_{}", b62(36)),
    GitHubToken,
    format!("ghp_{}", b62(36))
);
finds!(
    github_oauth,
    format!("gho_{}", b62(36)),
    GitHubToken,
    format!("gho_{}", b62(36))
);
finds!(
    github_app,
    format!("x ghs_{} y", b62(36)),
    GitHubToken,
    format!("ghs_{}", b62(36))
);
finds!(
    github_fine_grained,
    format!("github_pat_11ABCDEFG0_{}", b62(59)),
    GitHubToken,
    format!("github_pat_11ABCDEFG0_{}", b62(59))
);
finds!(
    gitlab,
    format!("glpat-{}.", b62(20)),
    GitLabToken,
    format!("glpat-{}", b62(20))
);
finds!(
    slack_bot,
    "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    SlackToken,
    "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
);
finds!(
    slack_webhook,
    "curl https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX -d x",
    SlackWebhook,
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
);
finds!(
    stripe_live,
    format!("sk_live_{}", b62(24)),
    StripeKey,
    format!("sk_live_{}", b62(24))
);
finds!(
    stripe_restricted,
    format!("rk_live_{}", b62(24)),
    StripeKey,
    format!("rk_live_{}", b62(24))
);
finds!(
    openai_project,
    format!("sk-proj-{}", b62(40)),
    OpenAiKey,
    format!("sk-proj-{}", b62(40))
);
finds!(
    openai_legacy,
    format!("sk-{}", b62(48)),
    OpenAiKey,
    format!("sk-{}", b62(48))
);
finds!(
    anthropic,
    format!("ANTHROPIC_KEY sk-ant-api03-{}-AA", b62(90)),
    AnthropicKey,
    format!("sk-ant-api03-{}-AA", b62(90))
);
finds!(
    npm,
    format!("//registry.npmjs.org/:_authToken=npm_{}", b62(36)),
    NpmToken,
    format!("npm_{}", b62(36))
);
finds!(
    jwt,
    "Cookie-less eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
    Jwt,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
);
finds!(
    url_password,
    "git clone https://me:hunter2@example.com/r.git",
    UrlPassword,
    "me:hunter2"
);
finds!(
    postgres_url,
    "DATABASE=postgres://app:s3cr3t@db:5432/x",
    UrlPassword,
    "app:s3cr3t"
);
finds!(
    authorization_bearer,
    "curl -H 'Authorization: Bearer abc.def' https://x",
    AuthorizationHeader,
    "abc.def"
);
finds!(
    authorization_basic,
    "Authorization: Basic dXNlcjpwYXNz",
    AuthorizationHeader,
    "dXNlcjpwYXNz"
);
finds!(
    bare_bearer,
    "Bearer 9f8e7d6c5b4a39281716a5b4c3d2e1f0",
    AuthorizationHeader,
    "9f8e7d6c5b4a39281716a5b4c3d2e1f0"
);
finds!(
    x_api_key,
    "-H \"X-Api-Key: q8Jd02kLmZ\"",
    AuthorizationHeader,
    "q8Jd02kLmZ"
);
finds!(
    cookie_header,
    "Cookie: sid=31d4d96e407aad42; lang=en\n",
    Cookie,
    "sid=31d4d96e407aad42; lang=en"
);
finds!(
    env_assignment,
    "GITHUB_TOKEN=abc123 gh pr list",
    NamedSecret,
    "abc123"
);
finds!(
    env_key_suffix,
    "export STRIPE_KEY=whatever1",
    NamedSecret,
    "whatever1"
);
finds!(
    json_password,
    r#"{"user": "a", "password": "hunter2"}"#,
    NamedSecret,
    "hunter2"
);
finds!(
    yaml_token,
    "  token: 9aK3mQ7zX2pL5wR8tY1v\n",
    NamedSecret,
    "9aK3mQ7zX2pL5wR8tY1v"
);
finds!(
    code_literal,
    "let api_key = \"Q2x8Rk4mZ9pT1wYb\";",
    NamedSecret,
    "Q2x8Rk4mZ9pT1wYb"
);
finds!(
    flag_eq,
    "tool --password=hunter2 go",
    NamedSecret,
    "hunter2"
);
finds!(
    flag_space,
    "tool --token hunter2 go",
    NamedSecret,
    "hunter2"
);
finds!(
    query_param,
    "https://x/y?a=1&api_key=zzz&b=2",
    NamedSecret,
    "zzz"
);
finds!(
    mysql_dash_p,
    "mysql -uroot -phunter2 db",
    NamedSecret,
    "hunter2"
);

keeps!(
    git_sha,
    "commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: A <a@b>"
);
keeps!(uuid, "id = \"550e8400-e29b-41d4-a716-446655440000\"");
keeps!(
    base64_image,
    format!(
        "let img = \"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg{}AKIA{}==\";",
        b62(40),
        "ABCDEFGHIJKLMNOP"
    )
);
keeps!(
    cargo_lock_checksum,
    "checksum = \"8ac8e5aa55d1ab2d6b5e8a5cbd2e7d5b5f4b4a1d0e6f5c3a9b8e7d6c5b4a3f2e1\""
);
keeps!(
    npm_lock_integrity,
    "\"integrity\": \"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUR9Vz0UgPu9A0nVQ==\""
);
keeps!(mkdir_dash_p, "mkdir -p src/x");
keeps!(
    rust_token_code,
    "let token = lexer.next_token(); let tokens: Vec<Token> = vec![];"
);
keeps!(
    token_type_field,
    "token_type: \"bearer\", access_token: String,"
);
keeps!(password_label, "password: \"Password:\",");
keeps!(key_field, "let key = \"some_setting\"; primary_key = 42;");
keeps!(
    template_values,
    "TOKEN=${{ secrets.TOKEN }} PASSWORD=$PASS api_key: \"{api_key}\""
);
keeps!(
    bearer_prose,
    "The Bearer token is sent in the Authorization header."
);
keeps!(
    auth_header_code,
    "req.header(\"Authorization\", format!(\"Bearer {}\", token))"
);
keeps!(
    authorization_variable,
    "headers[\"Authorization\"] = \"Bearer \" + token"
);
keeps!(
    ssh_url,
    "git@github.com:owner/repo.git ssh://git@example.com/x"
);
keeps!(
    short_prefix_word,
    "risk-assessment disk-utility task-runner ghp_short"
);
keeps!(plain_text, "cargo test -p foo");
keeps!(whitespace_kept, "a  \tb\n");
keeps!(
    hex_digest_named,
    "sha256 = \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\""
);

#[test]
fn redact_replaces_each_secret_with_the_marker() {
    let input = format!("A=1 GITHUB_TOKEN=abc ghp_{} x", b62(36));
    assert_eq!(redact(&input), "A=1 GITHUB_TOKEN=[REDACTED] [REDACTED] x");
}

#[test]
fn findings_are_ordered_and_disjoint() {
    let input = format!(
        "token: ghp_{0} and https://u:p4ss@h/?api_key=ghp_{0}",
        b62(36)
    );
    let found = find(&input);
    assert!(found.len() >= 3, "{found:?}");
    for w in found.windows(2) {
        assert!(w[0].range.end <= w[1].range.start, "{found:?}");
    }
    assert!(!redact(&input).contains("ghp_"));
}

#[test]
fn json_keys_and_strings() {
    let v = json!({"tool": "bash", "input": {"command": "ls", "env": {"AWS_SECRET_ACCESS_KEY": "x", "PATH": "/bin"}}, "api_key": 42, "verbose_auth": false, "note": "GITHUB_TOKEN=abc ok"});
    let r = redact_json(&v);
    assert_eq!(r["input"]["env"]["AWS_SECRET_ACCESS_KEY"], REDACTED);
    assert_eq!(r["input"]["env"]["PATH"], "/bin");
    assert_eq!(r["api_key"], REDACTED);
    assert_eq!(r["verbose_auth"], false);
    assert_eq!(r["note"], "GITHUB_TOKEN=[REDACTED] ok");
    assert_eq!(r["input"]["command"], "ls");
}

#[test]
fn long_inputs_stay_linear() {
    // Many keyword hits in one run, many BEGIN markers without an END, a long line of
    // token characters: each would be quadratic for a naive scanner.
    let cases = [
        "token".repeat(200_000),
        "-----BEGIN PRIVATE KEY-----\n".repeat(40_000),
        format!("ghp_{}", "a".repeat(1_000_000)),
        "password=".repeat(100_000),
    ];
    for input in &cases {
        let t = std::time::Instant::now();
        let _ = find(input);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{} bytes took {:?}",
            input.len(),
            t.elapsed()
        );
    }
}
