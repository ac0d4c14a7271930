//! Redaction before anything reaches the audit log: thin calls into
//! [`cordon_policy::secrets`], the one detector every surface shares (what it finds, and
//! how precisely, is described there and in the README).

use serde_json::Value;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = cordon_policy::secrets::REDACTED;

/// A copy of `value` with secrets replaced by [`REDACTED`]: values under secret-looking
/// object keys, and secrets inside every string.
pub fn redact(value: &Value) -> Value {
    cordon_policy::secrets::redact_json(value)
}

/// Redact secrets inside free text (a command line, a URL, a header).
pub fn redact_text(text: &str) -> String {
    cordon_policy::secrets::redact(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    macro_rules! redacts {
        ($name:ident, $input:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(redact_text($input), $want);
            }
        };
    }

    redacts!(
        env_assignment,
        "GITHUB_TOKEN=abc123 gh pr list",
        "GITHUB_TOKEN=[REDACTED] gh pr list"
    );
    redacts!(
        auth_header,
        "curl -H 'Authorization: Bearer abc.def' https://x",
        "curl -H 'Authorization: Bearer [REDACTED]' https://x"
    );
    redacts!(
        bare_bearer,
        "Bearer 9f8e7d6c5b4a39281716a5b4c3d2e1f0",
        "Bearer [REDACTED]"
    );
    redacts!(bearer_prose_untouched, "a Bearer token", "a Bearer token");
    redacts!(
        url_userinfo,
        "git clone https://me:hunter2@example.com/r.git",
        "git clone https://[REDACTED]@example.com/r.git"
    );
    redacts!(
        mysql_dash_p,
        "mysql -uroot -phunter2 db",
        "mysql -uroot -p[REDACTED] db"
    );
    redacts!(mkdir_dash_p_untouched, "mkdir -p src/x", "mkdir -p src/x");
    // Issue 30: spellings whose values reached the audit log in clear.
    redacts!(
        issue_30_tool_password_variables,
        "PGPASSWORD=pg1 MYSQL_PWD=my2 SSHPASS=ss3 MYPASSWORD=mp4 run",
        "PGPASSWORD=[REDACTED] MYSQL_PWD=[REDACTED] SSHPASS=[REDACTED] MYPASSWORD=[REDACTED] run"
    );
    redacts!(
        issue_30_curl_basic_auth,
        "curl -u admin:cu5 https://x",
        "curl -u admin:[REDACTED] https://x"
    );
    redacts!(
        issue_30_cli_password_flags,
        "docker login -p dk6 r.io && sshpass -p sp7 ssh h; redis-cli -a rc8 ping",
        "docker login -p [REDACTED] r.io && sshpass -p [REDACTED] ssh h; redis-cli -a [REDACTED] ping"
    );
    redacts!(
        pwd_alone_untouched,
        "PWD=/home/me OLDPWD=/tmp BYPASS=1 ls",
        "PWD=/home/me OLDPWD=/tmp BYPASS=1 ls"
    );
    redacts!(
        long_flag_eq,
        "tool --password=hunter2 go",
        "tool --password=[REDACTED] go"
    );
    redacts!(
        long_flag_space,
        "tool --token hunter2 go",
        "tool --token [REDACTED] go"
    );
    redacts!(
        known_prefix,
        "echo ghp_0123456789abcdefghijABCDEFGHIJ0123456789",
        "echo [REDACTED]"
    );
    redacts!(
        query_param,
        "https://x/y?a=1&api_key=zzz",
        "https://x/y?a=1&api_key=[REDACTED]"
    );
    redacts!(
        plain_text_untouched,
        "cargo test -p foo",
        "cargo test -p foo"
    );
    redacts!(whitespace_kept, "a  \tb\n", "a  \tb\n");

    #[test]
    fn keys_in_objects() {
        let v = json!({"tool": "bash", "input": {"command": "ls", "env": {"AWS_SECRET_ACCESS_KEY": "x", "PATH": "/bin"}}, "api_key": 42});
        let r = redact(&v);
        assert_eq!(r["input"]["env"]["AWS_SECRET_ACCESS_KEY"], REDACTED);
        assert_eq!(r["input"]["env"]["PATH"], "/bin");
        assert_eq!(r["api_key"], REDACTED);
        assert_eq!(r["input"]["command"], "ls");
    }
}
