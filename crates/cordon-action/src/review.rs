//! The review: every part of a request judged against the policy; the verdict is the most
//! restrictive, and every reason is kept.

use crate::policy::{ActionPolicy, CodeFlags, PathPattern, Redirects};
use crate::request::{Access, ActionRequest, SideEffect};
use cordon_policy::net::Origin;
use cordon_policy::{Decision, FileFacts, FileKind};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One approval a human must give, naming what is actually touched and what follows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    /// What kind of approval (`delete`, `side-effect`, `code`, …).
    pub kind: String,
    /// The actual target: the resolved path, the normalized origin, the exact argv.
    pub target: String,
    /// What happens if it is approved.
    pub consequence: String,
}

/// The containment a run of the request gets, derived from the request itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// Directories that hold the declared create, overwrite and delete paths: the only
    /// writable places.
    pub writable_dirs: Vec<PathBuf>,
    /// The declared paths the run may change (resolved).
    pub writable_paths: Vec<PathBuf>,
    /// `host:port` of every declared origin: the egress allowlist.
    pub network: Vec<String>,
    /// The declared credentials: the only secrets passed in the environment.
    pub env: Vec<String>,
}

/// The result of a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Review {
    /// allow, ask or deny: the most restrictive over every part of the request (the
    /// policy's [`Decision`], the answer a tool call gets too).
    pub verdict: Decision,
    /// Every reason, one sentence each (the denials first).
    pub reasons: Vec<String>,
    /// What a human must approve when the verdict is `ask`.
    pub required_approvals: Vec<Approval>,
    /// The containment a run would get.
    pub profile: Profile,
}

struct Acc {
    verdict: Decision,
    reasons: Vec<(Decision, String)>,
    approvals: Vec<Approval>,
}

impl Acc {
    fn deny(&mut self, why: String) {
        self.verdict = self.verdict.max(Decision::Deny);
        self.reasons.push((Decision::Deny, why));
    }
    fn ask(&mut self, why: String, a: Approval) {
        self.verdict = self.verdict.max(Decision::Ask);
        self.reasons.push((Decision::Ask, why));
        self.approvals.push(a);
    }
    fn note(&mut self, why: String) {
        self.reasons.push((Decision::Allow, why));
    }
}

/// Interpreters and the flags with which they run code given as an argument.
const CODE_FLAGS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python2", &["-c"]),
    ("python3", &["-c"]),
    ("pypy3", &["-c"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("bash", &["-c"]),
    ("sh", &["-c"]),
    ("dash", &["-c"]),
    ("zsh", &["-c"]),
    ("ksh", &["-c"]),
    ("fish", &["-c", "--command"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("Rscript", &["-e"]),
    ("osascript", &["-e"]),
    (
        "pwsh",
        &[
            "-c",
            "-command",
            "-Command",
            "-encodedcommand",
            "-EncodedCommand",
        ],
    ),
    ("awk", &[]),
];

/// Programs whose purpose is to run another program named in their arguments.
const WRAPPERS: &[&str] = &[
    "env", "sudo", "doas", "xargs", "nohup", "timeout", "nice", "setsid", "stdbuf", "strace",
    "chroot", "flock", "watch", "eval", "exec", "command", "builtin", "su", "busybox",
];

/// Review `req` against `policy`, reading file facts (never contents) through `fs`.
pub fn review(req: &ActionRequest, policy: &ActionPolicy, fs: &dyn FileFacts) -> Review {
    let mut acc = Acc {
        verdict: Decision::Allow,
        reasons: Vec::new(),
        approvals: Vec::new(),
    };
    let mut profile = Profile {
        writable_dirs: Vec::new(),
        writable_paths: Vec::new(),
        network: Vec::new(),
        env: req.credentials.clone(),
    };
    review_argv(req, policy, &mut acc);
    let cwd = cordon_policy::paths::clean(&req.cwd);
    if !cwd.starts_with(&policy.workspace) {
        acc.deny(format!(
            "the working directory {} is outside the workspace {}",
            cwd.display(),
            policy.workspace.display()
        ));
    }
    for u in &req.paths {
        review_path(&u.path, u.access, &cwd, policy, fs, &mut acc, &mut profile);
    }
    let origins = review_network(req, policy, &mut acc, &mut profile);
    review_credentials(req, policy, &origins, &mut acc);
    review_side_effect(req, policy, &origins, &mut acc);
    profile.writable_dirs.sort();
    profile.writable_dirs.dedup();
    profile.network.sort();
    profile.network.dedup();
    let mut reasons = acc.reasons;
    reasons.sort_by_key(|(v, _)| std::cmp::Reverse(*v));
    Review {
        verdict: acc.verdict,
        reasons: reasons.into_iter().map(|(_, r)| r).collect(),
        required_approvals: if acc.verdict == Decision::Ask {
            acc.approvals
        } else {
            Vec::new()
        },
        profile,
    }
}

fn review_argv(req: &ActionRequest, policy: &ActionPolicy, acc: &mut Acc) {
    let prog = &req.argv[0];
    let base = prog.rsplit('/').next().unwrap_or(prog);
    let allowed = policy.executables.iter().any(|a| {
        if a.contains('/') {
            a == prog
        } else {
            a == prog && !prog.contains('/')
        }
    });
    if !allowed {
        acc.deny(format!(
            "the program {prog:?} is not among the policy's allowed executables"
        ));
    }
    let shown = quote(&req.argv);
    if WRAPPERS.contains(&base) {
        code_exec(
            policy,
            acc,
            &shown,
            format!(
                "{base} runs another program named in its arguments, which is arbitrary execution"
            ),
        );
        return;
    }
    // `python3.12`, `node18` and the like are the same interpreters.
    let family = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let family = if family.is_empty() { base } else { family };
    for (interp, flags) in CODE_FLAGS {
        if *interp != base && *interp != family {
            continue;
        }
        if *interp == "awk" && req.argv.len() > 1 {
            code_exec(
                policy,
                acc,
                &shown,
                "awk runs the program text given as its argument, which is arbitrary execution"
                    .into(),
            );
            return;
        }
        for arg in &req.argv[1..] {
            if arg == "--" {
                break;
            }
            // `-c`, `-ccode` and combined short flags such as `-Sc` or `-ic`.
            let hit = flags.iter().any(|f| {
                arg == f
                    || (f.len() == 2 && arg.starts_with(f) && !arg.starts_with("--"))
                    || (f.len() == 2
                        && arg.starts_with('-')
                        && !arg.starts_with("--")
                        && arg[1..].contains(&f[1..])
                        && arg.len() <= 6)
                    || (f.starts_with("--") && arg.starts_with(&format!("{f}=")))
            });
            if hit {
                code_exec(
                    policy,
                    acc,
                    &shown,
                    format!(
                        "{base} {arg} runs code given on the command line, which is arbitrary execution"
                    ),
                );
                return;
            }
        }
    }
}

fn code_exec(policy: &ActionPolicy, acc: &mut Acc, shown: &str, why: String) {
    match policy.code_flags {
        CodeFlags::Deny => acc.deny(why),
        CodeFlags::Ask => acc.ask(
            why,
            Approval {
                kind: "code".into(),
                target: shown.to_string(),
                consequence: "runs arbitrary code with the action's permissions".into(),
            },
        ),
    }
}

fn review_path(
    path: &Path,
    access: Access,
    cwd: &Path,
    policy: &ActionPolicy,
    fs: &dyn FileFacts,
    acc: &mut Acc,
    profile: &mut Profile,
) {
    let literal = cordon_policy::paths::clean(&cordon_policy::paths::absolute(path, cwd));
    let (resolved, exists, via_link, problem) = cordon_policy::paths::resolve(&literal, fs);
    let shown = if resolved == literal {
        literal.display().to_string()
    } else {
        format!("{} (resolves to {})", literal.display(), resolved.display())
    };
    if let Some(p) = problem {
        acc.deny(format!("{} cannot be resolved: {p}", literal.display()));
        return;
    }
    if via_link && access != Access::Read {
        acc.deny(format!(
            "{shown} is reached through a symbolic link; a changing action must name the real path"
        ));
        return;
    }
    let patterns: &[PathPattern] = match access {
        Access::Read => &policy.read,
        Access::Create => &policy.create,
        Access::Overwrite => &policy.overwrite,
        Access::Delete => &policy.delete,
    };
    // Both spellings must be permitted: the one written and the one the kernel would use.
    if !(patterns.iter().any(|p| p.matches(&literal))
        && patterns.iter().any(|p| p.matches(&resolved)))
    {
        acc.deny(format!(
            "the policy does not permit {} of {shown}",
            access.as_str()
        ));
        return;
    }
    let kind = fs.metadata(&resolved).map(|m| m.kind);
    if access == Access::Create {
        if exists || kind.is_some() {
            acc.deny(format!(
                "{shown} already exists; declare `overwrite` to replace it"
            ));
            return;
        }
    } else if !exists || kind.is_none() {
        acc.deny(format!(
            "{shown} does not exist; {} needs an existing file",
            access.as_str()
        ));
        return;
    } else if access != Access::Read && kind != Some(FileKind::File) {
        acc.deny(format!(
            "{shown} is not a regular file; only files may be overwritten or deleted"
        ));
        return;
    }
    if let Some(m) = fs.metadata(&resolved)
        && m.nlink > 1
        && access != Access::Read
    {
        acc.deny(format!(
            "{shown} has other hard links; changing it would change them too"
        ));
        return;
    }
    match access {
        Access::Read => acc.note(format!("reads {shown}")),
        Access::Create => acc.note(format!("creates {shown}")),
        Access::Overwrite => acc.note(format!("overwrites {shown}")),
        Access::Delete => acc.ask(
            format!("deletes {shown}"),
            Approval {
                kind: "delete".into(),
                target: resolved.display().to_string(),
                consequence: "the file is removed; cordon keeps no copy".into(),
            },
        ),
    }
    if access != Access::Read {
        if let Some(dir) = resolved.parent() {
            profile.writable_dirs.push(dir.to_path_buf());
        }
        profile.writable_paths.push(resolved);
    }
}

fn review_network(
    req: &ActionRequest,
    policy: &ActionPolicy,
    acc: &mut Acc,
    profile: &mut Profile,
) -> Vec<Origin> {
    let mut out = Vec::new();
    for n in &req.network {
        let o = match Origin::parse_url(&n.url) {
            Ok(o) => o,
            Err(e) => {
                acc.deny(format!(
                    "{:?} is not an acceptable http(s) URL ({e:?})",
                    cordon_policy::terminal::sanitize_for_terminal(&n.url)
                ));
                continue;
            }
        };
        if !policy.origins.contains(&o) {
            acc.deny(format!("the origin {o} is not on the policy's network allowlist (scheme, host and effective port must all match)"));
            continue;
        }
        if n.follow_redirects && policy.redirects == Redirects::None {
            acc.deny(format!(
                "the request to {o} follows redirects, which the policy forbids"
            ));
            continue;
        }
        acc.note(format!("{} {o}", n.method.as_deref().unwrap_or("GET")));
        profile.network.push(format!("{}:{}", o.host, o.port));
        out.push(o);
    }
    out
}

fn review_credentials(
    req: &ActionRequest,
    policy: &ActionPolicy,
    origins: &[Origin],
    acc: &mut Acc,
) {
    for c in &req.credentials {
        let Some(dests) = policy.secrets.get(c) else {
            acc.deny(format!(
                "the credential {c} is not allowed for any destination by the policy"
            ));
            continue;
        };
        // The process can send the credential anywhere it can reach: every reachable
        // origin must be one the credential is allowed for.
        for o in origins {
            if !dests.contains(o) {
                acc.deny(format!("the credential {c} would be available to a process that reaches {o}, which is not one of its allowed destinations"));
            }
        }
    }
}

fn review_side_effect(
    req: &ActionRequest,
    policy: &ActionPolicy,
    origins: &[Origin],
    acc: &mut Acc,
) {
    let effect = req.side_effect;
    let writes_out = req.network.iter().any(|n| {
        n.method
            .as_deref()
            .is_some_and(|m| !matches!(m.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS"))
    });
    if writes_out && !matches!(effect, SideEffect::ExternalWrite | SideEffect::Destructive) {
        acc.deny(
            "the request sends a changing HTTP method but declares no external write".to_string(),
        );
    }
    if matches!(effect, SideEffect::ExternalWrite) && req.idempotency_key.is_none() {
        acc.deny(
            "an external write needs an idempotency_key, so that a retry cannot repeat it"
                .to_string(),
        );
    }
    if policy.approve.iter().any(|a| a == effect.as_str()) {
        let targets: Vec<String> = origins.iter().map(|o| o.to_string()).collect();
        let target = if targets.is_empty() {
            quote(&req.argv)
        } else {
            targets.join(", ")
        };
        let consequence = match effect {
            SideEffect::ExternalWrite => format!(
                "changes data outside this machine (idempotency key {})",
                req.idempotency_key.as_deref().unwrap_or("none")
            ),
            SideEffect::Destructive => "destroys data beyond undoing".to_string(),
            SideEffect::ExternalRead => "reads data from outside this machine".to_string(),
            SideEffect::None => "no effect beyond the declared paths".to_string(),
        };
        acc.ask(
            format!(
                "the policy asks a human to approve {} actions",
                effect.as_str()
            ),
            Approval {
                kind: "side-effect".into(),
                target,
                consequence,
            },
        );
    }
}

fn quote(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .map(|a| cordon_policy::terminal::sanitize_for_terminal(&a))
        .collect::<Vec<_>>()
        .join(" ")
}
