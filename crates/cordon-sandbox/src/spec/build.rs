//! [`SandboxBuilder::build`]: validating and canonicalizing what the builder was given,
//! and computing the environment and the mount plan of the finished spec.

use super::slot_home::{check_slot, prepare_slot_mount_points};
use super::{Network, Require, SandboxBuilder, SandboxSpec};
use crate::error::SandboxError;
use crate::plan;
use cordon_policy::settings::SandboxMode;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The most a `.git` file or a `commondir` file (one path each) may hold.
const MAX_GIT_POINTER: u64 = 64 * 1024;

/// The common git directory of `workspace` when its `.git` is a file naming a linked
/// worktree's git directory (`gitdir: …/.git/worktrees/NAME`, with a `commondir` file).
fn worktree_common_dir(workspace: &Path) -> Option<PathBuf> {
    let dotgit = workspace.join(".git");
    if !std::fs::symlink_metadata(&dotgit).ok()?.is_file() {
        return None;
    }
    let text = cordon_fs::read_regular_text(&dotgit, MAX_GIT_POINTER).ok()?;
    let gitdir = Path::new(text.lines().next()?.strip_prefix("gitdir:")?.trim());
    let gitdir = std::fs::canonicalize(workspace.join(gitdir)).ok()?;
    let common = cordon_fs::read_regular_text(&gitdir.join("commondir"), MAX_GIT_POINTER).ok()?;
    let common = std::fs::canonicalize(gitdir.join(common.trim())).ok()?;
    (common.is_dir() && common != Path::new("/")).then_some(common)
}

impl SandboxBuilder {
    /// Validate, canonicalize and compute the mount plan.
    pub fn build(self) -> Result<SandboxSpec, SandboxError> {
        if self.argv.is_empty() || self.argv[0].is_empty() {
            return Err(SandboxError::invalid("no command was given"));
        }
        if self.argv.iter().any(|a| self.withheld.held_by(a)) {
            return Err(SandboxError::invalid(
                "the command's arguments hold the real value of a credential that is kept outside the sandbox; pass its placeholder variable instead (\"$VAR\" expanded inside)",
            ));
        }
        let current = std::env::current_dir()
            .map_err(|e| SandboxError::io("cannot read the current directory", e))?;
        let workspace = canonical_dir(self.workspace.as_deref().unwrap_or(&current), "workspace")?;
        let home = match self
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        {
            Some(h) if h.is_absolute() => std::fs::canonicalize(&h).unwrap_or(h),
            Some(h) => {
                return Err(SandboxError::invalid(format!(
                    "HOME must be an absolute path, not {}",
                    h.display()
                )));
            }
            None => PathBuf::from("/nonexistent"),
        };
        let cwd = match &self.cwd {
            Some(c) => canonical_dir(&workspace.join(c), "working directory")?,
            None => workspace.clone(),
        };
        let mut writable_roots = Vec::new();
        match self.mode {
            SandboxMode::ReadOnly => {}
            SandboxMode::WorkspaceWrite | SandboxMode::FullAccess => {
                if workspace == Path::new("/") && matches!(self.mode, SandboxMode::WorkspaceWrite) {
                    return Err(SandboxError::invalid(
                        "`/` cannot be the workspace of a workspace-write sandbox; choose a project directory",
                    ));
                }
                writable_roots.push(workspace.clone());
                for r in &self.extra_roots {
                    let r = canonical_dir(
                        &absolute_or_home(r, &home, "writable root")?,
                        "writable root",
                    )?;
                    if r == Path::new("/") {
                        return Err(SandboxError::invalid(
                            "`/` cannot be a writable root; use full-access mode instead",
                        ));
                    }
                    writable_roots.push(r);
                }
            }
            // A mode this version does not know gets the narrowest view.
            _ => {}
        }
        // A workspace that is a linked git worktree keeps its commits, refs and index in
        // the main repository's git directory: that directory is a writable root too
        // (copy-on-write like the workspace, so its hooks and config are judged when
        // merged), or `git commit` could not work inside.
        if matches!(self.mode, SandboxMode::WorkspaceWrite)
            && let Some(common) = worktree_common_dir(&workspace)
            && !writable_roots.iter().any(|r| common.starts_with(r))
        {
            writable_roots.push(common);
        }
        // Files made writable alone: the directory of each becomes a root whose layer
        // merges only them, unless an ordinary root already makes the file writable.
        let mut writable_files = Vec::new();
        if matches!(self.mode, SandboxMode::WorkspaceWrite) {
            for f in &self.extra_files {
                let f = canonical_file(&absolute_or_home(f, &home, "writable file")?)?;
                if !writable_roots.iter().any(|r| f.starts_with(r)) {
                    writable_files.push(f);
                }
            }
            writable_files.sort();
            writable_files.dedup();
            // `canonical_file` refused a file whose directory is `/`.
            writable_roots.extend(
                writable_files
                    .iter()
                    .filter_map(|f| f.parent())
                    .map(Path::to_path_buf),
            );
        }
        writable_roots.sort();
        writable_roots.dedup();
        refuse_roots_over_cordons_files(&writable_roots, &self.own_files, &home)?;
        if let Network::Proxy { socket, port } = &self.network {
            if *port == 0 {
                return Err(SandboxError::invalid("the proxy port must not be 0"));
            }
            let meta = std::fs::metadata(socket).map_err(|e| {
                SandboxError::io(
                    format!("cannot use the proxy socket {}", socket.display()),
                    e,
                )
            })?;
            use std::os::unix::fs::FileTypeExt;
            if !meta.file_type().is_socket() {
                return Err(SandboxError::invalid(format!(
                    "the proxy socket {} is not a Unix socket",
                    socket.display()
                )));
            }
        }
        let home_readable: Vec<PathBuf> = match &self.home_readable {
            Some(list) => list.iter().map(|p| expand_home(p, &home)).collect(),
            None => plan::DEFAULT_HOME_READABLE
                .iter()
                .map(|r| home.join(r))
                .collect(),
        };
        // Before the state directory's mask: the relay's copy may be made there
        // (`relay_copy.rs`), which creates the directory.
        let ssh = crate::ssh::inputs(
            self.mode,
            &self.network,
            &home,
            self.ssh_known_hosts.as_deref(),
        )?;
        let masks = self
            .masks
            .iter()
            .map(|p| absolute_or_home(p, &home, "path to mask"))
            .collect::<Result<Vec<PathBuf>, SandboxError>>()?;
        let mut state_masks = Vec::new();
        if let Some(state) = crate::state_mask::state_dir() {
            let mut keep: Vec<&Path> = vec![&workspace, &home];
            keep.extend(writable_roots.iter().map(PathBuf::as_path));
            state_masks = crate::state_mask::state_masks(&state, &keep);
        }
        let unix_sockets = self
            .unix_sockets
            .iter()
            .map(|p| host_socket(p))
            .collect::<Result<Vec<_>, _>>()?;
        if self.limits.processes == Some(0) {
            return Err(SandboxError::invalid(
                "the process limit must be at least 1",
            ));
        }
        let scratch_size = match self.limits.tmp_size {
            Some(n) if n < crate::limits::MIN_TMP_SIZE => {
                return Err(SandboxError::invalid(format!(
                    "the size of /tmp must be at least {} bytes (1 MiB)",
                    crate::limits::MIN_TMP_SIZE
                )));
            }
            Some(n) => n,
            None => crate::limits::default_tmp_size(self.limits.address_space),
        };
        let ssh_agent = match &self.ssh_agent {
            Some(p) => Some(crate::ssh::agent(self.mode, &host_socket(p)?)),
            None => None,
        };
        let mut require = self.require;
        let mut full_tier_for = None;
        if !writable_files.is_empty() {
            // Only a copy-on-write layer can keep the rest of the file's directory off
            // the host; the fallback tier would write that directory directly.
            require = Require::Full;
            full_tier_for = Some("a single file made writable (a copy-on-write root)".into());
        }
        if let Some(slot) = &self.slot {
            check_slot(slot, self.mode, self.home_view, &home)?;
            // The slot's directory holds its lock beside it: neither may be inside what
            // the command can write (or see through a copy-on-write root).
            let holder = slot
                .home
                .parent()
                .and_then(Path::parent)
                .unwrap_or(&slot.home);
            let holder = std::fs::canonicalize(holder).unwrap_or_else(|_| holder.to_path_buf());
            if let Some(r) = writable_roots
                .iter()
                .find(|r| holder.starts_with(r) || r.starts_with(&holder))
            {
                return Err(SandboxError::invalid(format!(
                    "the slot {} lies inside the writable root {} (or holds it): move cordon's state directory out of it (CORDON_STATE_DIR)",
                    slot.home.display(),
                    r.display()
                )));
            }
            // Without mounts a slot could not be HOME: the run would see the real one.
            require = Require::Full;
            full_tier_for = Some("a slot (its directories become HOME through mounts)".into());
        }
        if self.hold {
            // Without the copy-on-write roots the changes land as they are made.
            require = Require::Full;
            full_tier_for =
                Some("holding the run's changes for review (copy-on-write roots)".into());
        }
        let merge_only = match &self.merge_only {
            None => None,
            Some(paths) => {
                // The fallback tier writes the roots directly: no allowlist could hold.
                require = Require::Full;
                full_tier_for =
                    Some("merging back only the declared paths (copy-on-write roots)".into());
                Some(
                    paths
                        .iter()
                        .map(|p| canonical_target(p))
                        .collect::<Result<Vec<_>, _>>()?,
                )
            }
        };
        let inputs = plan::PlanInputs {
            mode: self.mode,
            workspace: &workspace,
            writable_roots: &writable_roots,
            home: &home,
            home_view: self.home_view,
            home_readable: &home_readable,
            read_only_binds: &self.read_only_binds,
            masks: &masks,
            proxy_socket: match &self.network {
                Network::Proxy { socket, .. } => Some(socket.as_path()),
                _ => None,
            },
            unix_sockets: &unix_sockets,
            ca_bundle: match &self.network {
                Network::Proxy { .. } => self.ca_bundle.as_deref(),
                _ => None,
            },
            ssh: ssh.as_ref(),
            ssh_agent: ssh_agent.as_ref().and_then(|(op, _)| op.as_ref()),
            full_network: matches!(self.network, Network::Full),
            scratch_size,
            slot: self.slot.as_ref(),
            state_masks: &state_masks,
            walk_limits: plan::WalkLimits::default(),
        };
        let plan = plan::build(&inputs)?;
        if let Some(slot) = &self.slot {
            prepare_slot_mount_points(slot, &home, &plan)?;
        }
        let mut env = self.env.build(std::env::vars_os(), &home);
        if let Network::Proxy { port, .. } = &self.network {
            env.retain(|(k, _)| !crate::env::is_proxy_name(k));
            let url = OsString::from(format!("http://127.0.0.1:{port}"));
            for name in [
                "HTTP_PROXY",
                "HTTPS_PROXY",
                "ALL_PROXY",
                "http_proxy",
                "https_proxy",
                "all_proxy",
            ] {
                env.push((name.into(), url.clone()));
            }
            // Loopback inside the sandbox is the command's own (a test server): never
            // sent to the proxy, unless the caller allowed the host's loopback there.
            let direct = if self.proxy_loopback {
                OsString::new()
            } else {
                crate::env::NO_PROXY_HOSTS.into()
            };
            env.push(("NO_PROXY".into(), direct.clone()));
            env.push(("no_proxy".into(), direct));
            if self.ca_bundle.is_some() {
                let names = crate::env::CA_BUNDLE_VARS;
                env.retain(|(k, _)| !names.iter().any(|n| k == n));
                for name in names {
                    env.push(((*name).into(), plan::CA_BUNDLE_IN_SANDBOX.into()));
                }
            }
        }
        env.retain(|(_, v)| !self.withheld.held_by(v));
        // An agent is reachable only when the caller passed one.
        env.retain(|(k, _)| k != "SSH_AUTH_SOCK");
        if let Some((_, path)) = ssh_agent {
            env.push(("SSH_AUTH_SOCK".into(), path));
        }
        let ssh_env = ssh.as_ref().map(crate::ssh::env).unwrap_or_default();
        for (name, value) in ssh_env.iter().chain(&self.env_set) {
            env.retain(|(k, _)| k != name);
            env.push((name.clone(), value.clone()));
        }
        Ok(SandboxSpec {
            argv: self.argv,
            cwd,
            workspace,
            writable_roots,
            writable_files,
            mode: self.mode,
            network: self.network,
            home_view: self.home_view,
            home,
            env,
            limits: self.limits,
            timeout: self.timeout,
            require,
            full_tier_for,
            output_limit: self.output_limit,
            plan,
            slot: self.slot,
            merge_only,
            hold: self.hold,
            changes_limit: self.changes_limit,
        })
    }
}

/// `~` and `~/x` are expanded against `home`; relative paths are taken relative to it.
fn expand_home(p: &Path, home: &Path) -> PathBuf {
    match p.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) if p.is_relative() => home.join(p),
        Err(_) => p.to_path_buf(),
    }
}

/// `p` with a leading `~` expanded to `home`; any other relative path is refused.
fn absolute_or_home(p: &Path, home: &Path, what: &str) -> Result<PathBuf, SandboxError> {
    let e = match p.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => p.to_path_buf(),
    };
    if e.is_absolute() {
        Ok(e)
    } else {
        Err(SandboxError::invalid(format!(
            "the {what} {} is relative: give an absolute path or one that starts with ~/",
            p.display()
        )))
    }
}

/// The real path of a host Unix socket the command may use; refused unless it is one.
fn host_socket(p: &Path) -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::FileTypeExt;
    let real = std::fs::canonicalize(p)
        .map_err(|e| SandboxError::io(format!("cannot use the Unix socket {}", p.display()), e))?;
    let meta = std::fs::metadata(&real)
        .map_err(|e| SandboxError::io(format!("cannot use the Unix socket {}", p.display()), e))?;
    if !meta.file_type().is_socket() {
        return Err(SandboxError::invalid(format!(
            "{} is not a Unix socket; only a socket can be made reachable in the sandbox",
            p.display()
        )));
    }
    Ok(real)
}

/// A path to merge back: absolute, its directory canonical (the path itself may not
/// exist yet), so that it compares with the merge's own paths.
fn canonical_target(p: &Path) -> Result<PathBuf, SandboxError> {
    let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
        return Err(SandboxError::invalid(format!(
            "{} cannot be a path to merge back; name a file or directory",
            p.display()
        )));
    };
    if !p.is_absolute() {
        return Err(SandboxError::invalid(format!(
            "the path to merge back {} must be absolute",
            p.display()
        )));
    }
    Ok(canonical_dir(dir, "directory of a path to merge back")?.join(name))
}

/// The real path of a file to make writable alone: an existing regular file (where a
/// symlink leads, if it is one) that is not directly in `/`, whose directory would be
/// the root mounted for it.
fn canonical_file(p: &Path) -> Result<PathBuf, SandboxError> {
    let c = std::fs::canonicalize(p).map_err(|e| {
        SandboxError::io(format!("cannot use the writable file {}", p.display()), e)
    })?;
    let regular = std::fs::symlink_metadata(&c).is_ok_and(|m| m.file_type().is_file());
    if !regular {
        return Err(SandboxError::invalid(format!(
            "the writable file {} is not a regular file",
            p.display()
        )));
    }
    if c.parent().is_none_or(|d| d == Path::new("/")) {
        return Err(SandboxError::invalid(format!(
            "the writable file {} is directly in /, which cannot be mounted for it",
            p.display()
        )));
    }
    Ok(c)
}

fn canonical_dir(p: &Path, what: &str) -> Result<PathBuf, SandboxError> {
    let c = std::fs::canonicalize(p)
        .map_err(|e| SandboxError::io(format!("cannot use the {what} {}", p.display()), e))?;
    if !c.is_dir() {
        return Err(SandboxError::invalid(format!(
            "the {what} {} is not a directory",
            p.display()
        )));
    }
    Ok(c)
}

/// Refuse writable roots from which a run could reach what cordon keeps for itself
/// outside its (masked) state directory: another run's change sets and cache slots in
/// their fallbacks under `/var/tmp` (planted files there are merged or handed out later),
/// and the directory of an own file (`own`: a `--store` or `--audit-file`).
fn refuse_roots_over_cordons_files(
    roots: &[PathBuf],
    own: &[PathBuf],
    home: &Path,
) -> Result<(), SandboxError> {
    let resolved = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // Resolved when it exists; as named when it does not (nothing is there to reach).
    let state = crate::state_mask::state_dir().or_else(cordon_policy::state_dir::state_dir);
    for place in crate::state_places() {
        let place = resolved(&place);
        // In the state directory, the state mask hides it whole.
        if state.as_ref().is_some_and(|s| place.starts_with(s)) {
            continue;
        }
        if let Some(r) = roots
            .iter()
            .find(|r| place.starts_with(r) || r.starts_with(&place))
        {
            return Err(SandboxError::invalid(format!(
                "the writable root {} would let the command write where cordon keeps other runs' change sets and cache slots ({}); choose a narrower writable root",
                r.display(),
                place.display()
            )));
        }
    }
    for file in own {
        let file = absolute_or_home(file, home, "cordon's own file")?;
        let Some(dir) = file.parent() else { continue };
        let dir = resolved(dir);
        if let Some(r) = roots.iter().find(|r| dir.starts_with(r)) {
            return Err(SandboxError::invalid(format!(
                "{} lies in {}, where the command may write: a run could plant files beside it that cordon would read back (a SQLite journal); keep --store and --audit-file outside the workspace and writable roots",
                file.display(),
                r.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use crate::error::SandboxErrorKind;

    #[test]
    fn home_expansion() {
        let h = Path::new("/home/u");
        assert_eq!(expand_home(Path::new("~/.cargo"), h), h.join(".cargo"));
        assert_eq!(expand_home(Path::new(".m2"), h), h.join(".m2"));
        assert_eq!(expand_home(Path::new("/opt/x"), h), Path::new("/opt/x"));
        let root = |p: &str| absolute_or_home(Path::new(p), h, "writable root");
        assert_eq!(root("~/src").unwrap(), h.join("src"));
        assert_eq!(root("~").unwrap(), h);
        assert_eq!(root("/opt/x").unwrap(), Path::new("/opt/x"));
        let e = root("build").unwrap_err();
        assert_eq!(e.kind, SandboxErrorKind::Invalid);
        assert_eq!(
            e.message,
            "the writable root build is relative: give an absolute path or one that starts with ~/"
        );
    }

    #[test]
    fn empty_command_is_refused() {
        let err = SandboxBuilder::new(Vec::<OsString>::new()).build();
        assert!(err.is_err());
    }

    #[test]
    fn cwd_outside_workspace_does_not_widen_roots() {
        let ws = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let spec = SandboxBuilder::new(["true"])
            .workspace(ws.path())
            .cwd(other.path())
            .home(ws.path())
            .build()
            .unwrap();
        let ws_c = std::fs::canonicalize(ws.path()).unwrap();
        assert_eq!(spec.writable_roots, vec![ws_c]);
        assert_eq!(spec.cwd, std::fs::canonicalize(other.path()).unwrap());
    }

    #[test]
    fn a_file_made_writable_alone_brings_its_directory_as_a_root_and_needs_the_full_tier() {
        let t = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(t.path()).unwrap();
        let (ws, other) = (top.join("ws"), top.join("other"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("out.txt"), "x").unwrap();
        std::fs::write(ws.join("in.txt"), "x").unwrap();
        std::os::unix::fs::symlink(other.join("out.txt"), top.join("link")).unwrap();
        // Asking for any tier: the single file is what makes the full tier required.
        let builder = || {
            SandboxBuilder::new(["true"])
                .workspace(&ws)
                .home(&top)
                .require(Require::Any)
        };
        let spec = builder()
            // Where the link leads; and a file the workspace already makes writable.
            .writable_file(top.join("link"))
            .writable_file(ws.join("in.txt"))
            .build()
            .unwrap();
        assert_eq!(spec.writable_files, vec![other.join("out.txt")]);
        assert_eq!(spec.writable_roots, vec![other.clone(), ws.clone()]);
        assert!(matches!(spec.require, Require::Full));
        // A file the workspace already makes writable asks for no tier of its own.
        let spec = builder().writable_file(ws.join("in.txt")).build().unwrap();
        assert!(spec.writable_files.is_empty());
        assert!(matches!(spec.require, Require::Any));
        for bad in [
            other.clone(),
            other.join("missing"),
            PathBuf::from("out.txt"),
        ] {
            let err = builder().writable_file(&bad).build();
            assert!(err.is_err(), "{} must be refused", bad.display());
        }
    }

    #[test]
    fn read_only_mode_has_no_writable_roots() {
        let ws = tempfile::tempdir().unwrap();
        let spec = SandboxBuilder::new(["true"])
            .workspace(ws.path())
            .home(ws.path())
            .mode(SandboxMode::ReadOnly)
            .build()
            .unwrap();
        assert!(spec.writable_roots.is_empty());
    }
}
