//! Which environment variable names hold a credential: connection strings, passwords,
//! tokens, keys and webhooks by the shapes of their names.

/// Does a variable name hold a credential?
pub(crate) fn is_credential(name: &str) -> bool {
    let u = name.to_ascii_uppercase();
    // Connection strings carry their password (`postgres://user:pw@host/db`), and
    // `MYSQL_PWD`, `PGPASS` are the password.
    const STORES: &[&str] = &[
        "DATABASE",
        "DB",
        "POSTGRES",
        "POSTGRESQL",
        "PG",
        "MYSQL",
        "MARIADB",
        "MONGO",
        "MONGODB",
        "REDIS",
        "AMQP",
        "RABBITMQ",
        "BROKER",
        "CELERY_BROKER",
        "SQL",
        "SQLALCHEMY",
        "ELASTICSEARCH",
        "CLICKHOUSE",
        "SUPABASE_DB",
        "NEO4J",
        "CONNECTION",
    ];
    let stem = u
        .strip_suffix("_URL")
        .or_else(|| u.strip_suffix("_URI"))
        .or_else(|| u.strip_suffix("_DSN"))
        .or_else(|| u.strip_suffix("_CONNECTION_STRING"));
    if u.ends_with("_DSN")
        || u.ends_with("CONNECTION_STRING")
        || stem.is_some_and(|s| {
            STORES.iter().any(|d| {
                s == *d || s.ends_with(&format!("_{d}")) || s.starts_with(&format!("{d}_"))
            })
        })
        || (u.ends_with("PWD") && u != "PWD" && u != "OLDPWD")
        || u.ends_with("_PASS")
        || u == "PGPASS"
    {
        return true;
    }
    // Token shapes: a webhook URL is its own credential (anyone holding it posts as the
    // owner), a `*_KEY` / `*_PW` / passphrase / bearer value is a key or a password.
    if u.contains("WEBHOOK")
        || matches!(u.as_str(), "DSN" | "BEARER" | "PASSPHRASE" | "KEY" | "PW")
        || u.contains("PASSPHRASE")
        || u.ends_with("_KEY")
        || u.ends_with("_PW")
        || u.ends_with("_BEARER")
    {
        return true;
    }
    const PARTS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
        "AUTH",
        "SESSION_KEY",
        "COOKIE",
    ];
    // A variable naming the file that holds a credential (`AWS_SHARED_CREDENTIALS_FILE`,
    // `SOPS_AGE_KEY_FILE`): what a script reads through it is the credential.
    // (A key's path alone, `SSH_KEY_PATH`, names a file that is not only a secret: its
    // value sent away is a path, not a key.)
    if let Some(stem) = u.strip_suffix("_FILE").or_else(|| u.strip_suffix("_PATH")) {
        return [
            "CREDENTIAL",
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "PRIVATE_KEY",
        ]
        .iter()
        .any(|p| stem.contains(p));
    }
    if ["_DIR", "_URL", "_ENDPOINT"].iter().any(|s| u.ends_with(s)) {
        return false;
    }
    PARTS.iter().any(|p| u.contains(p))
        || (u.starts_with("AWS_")
            && !matches!(
                u.as_str(),
                "AWS_REGION" | "AWS_DEFAULT_REGION" | "AWS_PROFILE"
            ))
}

#[cfg(test)]
mod tests {
    use super::is_credential;

    #[test]
    fn a_variable_naming_a_credential_s_file_is_a_credential() {
        for n in [
            "AWS_SHARED_CREDENTIALS_FILE",
            "NPM_TOKEN_FILE",
            "DB_PASSWORD_FILE",
        ] {
            assert!(is_credential(n), "{n}");
        }
        for n in [
            "CONFIG_FILE",
            "LOG_PATH",
            "KEY_FILE",
            "SSH_KEY_PATH",
            "CERT_DIR",
            "API_ENDPOINT",
            "AWS_REGION",
        ] {
            assert!(!is_credential(n), "{n}");
        }
    }
}
