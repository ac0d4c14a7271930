//! What cordon predicts a command does: the policy's operations for a `Bash` call.
//!
//! The policy view is used rather than `cordon_shell::analyze` alone because it is what
//! cordon judges, and because it resolves each path (against the sub-command's working
//! directory, `~`, and symlinks in the seed) the way the kernel will. Programs come from
//! the `run`/`exec` operations plus the wrappers the analysis peeled (`timeout`, `env`,
//! `nice`...): the analysis reports those as run, and the policy deliberately does not
//! judge them apart from the program they wrap.

use crate::sandbox::{HOME, PATH, SeedFs, WORKSPACE};
use cordon_policy::net::Host;
use cordon_policy::ops::Target;
use cordon_policy::{FileFacts, LoadOptions, OpKind, Policy, Request};
use cordon_shell::CwdChange;
use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
pub struct Prediction {
    /// Why the analysis cannot see through the command; non-empty makes it opaque.
    pub opaque: Vec<String>,
    /// Read and list operations: each path as written and as resolved.
    pub reads: Vec<PathBuf>,
    pub writes: Vec<PathBuf>,
    pub deletes: Vec<PathBuf>,
    /// Programs the text runs: the name as written, and the file PATH lookup finds
    /// (symlinks resolved), when it finds one.
    pub programs: Vec<(String, Option<PathBuf>)>,
    /// Network destinations: host as normalized, port.
    pub net: Vec<(Host, u16)>,
    /// A network operation whose destination the analysis could not name.
    pub net_any: bool,
    /// The operations, one line each, for the report.
    pub summary: Vec<String>,
}

pub fn policy(fs: &dyn FileFacts) -> Policy {
    let opts = LoadOptions {
        workspace: WORKSPACE.into(),
        home: HOME.into(),
        skip_default_files: true,
        ..Default::default()
    };
    Policy::load(&opts, fs).expect("the soundness policy loads")
}

pub fn predict(policy: &Policy, fs: &SeedFs<'_>, text: &str) -> Prediction {
    let req = serde_json::json!({
        "tool": "Bash",
        "input": {"command": text},
        "cwd": WORKSPACE,
    });
    let req = Request::from_value(req).expect("a Bash request");
    let ops = policy.operations(&req, fs);
    let mut p = Prediction::default();
    let analysis = ops.analysis.clone().unwrap_or_default();
    for op in &ops.ops {
        p.summary
            .push(format!("{} {}", op.kind, op.target.display()));
        if let Some(o) = &op.opaque {
            p.opaque.push(o.why.clone());
        }
        if op.kind == OpKind::Opaque {
            if op.opaque.is_none() {
                p.opaque.push(op.note.clone());
            }
            continue;
        }
        match (&op.kind, &op.target) {
            (OpKind::Read | OpKind::List, Target::Path(f)) => {
                p.reads.push(f.literal.clone());
                p.reads.push(f.resolved.clone());
            }
            (OpKind::Write, Target::Path(f)) => {
                p.writes.push(f.literal.clone());
                p.writes.push(f.resolved.clone());
            }
            (OpKind::Delete, Target::Path(f)) => {
                p.deletes.push(f.literal.clone());
                p.deletes.push(f.resolved.clone());
            }
            (OpKind::Run | OpKind::Exec, Target::Program(name)) => {
                let cwd = op
                    .command
                    .and_then(|i| analysis.commands.get(i))
                    .and_then(|c| command_cwd(&c.cwd));
                p.programs
                    .push((name.clone(), lookup(name, cwd.as_deref(), fs)));
            }
            (
                OpKind::Network,
                Target::Net {
                    dest: Ok((h, port)),
                    ..
                },
            ) => {
                p.net.push((h.clone(), *port));
            }
            (OpKind::Network, _) => p.net_any = true,
            _ => {}
        }
    }
    for c in &analysis.commands {
        let cwd = command_cwd(&c.cwd);
        for w in &c.wrappers {
            p.programs.push((w.clone(), lookup(w, cwd.as_deref(), fs)));
        }
    }
    p
}

/// The working directory of a sub-command, when the text fixes it.
fn command_cwd(c: &CwdChange) -> Option<PathBuf> {
    match c {
        CwdChange::Unchanged => Some(PathBuf::from(WORKSPACE)),
        CwdChange::Relative(r) => {
            let r = cordon_policy::paths::expand_home(r, Path::new(HOME));
            Some(cordon_policy::paths::clean(&Path::new(WORKSPACE).join(r)))
        }
        _ => None,
    }
}

/// Where running `name` leads: a PATH lookup for a bare name, the path against the
/// working directory otherwise; symlinks resolved.
fn lookup(name: &str, cwd: Option<&Path>, fs: &SeedFs<'_>) -> Option<PathBuf> {
    let name = cordon_policy::paths::expand_home(name, Path::new(HOME));
    let candidates: Vec<PathBuf> = if name.components().count() > 1 || name.is_absolute() {
        vec![cordon_policy::paths::clean(&cwd?.join(&name))]
    } else {
        PATH.iter().map(|d| Path::new(d).join(&name)).collect()
    };
    candidates.into_iter().find_map(|c| {
        let (resolved, exists, _, _) = cordon_policy::paths::resolve(&c, fs);
        exists.then_some(resolved)
    })
}

/// A path as the kernel resolves it in the seed (symlinks followed; a missing tail kept).
pub fn resolve(p: &Path, fs: &SeedFs<'_>) -> PathBuf {
    cordon_policy::paths::resolve(p, fs).0
}
