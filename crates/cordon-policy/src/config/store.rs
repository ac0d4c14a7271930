//! `[store]`: where cordon's shared state lives (a PostgreSQL database for a fleet).
//!
//! Only the user and managed files may say it. A repository's file that could point the
//! store at a database of its choosing would hand its own leases and remembered rules to
//! every call and collect every pending approval, so a project (or a file named on the
//! command line, which a harness may take from the repository) setting `[store]` is an
//! error, not a note. Nothing here echoes the URL back in an error: a URL someone wrote
//! with a password in it must not reach a terminal or a log.

use super::format::{StoreOnly, StoreTable};
use super::{
    ConfigError, LayerKind, LoadOptions, MANAGED_CONFIG, line_col, read_config, user_file,
};
use crate::facts::FileFacts;
use crate::settings::{StorePassword, StoreSettings};
use std::path::{Path, PathBuf};
use toml::Spanned;

use crate::settings::MAX_MACHINE_NAME as MAX_MACHINE;

/// The `[store]` table of one file, checked.
pub(super) fn store_of(
    kind: LayerKind,
    file: &Path,
    text: &str,
    table: &Spanned<StoreTable>,
    home: &Path,
) -> Result<StoreSettings, ConfigError> {
    let err = |span: std::ops::Range<usize>, message: String| ConfigError {
        file: Some(file.to_path_buf()),
        position: Some(line_col(text, span.start)),
        message,
    };
    if !matches!(kind, LayerKind::User | LayerKind::Managed) {
        return Err(err(
            table.span(),
            format!(
                "`[store]` is refused in a {} config file: only the user and managed files may say where cordon's shared state lives",
                kind.name()
            ),
        ));
    }
    let t = table.get_ref();
    let url = t.url.as_ref().ok_or_else(|| {
        err(
            table.span(),
            "`[store]` needs `url` (postgres://user@host/db)".into(),
        )
    })?;
    check_url(url.get_ref()).map_err(|m| err(url.span(), m))?;
    let at = |(span, message): Refusal| err(span, message);
    let password = password_of(t, home).map_err(at)?;
    let machine = machine_of(t).map_err(at)?;
    let ca_file = t
        .ca_file
        .as_ref()
        .map(|f| absolute("ca_file", f, home))
        .transpose()
        .map_err(at)?;
    let client_cert = client_cert_of(t, ca_file.is_some(), home).map_err(at)?;
    Ok(StoreSettings {
        url: url.get_ref().clone(),
        password,
        machine,
        ca_file,
        client_cert,
        file: file.to_path_buf(),
    })
}

/// A refusal of a `[store]` key: where in the file, and why.
type Refusal = (std::ops::Range<usize>, String);

/// Where the store's password comes from: `password_file` (an absolute path, or one
/// under `~/`) or `password_env` (a variable's name), never both; none for a URL that
/// needs none.
fn password_of(t: &StoreTable, home: &Path) -> Result<Option<StorePassword>, Refusal> {
    match (&t.password_file, &t.password_env) {
        (Some(_), Some(e)) => Err((
            e.span(),
            "`[store]` takes `password_file` or `password_env`, not both".into(),
        )),
        (Some(f), None) => {
            let p = crate::paths::expand_home(f.get_ref(), home);
            if !p.is_absolute() {
                return Err((
                    f.span(),
                    "`[store] password_file` must be an absolute path or start with ~/".into(),
                ));
            }
            Ok(Some(StorePassword::File(p)))
        }
        (None, Some(e)) => {
            let name = e.get_ref();
            let ok = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err((
                    e.span(),
                    "`[store] password_env` must name an environment variable (letters, digits, _)"
                        .into(),
                ));
            }
            Ok(Some(StorePassword::Env(name.clone())))
        }
        (None, None) => Ok(None),
    }
}

/// `machine`, the name this machine's records carry, when given: a valid machine name.
fn machine_of(t: &StoreTable) -> Result<Option<String>, Refusal> {
    let Some(m) = &t.machine else {
        return Ok(None);
    };
    let name = m.get_ref();
    if !crate::settings::valid_machine_name(name) {
        return Err((
            m.span(),
            format!(
                "`[store] machine` must be 1 to {MAX_MACHINE} letters, digits, `.`, `-` or `_`"
            ),
        ));
    }
    Ok(Some(name.clone()))
}

/// The path `[store] key` names: absolute, or under `~/`.
fn absolute(key: &str, f: &Spanned<String>, home: &Path) -> Result<PathBuf, Refusal> {
    let p = crate::paths::expand_home(f.get_ref(), home);
    if p.is_absolute() {
        Ok(p)
    } else {
        Err((
            f.span(),
            format!("`[store] {key}` must be an absolute path or start with ~/"),
        ))
    }
}

/// The client certificate and key presented to the server: `cert_file` and `key_file`
/// together, and only over TLS (`has_ca`: `ca_file` is given).
fn client_cert_of(
    t: &StoreTable,
    has_ca: bool,
    home: &Path,
) -> Result<Option<(PathBuf, PathBuf)>, Refusal> {
    match (&t.cert_file, &t.key_file) {
        (Some(c), Some(k)) => {
            if !has_ca {
                return Err((
                    c.span(),
                    "`[store] cert_file` is presented over TLS, which needs `ca_file`".into(),
                ));
            }
            Ok(Some((
                absolute("cert_file", c, home)?,
                absolute("key_file", k, home)?,
            )))
        }
        (None, None) => Ok(None),
        (Some(f), None) | (None, Some(f)) => Err((
            f.span(),
            "`[store]` takes `cert_file` and `key_file` together".into(),
        )),
    }
}

/// A PostgreSQL URL without a password in it (the message never repeats the URL).
fn check_url(url: &str) -> Result<(), String> {
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        return Err("`[store] url` must be a postgres:// or postgresql:// URL".into());
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // Compared percent-decoded: `pass%77ord=` and `user%3Apw@` are the same password.
    let userinfo_has_password = authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| percent_decoded(userinfo).contains(':'));
    let query_has_password = rest.split_once('?').is_some_and(|(_, q)| {
        q.split('&').any(|kv| {
            percent_decoded(kv.split('=').next().unwrap_or(""))
                .trim()
                .eq_ignore_ascii_case("password")
        })
    });
    if userinfo_has_password || query_has_password {
        return Err(
            "`[store] url` holds a password: put it in a file named by `password_file`, or in the environment variable named by `password_env`"
                .into(),
        );
    }
    Ok(())
}

/// `s` with its `%XX` escapes decoded (an invalid escape is kept as written).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where the shared store is configured, reading only the managed and the user files
/// (the managed file's `[store]` wins). Cheap enough for every one-shot call: it runs
/// before the policy is loaded, because the remembered rules the policy needs come from
/// that store. `Ok(None)`: the local SQLite file. The full load ([`super::load`]) also
/// refuses a `[store]` in any other file.
pub fn store_settings(
    opts: &LoadOptions,
    fs: &dyn FileFacts,
) -> Result<Option<StoreSettings>, ConfigError> {
    if opts.skip_default_files {
        return Ok(None);
    }
    let managed = opts
        .managed
        .clone()
        .unwrap_or_else(|| PathBuf::from(MANAGED_CONFIG));
    for (kind, file) in [
        (LayerKind::Managed, managed),
        (LayerKind::User, user_file(opts, &opts.home)),
    ] {
        let Some(text) = read_config(fs, &file)? else {
            continue;
        };
        let only: StoreOnly = toml::from_str(&text).map_err(|e| ConfigError {
            file: Some(file.clone()),
            position: e.span().map(|s| line_col(&text, s.start)),
            message: e.message().trim().to_string(),
        })?;
        if let Some(t) = &only.store {
            return store_of(kind, &file, &text, t, &opts.home).map(Some);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::super::load;
    use super::*;
    use crate::facts::FakeFs;

    const USER: &str = "/home/u/.config/cordon/policy.toml";
    const PROJECT: &str = "/w/proj/.cordon/policy.toml";

    fn fs() -> FakeFs {
        FakeFs::new().dir("/w/proj").dir("/home/u/.config/cordon")
    }

    fn opts() -> LoadOptions {
        LoadOptions {
            workspace: "/w/proj".into(),
            home: "/home/u".into(),
            managed: Some("/etc/cordon/policy.toml".into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_percent_encoded_password_is_found() {
        for url in [
            "postgresql:///c?host=/run/pg&password=pw",
            "postgresql:///c?host=/run/pg&pass%77ord=pw",
            "postgresql:///c?%70%61ssword=pw",
            "postgres://cordon:pw@localhost/c",
            "postgres://cordon%3Apw@localhost/c",
            "postgres://cordon%3apw@localhost/c",
        ] {
            let e = check_url(url).unwrap_err();
            assert!(
                e.contains("holds a password") && !e.contains("pw@"),
                "{url}: {e}"
            );
        }
        check_url("postgresql:///c?host=%2Frun%2Fpg&user=cordon").unwrap();
    }

    #[test]
    fn the_user_file_says_where_the_store_is() {
        let fs = fs().file_with(
            USER,
            1,
            b"[store]\nurl = \"postgres://cordon@db/cordon\"\npassword_file = \"~/.pgpass-cordon\"\nmachine = \"ci-7\"\nca_file = \"~/.config/cordon/db-ca.pem\"\n",
        );
        let m = load(&opts(), &fs).unwrap();
        let s = m.store.expect("the user's [store]");
        assert_eq!(s.url, "postgres://cordon@db/cordon");
        assert_eq!(
            s.ca_file.as_deref(),
            Some(Path::new("/home/u/.config/cordon/db-ca.pem"))
        );
        assert_eq!(s.machine.as_deref(), Some("ci-7"));
        assert_eq!(
            s.password,
            Some(StorePassword::File("/home/u/.pgpass-cordon".into()))
        );
        // The early reader (before the policy) agrees with the full load.
        assert_eq!(store_settings(&opts(), &fs).unwrap(), Some(s));
        // No [store]: the local file.
        assert_eq!(store_settings(&opts(), &self::fs()).unwrap(), None);
        assert!(load(&opts(), &self::fs()).unwrap().store.is_none());
    }

    #[test]
    fn the_managed_store_wins() {
        let fs = fs()
            .file_with(
                "/etc/cordon/policy.toml",
                1,
                b"[store]\nurl = \"postgresql:///fleet?host=/run/pg\"\npassword_env = \"FLEET_PG\"\n",
            )
            .file_with(USER, 1, b"[store]\nurl = \"postgres://me@mine/db\"\n");
        let s = store_settings(&opts(), &fs).unwrap().unwrap();
        assert_eq!(s.url, "postgresql:///fleet?host=/run/pg");
        assert_eq!(s.password, Some(StorePassword::Env("FLEET_PG".into())));
        assert_eq!(load(&opts(), &fs).unwrap().store, Some(s));
    }

    /// A repository must not choose the database its leases and rules come from: the
    /// table, the inline spelling, the dotted spelling, a trusted workspace's file, and a
    /// file named on the command line are all refused.
    #[test]
    fn a_project_setting_the_store_is_refused() {
        let spellings: [&[u8]; 7] = [
            b"[store]\nurl = \"postgres://evil@attacker/db\"\n",
            b"store = { url = \"postgres://evil@attacker/db\" }\n",
            b"store.url = \"postgres://evil@attacker/db\"\n",
            // Pointing the user's own database's CA at the repository's file: the TLS
            // keys are `[store]` keys, refused with the table.
            b"[store]\nca_file = \"/w/proj/ca.pem\"\n",
            b"store.ca_file = \"/w/proj/ca.pem\"\n",
            b"store = { url = \"postgres://evil@attacker/db\", ca_file = \"/w/proj/ca.pem\" }\n",
            b"store.key_file = \"/w/proj/client.key\"\n",
        ];
        for text in spellings {
            let fs = fs().file_with(PROJECT, 1, text);
            let e = load(&opts(), &fs).unwrap_err();
            assert_eq!(e.file.as_deref(), Some(Path::new(PROJECT)), "{e}");
            assert!(e.message.contains("refused in a project"), "{e}");
            // The early reader never looks at the project's file.
            assert_eq!(store_settings(&opts(), &fs).unwrap(), None);
        }
        let trusted = fs()
            .file_with(USER, 1, b"trusted_workspaces = [\"/w/proj\"]\n")
            .file_with(PROJECT, 1, spellings[0]);
        let e = load(&opts(), &trusted).unwrap_err();
        assert!(e.message.contains("refused in a project"), "{e}");
        let flags = fs().file_with("/w/proj/extra.toml", 1, spellings[1]);
        let mut o = opts();
        o.config_files = vec!["/w/proj/extra.toml".into()];
        let e = load(&o, &flags).unwrap_err();
        assert!(e.message.contains("refused in a flags"), "{e}");
    }

    #[test]
    fn a_password_in_the_url_is_refused_without_repeating_it() {
        for url in [
            "postgres://cordon:hunter2secret@db/cordon",
            "postgresql://db/cordon?sslmode=require&password=hunter2secret",
        ] {
            let text = format!("[store]\nurl = \"{url}\"\n");
            let fs = fs().file_with(USER, 1, text.as_bytes());
            for e in [
                load(&opts(), &fs).unwrap_err(),
                store_settings(&opts(), &fs).unwrap_err(),
            ] {
                assert!(e.message.contains("holds a password"), "{e}");
                assert!(!e.to_string().contains("hunter2"), "{e}");
            }
        }
    }

    #[test]
    fn store_tables_are_checked() {
        for (text, says) in [
            (&b"[store]\nmachine = \"a\"\n"[..], "needs `url`"),
            (b"[store]\nurl = \"mysql://db\"\n", "postgres://"),
            (
                b"[store]\nurl = \"postgres://db/x\"\npassword_file = \"/p\"\npassword_env = \"P\"\n",
                "not both",
            ),
            (
                b"[store]\nurl = \"postgres://db/x\"\npassword_file = \"rel/p\"\n",
                "absolute",
            ),
            (
                b"[store]\nurl = \"postgres://db/x\"\npassword_env = \"A-B\"\n",
                "environment variable",
            ),
            (
                b"[store]\nurl = \"postgres://db/x\"\nmachine = \"a b\"\n",
                "machine",
            ),
            (b"[store]\nurl = \"postgres://db/x\"\nuser = \"u\"\n", "unknown field"),
            (
                b"[store]\nurl = \"postgres://db/x\"\nca_file = \"ca.pem\"\n",
                "`[store] ca_file` must be an absolute path",
            ),
            (
                b"[store]\nurl = \"postgres://db/x\"\nca_file = \"/ca\"\ncert_file = \"/c\"\n",
                "together",
            ),
            (
                b"[store]\nurl = \"postgres://db/x\"\ncert_file = \"/c\"\nkey_file = \"/k\"\n",
                "needs `ca_file`",
            ),
        ] {
            let fs = fs().file_with(USER, 1, text);
            let e = load(&opts(), &fs).unwrap_err();
            assert!(e.message.contains(says), "{e}");
            assert!(e.position.is_some(), "{e}");
        }
    }
}
