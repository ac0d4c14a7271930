//! Secrets given to common programs on their command line: `curl -u admin:pw`,
//! `docker login -p pw`, `sshpass -p pw`, `redis-cli -a pw`, `mysql -ppw`,
//! `openssl … -passin pass:pw`, `vault login TOKEN` and their kin.
//!
//! The text is split into commands and words by [`cordon_shell::lex`], so quoting is
//! read as a shell reads it (`curl -u 'admin:p w'` hides `p w`) and every range reported
//! maps back onto the input on character boundaries. A program is recognised by the base
//! name of any word of a command (so `sudo docker login -p …` and `time mysql -p…` are
//! read too); its options are then read from the words after it. A value that is a
//! variable or template (`-p "$PW"`) is left alone.

use super::SecretKind;
use super::shape::is_template_or_placeholder;
use cordon_shell::lex::{self, LexWord};
use std::ops::Range;

/// Which part of an option's value is the secret.
#[derive(Clone, Copy)]
enum Part {
    /// All of it.
    All,
    /// What follows the first `sep` (`user:password`); nothing when there is none.
    After(char),
    /// What follows a literal prefix (`pass:password`); nothing without it.
    Prefixed(&'static str),
}

/// How an option carries its value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// In the next word, or glued (`-pVALUE`, `--opt=VALUE`, `/p:VALUE`).
    Both,
    /// Only glued: the next word is something else (`mysql -p DB` prompts).
    Glued,
    /// Only in the next word.
    Next,
}

/// A secret-carrying option.
struct Opt(&'static str, Form, Part);

/// A program whose options carry secrets.
struct Program {
    /// Base names that run it.
    names: &'static [&'static str],
    /// A word that must follow the program for the options to mean a secret
    /// (`docker login`), if any.
    sub: Option<&'static str>,
    /// Whether the first plain word after `sub` is itself the secret (`vault login TOKEN`).
    positional: bool,
    opts: &'static [Opt],
}

use Form::{Both, Glued, Next};
use Part::{After, All, Prefixed};

const BASIC: Part = After(':');

/// The programs and options read.
const PROGRAMS: &[Program] = &[
    Program {
        names: &["curl"],
        sub: None,
        positional: false,
        opts: &[
            Opt("-u", Both, BASIC),
            Opt("--user", Both, BASIC),
            Opt("-U", Both, BASIC),
            Opt("--proxy-user", Both, BASIC),
            Opt("--oauth2-bearer", Both, All),
            Opt("--pass", Both, All),
            Opt("--proxy-pass", Both, All),
        ],
    },
    Program {
        names: &["http", "https", "xh", "xhs"],
        sub: None,
        positional: false,
        opts: &[Opt("-a", Both, BASIC), Opt("--auth", Both, BASIC)],
    },
    Program {
        names: &["lftp"],
        sub: None,
        positional: false,
        opts: &[Opt("-u", Next, After(','))],
    },
    Program {
        names: &["smbclient", "rpcclient", "smbmap", "net"],
        sub: None,
        positional: false,
        opts: &[Opt("-U", Both, After('%')), Opt("--user", Both, After('%'))],
    },
    Program {
        names: &[
            "docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras", "crane", "regctl",
            "cosign",
        ],
        sub: Some("login"),
        positional: false,
        opts: &[Opt("-p", Both, All), Opt("--password", Both, All)],
    },
    Program {
        names: &["az"],
        sub: Some("login"),
        positional: false,
        opts: &[Opt("-p", Both, All), Opt("--password", Both, All)],
    },
    Program {
        names: &["vault", "bao"],
        sub: Some("login"),
        positional: true,
        opts: &[],
    },
    Program {
        names: &["sshpass"],
        sub: None,
        positional: false,
        opts: &[Opt("-p", Both, All)],
    },
    Program {
        names: &["redis-cli", "keydb-cli", "valkey-cli"],
        sub: None,
        positional: false,
        opts: &[Opt("-a", Both, All), Opt("--pass", Both, All)],
    },
    Program {
        names: &[
            "mysql",
            "mysqldump",
            "mysqladmin",
            "mysqlimport",
            "mysqlshow",
            "mysqlcheck",
            "mysqlpump",
            "mariadb",
            "mariadb-dump",
            "mariadb-admin",
            "7z",
            "7za",
            "7zz",
            "rar",
            "unrar",
        ],
        sub: None,
        positional: false,
        opts: &[Opt("-p", Glued, All)],
    },
    Program {
        names: &[
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
        ],
        sub: None,
        positional: false,
        opts: &[Opt("-p", Both, All), Opt("--password", Both, All)],
    },
    Program {
        names: &["sqlcmd", "bcp", "isql"],
        sub: None,
        positional: false,
        opts: &[Opt("-P", Both, All)],
    },
    Program {
        names: &[
            "ldapsearch",
            "ldapadd",
            "ldapmodify",
            "ldapdelete",
            "ldapwhoami",
            "ldappasswd",
        ],
        sub: None,
        positional: false,
        opts: &[Opt("-w", Both, All)],
    },
    Program {
        names: &["mosquitto_pub", "mosquitto_sub"],
        sub: None,
        positional: false,
        opts: &[Opt("-P", Both, All), Opt("--pw", Both, All)],
    },
    Program {
        names: &["zip", "unzip", "zipcloak"],
        sub: None,
        positional: false,
        opts: &[Opt("-P", Both, All), Opt("--password", Both, All)],
    },
    Program {
        names: &["openssl"],
        sub: None,
        positional: false,
        opts: &[
            Opt("-passin", Next, Prefixed("pass:")),
            Opt("-passout", Next, Prefixed("pass:")),
            Opt("-pass", Next, Prefixed("pass:")),
            Opt("-k", Next, All),
        ],
    },
    Program {
        names: &["keytool"],
        sub: None,
        positional: false,
        opts: &[
            Opt("-storepass", Next, All),
            Opt("-keypass", Next, All),
            Opt("-srcstorepass", Next, All),
            Opt("-deststorepass", Next, All),
            Opt("-srckeypass", Next, All),
            Opt("-destkeypass", Next, All),
        ],
    },
    Program {
        names: &["ssh-keygen"],
        sub: None,
        positional: false,
        opts: &[Opt("-N", Next, All), Opt("-P", Next, All)],
    },
    Program {
        names: &["xfreerdp", "wlfreerdp", "sdl-freerdp"],
        sub: None,
        positional: false,
        opts: &[Opt("/p:", Glued, All)],
    },
    Program {
        names: &["twine"],
        sub: None,
        positional: false,
        opts: &[Opt("-p", Both, All)],
    },
];

/// Every secret given to a known program's option in `text`.
pub(crate) fn find(text: &str, lower: &str, out: &mut Vec<(SecretKind, Range<usize>)>) {
    // Every option read starts with `-` or `/`, every positional follows `login`.
    if !(lower.contains('-') || lower.contains("/p:") || lower.contains("login")) {
        return;
    }
    scan(text, 0, out);
}

/// How deep quoted command strings are read (`bash -c "ssh h 'mysql -pX'"` is two).
const MAX_DEPTH: usize = 3;

/// The secrets of the commands of `text`, and of the command strings its words quote
/// (`sh -c '…'`, `ssh host '…'`, `docker exec c sh -c '…'`).
fn scan(text: &str, depth: usize, out: &mut Vec<(SecretKind, Range<usize>)>) {
    for cmd in lex::commands(text) {
        netrc(&cmd, out);
        let programs: Vec<Option<&Program>> = cmd.iter().map(program_of).collect();
        // Each program's options are read up to the next program's word (which reads its
        // own), so every word is read once: `curl curl curl …` stays linear.
        let mut next_program = cmd.len();
        let mut until: Vec<usize> = vec![cmd.len(); cmd.len()];
        for (at, p) in programs.iter().enumerate().rev() {
            until[at] = next_program;
            if p.is_some() {
                next_program = at;
            }
        }
        // The first `htpasswd` reads every word a later one would (its test is on the
        // command's last word and on options anywhere after it), so only it is read.
        if let Some(at) = cmd
            .iter()
            .position(|w| w.text.rsplit('/').next() == Some("htpasswd"))
        {
            htpasswd(&cmd[at + 1..], out);
        }
        for (at, word) in cmd.iter().enumerate() {
            if depth < MAX_DEPTH && word.text.contains([' ', '\t', '\n', ';']) {
                let mut inner = Vec::new();
                scan(&word.text, depth + 1, &mut inner);
                out.extend(inner.into_iter().map(|(k, r)| (k, word.source(r))));
            }
            if let (Some(Some(program)), Some(&end)) = (programs.get(at), until.get(at)) {
                read_options(program, &cmd[at + 1..], end - at - 1, out);
            }
        }
    }
}

/// The program `word` runs, by its base name.
fn program_of(word: &LexWord) -> Option<&'static Program> {
    let base = word.text.rsplit('/').next().unwrap_or(&word.text);
    PROGRAMS.iter().find(|p| p.names.contains(&base))
}

/// The secrets `program` is given in `args`: options among the first `limit` words (a
/// value may be the word after them).
fn read_options(
    program: &Program,
    args: &[LexWord],
    limit: usize,
    out: &mut Vec<(SecretKind, Range<usize>)>,
) {
    let mut from = 0;
    if let Some(sub) = program.sub {
        match args[..limit].iter().position(|w| w.text == sub) {
            Some(i) => from = i + 1,
            None => return,
        }
        if program.positional
            && let Some(w) = args[from..limit]
                .iter()
                .find(|w| !w.text.starts_with('-') && !w.text.contains('='))
        {
            push(w, 0..w.text.len(), out);
        }
    }
    let mut i = from;
    while i < limit {
        let w = &args[i];
        let mut took_next = false;
        for Opt(flag, form, part) in program.opts {
            let value = if w.text == *flag && *form != Glued {
                match args.get(i + 1) {
                    Some(next) => {
                        took_next = true;
                        Some((next, 0))
                    }
                    None => None,
                }
            } else if *form != Next && w.text.len() > flag.len() && w.text.starts_with(flag) {
                let long = flag.starts_with("--");
                let rest = &w.text[flag.len()..];
                if long {
                    rest.starts_with('=').then_some((w, flag.len() + 1))
                } else if (flag.len() == 2 && flag.starts_with('-')) || flag.ends_with(':') {
                    Some((w, flag.len()))
                } else {
                    None
                }
            } else {
                None
            };
            if let Some((word, start)) = value {
                let v = &word.text[start..];
                let offset = match part {
                    All => Some(0),
                    After(sep) => v.find(*sep).map(|p| p + sep.len_utf8()),
                    Prefixed(p) => v.starts_with(p).then_some(p.len()),
                };
                if let Some(offset) = offset {
                    push(word, start + offset..word.text.len(), out);
                }
                break;
            }
        }
        i += if took_next { 2 } else { 1 };
    }
}

/// A `.netrc` line: `machine HOST login USER password PASSWORD`.
fn netrc(words: &[LexWord], out: &mut Vec<(SecretKind, Range<usize>)>) {
    if !matches!(
        words.first().map(|w| w.text.as_str()),
        Some("machine" | "default")
    ) {
        return;
    }
    for pair in words.windows(2) {
        if pair[0].text == "password" {
            push(&pair[1], 0..pair[1].text.len(), out);
        }
    }
}

/// `htpasswd -b[…] [FILE] USER PASSWORD`: the password is the last word.
fn htpasswd(args: &[LexWord], out: &mut Vec<(SecretKind, Range<usize>)>) {
    let batch = args
        .iter()
        .any(|w| w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('b'));
    let positional = args.iter().filter(|w| !w.text.starts_with('-')).count();
    if let (true, true, Some(last)) = (batch, positional >= 2, args.last())
        && !last.text.starts_with('-')
    {
        push(last, 0..last.text.len(), out);
    }
}

fn push(word: &LexWord, range: Range<usize>, out: &mut Vec<(SecretKind, Range<usize>)>) {
    let Some(value) = word.text.get(range.clone()) else {
        return;
    };
    if is_template_or_placeholder(value) || value.contains("$(") {
        return;
    }
    out.push((SecretKind::NamedSecret, word.source(range)));
}

#[cfg(test)]
mod tests {
    use super::super::{find, redact};
    use proptest::prelude::*;

    /// Pieces that sit on the lexer's and the option reader's edges: quotes, escapes,
    /// programs, options, separators, multi-byte characters of every width.
    const PIECES: &[&str] = &[
        "curl", "-u", "a:", "sshpass", "-p", "mysql", "-pX", "docker", "login", "vault", "openssl",
        "-passin", "pass:", "xfreerdp", "/p:", "htpasswd", "-b", "machine", "password", "sh -c ",
        " ", "'", "\"", "\\", ";", "\n", "|", "#", "=", "é", "€", "😀", "\u{200b}", "ü'", "-",
        "--user=", "x", "$P",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Any text is read without a panic and every finding lies on character
        /// boundaries (audit records are arbitrary UTF-8).
        #[test]
        fn any_text_is_read_on_char_boundaries(
            parts in prop::collection::vec(prop::sample::select(PIECES), 0..32),
            tail in ".{0,16}",
        ) {
            let text = parts.concat() + &tail;
            for f in find(&text) {
                prop_assert!(text.is_char_boundary(f.range.start), "{text:?} {f:?}");
                prop_assert!(text.is_char_boundary(f.range.end), "{text:?} {f:?}");
            }
            let _ = redact(&text);
        }
    }

    macro_rules! redacts {
        ($($name:ident: $input:expr => $want:expr;)*) => {
            $(#[test]
            fn $name() {
                assert_eq!(redact($input), $want);
            })*
        };
    }

    redacts! {
        curl_basic: "curl -u admin:hunter2 https://x" => "curl -u admin:[REDACTED] https://x";
        curl_basic_quoted: "curl -u 'admin:p w' https://x" => "curl -u 'admin:[REDACTED]' https://x";
        curl_basic_glued: "curl -uadmin:pw2 https://x" => "curl -uadmin:[REDACTED] https://x";
        curl_user_eq: "curl --user=bob:s3cr3t x" => "curl --user=bob:[REDACTED] x";
        curl_user_only: "curl -u admin https://x" => "curl -u admin https://x";
        curl_basic_var: "curl -u \"$U:$P\" x" => "curl -u \"$U:$P\" x";
        docker_login: "docker login -p Zx81 -u me reg.io" => "docker login -p [REDACTED] -u me reg.io";
        docker_run_port: "docker run -p 8080:80 nginx" => "docker run -p 8080:80 nginx";
        sshpass: "sshpass -p 'pa ss' ssh me@h" => "sshpass -p '[REDACTED]' ssh me@h";
        sshpass_glued: "sudo sshpass -ppw ssh h" => "sudo sshpass -p[REDACTED] ssh h";
        redis: "redis-cli -h r -a hunter2 ping" => "redis-cli -h r -a [REDACTED] ping";
        mysql_glued: "mysql -uroot -phunter2 db" => "mysql -uroot -p[REDACTED] db";
        mysql_prompt: "mysql -u root -p db" => "mysql -u root -p db";
        openssl: "openssl rsa -passin pass:abc123 -in f" => "openssl rsa -passin pass:[REDACTED] -in f";
        openssl_env: "openssl rsa -passin env:PW" => "openssl rsa -passin env:PW";
        vault: "vault login s.abcdef123" => "vault login [REDACTED]";
        xfreerdp: "xfreerdp /u:me /p:Secr3t /v:h" => "xfreerdp /u:me /p:[REDACTED] /v:h";
        mkdir_p: "mkdir -p a/b && cp -a x y" => "mkdir -p a/b && cp -a x y";
        utf8_value: "sshpass -p 'ключ' ssh h" => "sshpass -p '[REDACTED]' ssh h";
        netrc: "machine api.x.org login me password n3trc" => "machine api.x.org login me password [REDACTED]";
        htpasswd: "htpasswd -bc .htpasswd admin hPw1" => "htpasswd -bc .htpasswd admin [REDACTED]";
        htpasswd_prompt: "htpasswd -c .htpasswd admin" => "htpasswd -c .htpasswd admin";
        nested_sh_c: "bash -c 'curl -u a:p1 x; sshpass -p p2 ssh h'" => "bash -c 'curl -u a:[REDACTED] x; sshpass -p [REDACTED] ssh h'";
        nested_ssh: "ssh db \"mysql -pNest3 -e 'select 1'\"" => "ssh db \"mysql -p[REDACTED] -e 'select 1'\"";
        nested_twice: "sh -c \"ssh h 'redis-cli -a Nest4 ping'\"" => "sh -c \"ssh h 'redis-cli -a [REDACTED] ping'\"";
    }
}
