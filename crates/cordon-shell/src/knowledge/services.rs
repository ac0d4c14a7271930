//! Clients of hosted services and secret stores (`gh`, `aws`, `gcloud`, `kubectl`,
//! `gpg`, `pass`, `secret-tool`): the local files they upload or download, the
//! credential files whose contents they print (`gh auth token` reads what
//! `~/.config/gh` holds, so it is a read of it), and that they reach the network.
//! A form not modelled here stays `Unknown`.

use super::{Entry, Invocation, Outcome};
use crate::model::{Class, Word};

pub(super) const ENTRIES: &[Entry] = &[
    Entry {
        names: &["gh"],
        classify: gh,
    },
    Entry {
        names: &["aws"],
        classify: aws,
    },
    Entry {
        names: &["gcloud"],
        classify: gcloud,
    },
    Entry {
        names: &["kubectl"],
        classify: kubectl,
    },
    Entry {
        names: &["gpg", "gpg2"],
        classify: gpg,
    },
    Entry {
        names: &["pass"],
        classify: pass,
    },
    Entry {
        names: &["secret-tool"],
        classify: secret_tool,
    },
];

/// Words that are not options, in order.
fn positional(args: &[Word]) -> Vec<&Word> {
    args.iter().filter(|w| !w.value.starts_with('-')).collect()
}

/// The value of `--name VALUE` or `--name=VALUE` (or a short alias).
fn value_of(args: &[Word], names: &[&str]) -> Option<Word> {
    for (k, w) in args.iter().enumerate() {
        for n in names {
            if w.value == *n {
                return args.get(k + 1).cloned();
            }
            if let Some(v) = w.value.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                return Some(Word {
                    value: v.to_owned(),
                    literal: w.literal,
                });
            }
        }
    }
    None
}

fn has(args: &[Word], names: &[&str]) -> bool {
    args.iter().any(|w| names.contains(&w.value.as_str()))
}

/// `gh`: GitHub's command line.
fn gh(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::mutating();
    let pos = positional(inv.args);
    let verb = |k: usize| pos.get(k).map(|w| w.value.as_str());
    if has(inv.args, &["--version", "--help"]) && pos.is_empty() {
        return Outcome::read_only();
    }
    super::identity::gh(&pos, inv.args, &mut o);
    match (verb(0), verb(1)) {
        (Some("auth"), Some("token")) => {
            o.reads([&Word::literal("~/.config/gh/hosts.yml")]);
            return o;
        }
        (Some("auth"), Some("status")) if has(inv.args, &["-t", "--show-token"]) => {
            o.reads([&Word::literal("~/.config/gh/hosts.yml")]);
            return o;
        }
        (Some("auth"), Some("login" | "logout" | "refresh" | "setup-git")) => {
            o.writes([&Word::literal("~/.config/gh/hosts.yml")]);
        }
        (Some("gist"), Some("create" | "edit")) => {
            let files: Vec<&Word> = pos[2..]
                .iter()
                .copied()
                .filter(|w| w.value != "-")
                .collect();
            o.reads(files);
        }
        (Some("release"), Some("upload" | "create")) => {
            // `gh release upload TAG FILE…`, `gh release create TAG [FILE…]`.
            o.reads(pos.get(3..).unwrap_or(&[]).iter().copied());
        }
        (Some("secret" | "variable"), Some("set")) => {
            o.reads(value_of(inv.args, &["-f", "--env-file"]).as_ref());
        }
        (Some("repo"), Some("clone")) => {
            o.fetched_writes = true;
            let dest = pos.get(3).map(|w| (*w).clone()).or_else(|| {
                pos.get(2).map(|r| Word {
                    value: r.value.rsplit('/').next().unwrap_or("").to_owned(),
                    literal: r.literal,
                })
            });
            o.writes(dest.as_ref());
        }
        (Some("pr"), Some("checkout")) | (Some("repo"), Some("sync")) => {
            o.writes([&Word::literal(".")]);
        }
        (Some("extension" | "ext"), _) | (Some("alias"), Some("set")) => {
            o.exec(
                "gh",
                verb(0).unwrap_or(""),
                "installs or runs an extension or alias",
            );
        }
        (Some("api"), _) => {
            super::identity::gh_api(inv.args, &mut o);
            o.reads(value_of(inv.args, &["--input"]).as_ref());
            for (k, w) in inv.args.iter().enumerate() {
                if matches!(w.value.as_str(), "-F" | "--field")
                    && let Some(f) = inv.args.get(k + 1)
                    && let Some((_, file)) = f.value.split_once("=@")
                {
                    o.reads([&Word {
                        value: file.to_owned(),
                        literal: f.literal,
                    }]);
                }
            }
        }
        (
            Some(
                "pr" | "issue" | "repo" | "run" | "workflow" | "release" | "gist" | "label"
                | "search" | "browse" | "status" | "cache" | "ruleset" | "org" | "project"
                | "codespace" | "secret" | "variable" | "auth" | "config",
            ),
            _,
        ) => {}
        // `gh NAME` may be an extension or an alias.
        _ => o.effects.class = Class::Unknown,
    }
    o.net(&Word::literal("https://api.github.com"));
    o
}

/// `aws`: the AWS command line.
fn aws(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::mutating();
    let pos = positional(inv.args);
    let verb = |k: usize| pos.get(k).map(|w| w.value.as_str());
    match (verb(0), verb(1)) {
        (Some("configure"), Some("export-credentials")) => {
            o.reads([&Word::literal("~/.aws/credentials")]);
            return o;
        }
        (Some("configure"), Some("get")) => {
            o.reads([
                &Word::literal("~/.aws/credentials"),
                &Word::literal("~/.aws/config"),
            ]);
            return o;
        }
        (Some("configure"), Some("list" | "list-profiles")) => return Outcome::read_only(),
        (Some("configure"), _) => {
            o.writes([
                &Word::literal("~/.aws/credentials"),
                &Word::literal("~/.aws/config"),
            ]);
            return o;
        }
        (Some("s3"), Some("cp" | "mv" | "sync")) => {
            // Local operands are read (the source) or written (the destination).
            let paths = &pos[2..];
            if let Some((dest, srcs)) = paths.split_last() {
                for s in srcs.iter().filter(|w| !w.value.starts_with("s3://")) {
                    if s.value != "-" {
                        o.reads([*s]);
                    }
                }
                if !dest.value.starts_with("s3://") && dest.value != "-" {
                    o.writes([*dest]);
                }
            }
        }
        (None, _) => return Outcome::unknown(),
        _ => super::identity::aws(&pos, inv.args, &mut o),
    }
    // `--cli-input-json file://x` and parameters given as `file://` or `fileb://`.
    for w in inv.args {
        for scheme in ["file://", "fileb://"] {
            if let Some(f) = w.value.strip_prefix(scheme) {
                o.reads([&Word {
                    value: f.to_owned(),
                    literal: w.literal,
                }]);
            }
        }
    }
    o.net_unknown();
    o
}

/// `gcloud`: Google Cloud's command line.
fn gcloud(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::mutating();
    let pos = positional(inv.args);
    let words: Vec<&str> = pos.iter().map(|w| w.value.as_str()).collect();
    if words
        .iter()
        .any(|w| matches!(*w, "print-access-token" | "print-identity-token"))
    {
        o.reads([&Word::literal("~/.config/gcloud")]);
        return o;
    }
    if words.is_empty() {
        return Outcome::unknown();
    }
    o.net_unknown();
    o
}

/// `kubectl`: `config view --raw` prints the kubeconfig with its secrets.
fn kubectl(inv: &Invocation<'_>) -> Outcome {
    let pos = positional(inv.args);
    let words: Vec<&str> = pos.iter().map(|w| w.value.as_str()).collect();
    let config = value_of(inv.args, &["--kubeconfig"]).unwrap_or(Word::literal("~/.kube/config"));
    match words.as_slice() {
        ["config", "view", ..] if has(inv.args, &["--raw", "--flatten"]) => {
            let mut o = Outcome::read_only();
            o.reads([&config]);
            o
        }
        [
            "config",
            "view" | "get-contexts" | "current-context" | "get-clusters",
            ..,
        ] => Outcome::read_only(),
        ["config", ..] => {
            let mut o = Outcome::mutating();
            o.writes([&config]);
            o
        }
        [] => Outcome::unknown(),
        _ => {
            let mut o = Outcome::unknown();
            o.net_unknown();
            o
        }
    }
}

/// `gpg --export-secret-keys` prints private keys.
fn gpg(inv: &Invocation<'_>) -> Outcome {
    if has(
        inv.args,
        &[
            "--export-secret-keys",
            "--export-secret-subkeys",
            "--export-ssh-key",
        ],
    ) {
        let mut o = Outcome::read_only();
        o.reads([&Word::literal("~/.gnupg/private-keys-v1.d")]);
        return o;
    }
    Outcome::unknown()
}

/// `pass [show] NAME` prints a password from the store; `pass` alone lists it.
fn pass(inv: &Invocation<'_>) -> Outcome {
    let pos = positional(inv.args);
    let store = "~/.password-store";
    match pos.first().map(|w| w.value.as_str()) {
        None | Some("show" | "ls" | "list" | "find" | "grep" | "otp") => {
            let mut o = Outcome::read_only();
            o.reads([&Word::literal(store)]);
            o
        }
        Some("init" | "insert" | "add" | "edit" | "generate" | "rm" | "mv" | "cp" | "git") => {
            let mut o = Outcome::mutating();
            o.writes([&Word::literal(store)]);
            o
        }
        Some(_) => {
            // `pass NAME` shows NAME.
            let mut o = Outcome::read_only();
            o.reads([&Word::literal(store)]);
            o
        }
    }
}

/// `secret-tool lookup|search …` prints secrets from the desktop keyring.
fn secret_tool(inv: &Invocation<'_>) -> Outcome {
    match positional(inv.args).first().map(|w| w.value.as_str()) {
        Some("lookup" | "search") => {
            let mut o = Outcome::read_only();
            o.reads([&Word::literal("~/.local/share/keyrings")]);
            o
        }
        Some("store" | "clear") => {
            let mut o = Outcome::mutating();
            o.writes([&Word::literal("~/.local/share/keyrings")]);
            o
        }
        _ => Outcome::unknown(),
    }
}
