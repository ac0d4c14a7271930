//! Observed against predicted: what a command did that cordon's analysis did not say.
//!
//! The comparison is per command text, over the union of its sub-commands: the policy
//! judges a call by all of its operations together, so an operation is covered when any
//! prediction for the text covers it. The rules, in the order they are applied:
//!
//! 1. **Opaque texts.** When the analysis says it cannot see through part of the text
//!    (an opaque operation: a runtime value, an unknown program, an argument that runs
//!    code, text that does not parse), the policy asks about the whole call, so
//!    everything the text does is covered. Such texts are counted apart, and what they did
//!    beyond the prediction is counted but not listed.
//! 2. **Benign operations** that no analysis of shell text should be expected to name
//!    (the lists below, each entry with its reason): the dynamic loader and libraries,
//!    locale and time-zone data, user and host lookups, the process's own `/proc`,
//!    data-less devices, the command's own scratch files in its private `/tmp`. An
//!    attempt to create what already exists (`EEXIST`: `mkdir -p` trying each parent)
//!    changed nothing.
//! 3. **The command's own files.** Reading back a file the command itself wrote earlier
//!    discloses nothing of the user's, and a delete of a path that did not exist before
//!    the command removed nothing of the user's: the creation is the operation checked.
//! 4. **Renames.** A file created and then renamed onto another path (the atomic-replace
//!    pattern of `sed -i`, `git`, editors) is a write of the final path; a name a file
//!    passes through on its way to a predicted delete (`shred -u`) is part of the delete.
//! 5. **Coverage by path.** Both the path as written (lexically cleaned) and the path
//!    with symlinks resolved are compared, on both sides.
//!    - A predicted read or list of a path covers reads and listings of it and of
//!      everything beneath it (`grep -r TODO src` reads `src/**`, `find .` lists the tree).
//!    - A predicted delete covers deletes beneath it, and the listings a recursive delete
//!      needs.
//!    - A predicted write covers writes beneath it (`tar -x` into `.`, `cp -r a b` into
//!      `b/**`); the creation of the missing directories above it (`mkdir -p a/b`); a
//!      delete of exactly that path (replacing a file by unlinking it first, as `ln -sf`
//!      does) and deletes beneath it of files that exist again at the end (`tar -x` over
//!      existing files); reading that path itself (`sed -i`, `zip` updating an archive,
//!      `sort -o` onto its input); and reading beneath it what did not exist before the
//!      command (what the command made there, or looked for before making it: `git init
//!      DIR` probing `DIR/.git/config`). It does not cover reading what was already there.
//! 6. **Programs.** An exec is covered when a predicted program (or a wrapper the analysis
//!    peeled) has the same name or resolves to the same file.
//! 7. **Network.** A connection is covered by a predicted destination with the same
//!    address and port (`localhost` standing for the loopback addresses), by a predicted
//!    destination the analysis could not name, or, for a DNS query to the configured
//!    resolver, by any predicted destination that is a name.
//!
//! Whatever is left is a violation, classed by what it did and where: `exec`,
//! `read-inside`/`read-outside` (reads and listings), `write-…`, `delete-…` (inside or
//! outside the workspace), `network`.

use crate::predict::{Prediction, resolve};
use crate::sandbox::{HOME, SeedFs, WORKSPACE};
use crate::trace::{Act, Event, Observation, Peer};
use cordon_policy::net::Host;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Reads every program makes, whatever its arguments: nothing here is the user's data.
/// A path is benign when it, or the path it resolves to, is one of these or beneath one.
const BENIGN_READS: &[(&str, &str)] = &[
    (
        "/usr",
        "the installed system: programs, the libraries the dynamic loader maps, and their \
         read-only data (locale catalogues, terminfo, zoneinfo, gconv modules, libmagic's \
         database, interpreters' standard libraries, git's templates); nothing private \
         lives there",
    ),
    // Merged-/usr links; their targets are under /usr, but a failed lookup is not
    // resolved by the kernel, so the literal path is listed as well.
    (
        "/lib",
        "the dynamic loader's library directories (a link into /usr)",
    ),
    (
        "/lib64",
        "the dynamic loader's library directories (a link into /usr)",
    ),
    ("/bin", "program directories (a link into /usr)"),
    ("/sbin", "program directories (a link into /usr)"),
    ("/etc/ld.so.cache", "the dynamic loader's library index"),
    (
        "/etc/ld.so.preload",
        "the dynamic loader checks for preloads on every start",
    ),
    ("/etc/ld.so.conf", "the dynamic loader's configuration"),
    ("/etc/ld.so.conf.d", "the dynamic loader's configuration"),
    (
        "/etc/locale.alias",
        "glibc's locale name aliases (setlocale)",
    ),
    ("/etc/locale.conf", "the system locale"),
    ("/etc/default/locale", "the system locale"),
    (
        "/etc/localtime",
        "the time zone, for any program that prints a time",
    ),
    ("/etc/timezone", "the time zone name"),
    (
        "/etc/nsswitch.conf",
        "NSS: how users, groups and hosts are looked up (`ls -l` printing an owner, `id`, \
         `whoami`, name resolution)",
    ),
    (
        "/etc/passwd",
        "NSS user lookups (owner names, the home directory of the user)",
    ),
    ("/etc/group", "NSS group lookups"),
    ("/etc/host.conf", "the resolver's configuration"),
    ("/etc/hosts", "static host names, read by every name lookup"),
    (
        "/etc/resolv.conf",
        "the resolver's configuration, read by every name lookup",
    ),
    ("/etc/gai.conf", "getaddrinfo's address ordering"),
    (
        "/etc/netsvc.conf",
        "c-ares' resolver configuration (node), as /etc/host.conf",
    ),
    (
        "/etc/svc.conf",
        "c-ares' resolver configuration (node), as /etc/host.conf",
    ),
    ("/etc/services", "service names to port numbers"),
    ("/etc/protocols", "protocol names to numbers"),
    ("/etc/terminfo", "terminal descriptions"),
    ("/etc/inputrc", "readline's system configuration"),
    (
        "/etc/ssl",
        "public CA certificates and OpenSSL's configuration, for TLS clients",
    ),
    ("/etc/ca-certificates", "public CA certificates"),
    (
        "/etc/alternatives",
        "Debian's links choosing a program (awk → mawk)",
    ),
    ("/etc/magic", "libmagic's local database"),
    ("/etc/magic.mgc", "libmagic's local database, compiled"),
    ("/etc/magic.mime", "libmagic's local database"),
    ("/etc/mime.types", "file type names"),
    (
        "/proc/self",
        "the process's own state (maps, status, fds, mounts)",
    ),
    ("/proc/thread-self", "the thread's own state"),
    (
        "/proc/filesystems",
        "which file systems the kernel supports (libselinux, `ls`)",
    ),
    (
        "/proc/meminfo",
        "system memory size (sort's buffer size, runtimes)",
    ),
    ("/proc/cpuinfo", "CPU features and count"),
    ("/proc/stat", "system statistics (CPU count)"),
    ("/proc/uptime", "time since boot (`uptime`, `ps`)"),
    ("/proc/loadavg", "the load average (`uptime`, `w`)"),
    (
        "/var/run/utmp",
        "the login records every local user can read (`who`, `w`, `uptime`)",
    ),
    (
        "/run/utmp",
        "the login records every local user can read (`who`, `w`, `uptime`)",
    ),
    (
        "/proc/sys/kernel",
        "kernel parameters (ngroups_max, osrelease, pid_max)",
    ),
    (
        "/proc/sys/vm/overcommit_memory",
        "the memory overcommit setting (allocators)",
    ),
    (
        "/sys/devices/system/cpu",
        "the CPUs that are online (glibc, runtimes)",
    ),
    (
        "/sys/fs/cgroup",
        "the process's cgroup limits (runtimes size thread pools by it)",
    ),
    ("/dev/null", "a device without data"),
    ("/dev/zero", "a device without data"),
    ("/dev/full", "a device without data"),
    ("/dev/urandom", "random bytes"),
    ("/dev/random", "random bytes"),
    (
        "/dev/tty",
        "the controlling terminal (a shell probes it at start; there is none)",
    ),
    ("/dev/stdin", "the process's own standard streams"),
    ("/dev/stdout", "the process's own standard streams"),
    ("/dev/stderr", "the process's own standard streams"),
    (
        "/dev/fd",
        "the process's own open files (process substitution passes /dev/fd/63)",
    ),
];

/// Writes that change nothing: devices without data and the process's own streams.
const BENIGN_WRITES: &[(&str, &str)] = &[
    ("/dev/null", "a device that discards what is written"),
    ("/dev/zero", "a device without data"),
    ("/dev/full", "a device without data"),
    (
        "/dev/tty",
        "the controlling terminal (a shell probes it at start; there is none)",
    ),
    ("/dev/stdout", "the process's own standard streams"),
    ("/dev/stderr", "the process's own standard streams"),
    (
        "/dev/fd",
        "the process's own open files (process substitution)",
    ),
    ("/proc/self/fd", "the process's own open files"),
];

/// Directories private to the command's run, whose files nobody else sees: a file created
/// there and gone by the end of the command is scratch space (sort's spill files, bash's
/// here-document files, `mktemp` use that cleans up). A file left behind is a write.
const SCRATCH: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// Unix sockets programs try on their own: NSS asks the name-service cache daemon
/// before reading /etc/passwd or /etc/hosts (there is none here; the attempt is all).
const BENIGN_UNIX: &[&str] = &["/var/run/nscd/socket", "/run/nscd/socket"];

/// One operation no prediction covers.
#[derive(Debug, Clone)]
pub struct Violation {
    pub class: String,
    pub program: String,
    /// A path, a program path (exec) or an address (network).
    pub target: String,
    pub syscall: String,
    pub error: Option<String>,
    pub argv: Vec<String>,
}

/// The comparison for one command.
#[derive(Debug, Default)]
pub struct Comparison {
    pub opaque: bool,
    /// Operations no prediction covers (for an opaque text: what went beyond the
    /// prediction, not counted as violations).
    pub violations: Vec<Violation>,
}

pub struct Inputs<'a> {
    pub fs: &'a SeedFs<'a>,
    /// Paths that existed before the command ran.
    pub before: &'a BTreeSet<PathBuf>,
    /// Paths that existed under the writable mounts after it ended.
    pub after: &'a BTreeSet<PathBuf>,
    /// The resolvers named in /etc/resolv.conf.
    pub nameservers: &'a [IpAddr],
}

pub fn compare(pred: &Prediction, obs: &Observation, inp: &Inputs<'_>) -> Comparison {
    let mut v = Comparison {
        opaque: !pred.opaque.is_empty(),
        ..Default::default()
    };
    // Renames in the order they happened, to follow a temporary file to where it ended up.
    let renames: Vec<(usize, &Path, &Path)> = obs
        .events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((i, e.path.as_path(), e.renamed_to.as_deref()?)))
        .collect();
    let final_name = |i: usize, p: &'_ Path| -> PathBuf {
        let (mut at, mut cur) = (i, p.to_path_buf());
        while let Some((j, _, to)) = renames.iter().find(|(j, from, _)| *j > at && *from == cur) {
            at = *j;
            cur = to.to_path_buf();
        }
        cur
    };
    // The name a file had before the renames that led to `p` at event `i`.
    let first_name = |i: usize, p: &'_ Path| -> PathBuf {
        let (mut at, mut cur) = (i, p.to_path_buf());
        while let Some((j, from, _)) = renames
            .iter()
            .rev()
            .find(|(j, _, to)| *j < at && *to == cur)
        {
            at = *j;
            cur = from.to_path_buf();
        }
        cur
    };
    let mut written_so_far: BTreeSet<&Path> = BTreeSet::new();
    let mut seen: BTreeSet<(String, String, String)> = BTreeSet::new();
    for (i, e) in obs.events.iter().enumerate() {
        let resolved = match &e.resolved {
            Some(r) => r.clone(),
            // A call that acts on a name itself (unlink, rename, mkdir, symlink...) does
            // not follow a symlink in the last component.
            None if e.nofollow => match (e.path.parent(), e.path.file_name()) {
                (Some(dir), Some(name)) => resolve(dir, inp.fs).join(name),
                _ => e.path.clone(),
            },
            None => resolve(&e.path, inp.fs),
        };
        let both = [e.path.as_path(), resolved.as_path()];
        let covered = match e.act {
            Act::Exec => exec_covered(pred, e, &resolved, inp.fs),
            // Opening a directory without listing it is a handle to work beneath it or to
            // return to it (`find` keeps one on its starting directory): no contents are
            // read. Listing it shows as a `getdents64`, a list event of its own.
            Act::Read if is_dir(&resolved, inp.fs) => true,
            Act::Read | Act::List => {
                benign(&both, BENIGN_READS)
                    || own_pid_proc(e, &both)
                    || written_so_far.contains(e.path.as_path())
                    || beneath_any(&both, &pred.reads)
                    || (e.act == Act::List && beneath_any(&both, &pred.deletes))
                    || pred.writes.iter().any(|w| w == &e.path || w == &resolved)
                    || (!inp.before.contains(&e.path) && beneath_any(&both, &pred.writes))
            }
            Act::Write => {
                let created = !inp.before.contains(&e.path);
                let gone = !inp.after.contains(&e.path) && under_writable_mounts(&e.path);
                let fin = final_name(i, &e.path);
                benign(&both, BENIGN_WRITES)
                    // Creating what exists already (mkdir -p on a parent, O_EXCL) changed
                    // nothing.
                    || e.error.as_deref() == Some("EEXIST")
                    || (created && gone && fin == e.path && beneath_any(&both, &scratch()))
                    || (created
                        && fin != e.path
                        && beneath_any(&[&fin, &resolve(&fin, inp.fs)], &pred.writes))
                    // A name a file passes through on its way to a predicted delete
                    // (`shred -u` renames it to 0000, 000, … before unlinking it).
                    || (created
                        && gone
                        && beneath_any(&[&first_name(i, &e.path)], &pred.deletes))
                    || beneath_any(&both, &pred.writes)
                    // The missing directories above a predicted write (`mkdir -p a/b`,
                    // `install -D`) are the way to it.
                    || (created
                        && e.syscall.starts_with("mkdir")
                        && pred.writes.iter().any(|w| w.starts_with(&e.path)))
            }
            Act::Delete => {
                !inp.before.contains(&e.path)
                    || beneath_any(&both, &pred.deletes)
                    || pred.writes.iter().any(|w| w == &e.path || w == &resolved)
                    // Replaced, not removed: unlinked and written again beneath a
                    // predicted write (`tar -x` over existing files).
                    || (inp.after.contains(&e.path) && beneath_any(&both, &pred.writes))
            }
            Act::Connect => net_covered(pred, e, inp.nameservers),
        };
        if e.act == Act::Write {
            written_so_far.insert(e.path.as_path());
        }
        if covered {
            continue;
        }
        let target = match (&e.act, &e.peer) {
            (Act::Connect, Some(p)) => p.to_string(),
            _ => e.path.display().to_string(),
        };
        let class = class(e, &resolved);
        // One entry per (class, program, target) per command.
        if !seen.insert((class.clone(), e.program.clone(), target.clone())) {
            continue;
        }
        v.violations.push(Violation {
            class,
            program: e.program.clone(),
            target,
            syscall: e.syscall.clone(),
            error: e.error.clone(),
            argv: e.argv.clone(),
        });
    }
    v
}

fn is_dir(p: &Path, fs: &SeedFs<'_>) -> bool {
    use cordon_policy::{FileFacts, FileKind};
    fs.metadata(p).is_some_and(|m| m.kind == FileKind::Dir)
}

fn class(e: &Event, resolved: &Path) -> String {
    let ws = Path::new(WORKSPACE);
    let inside = e.path.starts_with(ws) && resolved.starts_with(ws);
    let place = if inside { "inside" } else { "outside" };
    match e.act {
        Act::Exec => "exec".into(),
        Act::Connect => "network".into(),
        Act::Read | Act::List => format!("read-{place}"),
        Act::Write => format!("write-{place}"),
        Act::Delete => format!("delete-{place}"),
    }
}

fn scratch() -> Vec<PathBuf> {
    SCRATCH.iter().map(PathBuf::from).collect()
}

fn under_writable_mounts(p: &Path) -> bool {
    p.starts_with("/home") || SCRATCH.iter().any(|s| p.starts_with(s))
}

/// A path is covered by a list entry when it is the entry or beneath it.
fn benign(paths: &[&Path], list: &[(&str, &str)]) -> bool {
    paths
        .iter()
        .any(|p| list.iter().any(|(b, _)| p.starts_with(b)))
}

/// `/proc/PID/...` of the reading process itself is `/proc/self`.
fn own_pid_proc(e: &Event, paths: &[&Path]) -> bool {
    let own = PathBuf::from(format!("/proc/{}", e.pid));
    paths.iter().any(|p| p.starts_with(&own))
}

/// A path is covered by a predicted root when it is the root or beneath it. A root that
/// is a glob (`~/.ssh/*`, which the policy judges as every path it can name) covers what
/// it matches and what lies beneath, and the listing of the directories bash reads to
/// expand it.
fn beneath_any(paths: &[&Path], roots: &[PathBuf]) -> bool {
    paths.iter().any(|p| {
        roots.iter().any(|r| {
            if p.starts_with(r) {
                return true;
            }
            let text = r.to_string_lossy();
            if !text.contains(['*', '?', '[']) {
                return false;
            }
            // The literal directories before the first glob component are listed.
            let literal: PathBuf = r
                .components()
                .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
                .collect();
            if *p == literal {
                return true;
            }
            globset::GlobBuilder::new(&format!("{{{text},{text}/**}}"))
                .literal_separator(true)
                .build()
                .is_ok_and(|g| g.compile_matcher().is_match(p))
        })
    })
}

/// A program run is covered by a predicted program of the same name or file, or when it
/// is the interpreter a `#!/usr/bin/env NAME` script asked for (the script starting, not
/// another program).
fn exec_covered(pred: &Prediction, e: &Event, resolved: &Path, fs: &SeedFs<'_>) -> bool {
    let name = e
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if pred.programs.iter().any(|(n, r)| {
        (!n.contains('/') && *n == name)
            || r.as_deref() == Some(resolved)
            || r.as_deref() == Some(e.path.as_path())
    }) {
        return true;
    }
    // A program that runs a command string (`awk` `system()`, `sed` `e`, `find -exec sh
    // -c`) starts `sh -c CODE`: the analysis predicts CODE's programs, and the shell is
    // the means of running them.
    if matches!(name.as_str(), "sh" | "bash" | "dash")
        && e.argv.get(1).map(String::as_str) == Some("-c")
        && let Some(first) = e.argv.get(2).and_then(|c| c.split_whitespace().next())
        && pred.programs.iter().any(|(n, _)| n == first)
    {
        return true;
    }
    // The kernel starts a `#!/usr/bin/env NAME` script as `env NAME SCRIPT …`; env then
    // runs NAME with the script as its first argument. That is the script starting.
    e.argv.get(1).map(PathBuf::from).as_deref() == Some(e.exe.as_path())
        && shebang_env_target(fs, &e.exe).is_some_and(|t| t == name)
}

/// The interpreter a `#!/usr/bin/env NAME` (or `env -S NAME …`) script names.
fn shebang_env_target(fs: &SeedFs<'_>, script: &Path) -> Option<String> {
    use cordon_policy::FileFacts;
    let body = fs.read_small_file(script, 1 << 20)?;
    let first = body.split(|b| *b == b'\n').next()?;
    let line = String::from_utf8_lossy(first);
    let mut words = line.strip_prefix("#!")?.split_whitespace();
    if !words.next()?.ends_with("/env") {
        return None;
    }
    let mut w = words.next()?;
    if w == "-S" {
        w = words.next()?;
    }
    Some(w.to_string())
}

fn net_covered(pred: &Prediction, e: &Event, nameservers: &[IpAddr]) -> bool {
    let Some(peer) = &e.peer else {
        return true;
    };
    match peer {
        Peer::Unix(p) => BENIGN_UNIX.contains(&p.as_str()),
        Peer::Inet(ip, port) => {
            if pred.net_any {
                return true;
            }
            let direct = pred.net.iter().any(|(h, p)| {
                *p == *port
                    && match h {
                        Host::Ip(a) => a == ip || mapped(a) == mapped(ip),
                        Host::Domain(d) => d == "localhost" && ip.is_loopback(),
                        _ => false,
                    }
            });
            let resolver = *port == 53
                && nameservers.contains(ip)
                && pred.net.iter().any(|(h, _)| matches!(h, Host::Domain(_)));
            direct || resolver
        }
    }
}

fn mapped(ip: &IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(*ip, IpAddr::V4),
        _ => *ip,
    }
}

/// The resolvers of /etc/resolv.conf (the root binds the host's /etc).
pub fn nameservers() -> Vec<IpAddr> {
    std::fs::read_to_string("/etc/resolv.conf")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("nameserver"))
        .filter_map(|a| a.trim().parse().ok())
        .collect()
}

/// `~` in the report.
pub fn show(p: &str) -> String {
    match p.strip_prefix(HOME) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
        _ => p.to_string(),
    }
}
