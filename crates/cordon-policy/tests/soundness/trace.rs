//! From strace's output to the operations the processes of one command attempted.
//!
//! The trace is one file written by `strace -f -y -s 4096` (see `contain.sh`). `-y` prints
//! every file descriptor with the path it stands for, `AT_FDCWD` included, so most paths
//! come resolved by the kernel; the calls that take a bare path relative to the working
//! directory (`rename`, `unlink`, `mkdir`, `execve`, ...) are resolved against a working
//! directory tracked per process (`chdir`, `fchdir`, inherited at `clone`, and corrected
//! from every `AT_FDCWD</path>` the trace shows). Paths printed by strace are seen from
//! strace's own root, outside the command's `chroot`; they are mapped back by removing
//! the new root's host path.
//!
//! Only attempts are recorded, whether or not they succeeded (a probe of `~/.curlrc` that
//! found nothing would have read the file had it existed), except for `execve`, where a
//! failed call ran nothing (`execvp` tries every `PATH` directory in turn).
//!
//! Not observed, by choice: metadata lookups (`stat`, `access`, `readlink`, opening with
//! `O_PATH` or a directory without listing it), which disclose no contents; and data moved
//! through descriptors already opened (`write`, `ftruncate`, `fchmod`, `sendfile`), whose
//! opening is the operation recorded. Not observed, as a limit of the method: I/O
//! submitted through io_uring (no program of the corpus uses it) and Unix socket files
//! created by `bind`.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::{Component, Path, PathBuf};

mod syntax;

use syntax::*;

/// What one observed operation did.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Act {
    /// A program image was loaded (successful `execve`).
    Exec,
    /// A file was opened for reading.
    Read,
    /// A directory was listed (`getdents64`).
    List,
    /// A file was opened for writing, created, truncated, linked, or its metadata changed.
    Write,
    /// A file or directory was removed.
    Delete,
    /// A connection (or datagram) to an address.
    Connect,
}

impl Act {
    pub fn as_str(&self) -> &'static str {
        match self {
            Act::Exec => "exec",
            Act::Read => "read",
            Act::List => "list",
            Act::Write => "write",
            Act::Delete => "delete",
            Act::Connect => "connect",
        }
    }
}

/// Where a connection went.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Peer {
    /// An IPv4 or IPv6 address and port.
    Inet(IpAddr, u16),
    /// A Unix socket path (`@` first for the abstract namespace).
    Unix(String),
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peer::Inet(IpAddr::V6(a), p) => write!(f, "[{a}]:{p}"),
            Peer::Inet(a, p) => write!(f, "{a}:{p}"),
            Peer::Unix(p) => write!(f, "unix:{p}"),
        }
    }
}

/// One observed operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The process.
    pub pid: u32,
    /// The program the process was running (basename of its last `execve`); for an exec,
    /// the program that called it.
    pub program: String,
    /// The path of that program's image.
    pub exe: PathBuf,
    pub act: Act,
    /// The path acted on, as the command's processes see the file system (absolute,
    /// lexically clean). Empty for connections.
    pub path: PathBuf,
    /// Where the kernel resolved it to, when the trace shows it (a successful open).
    pub resolved: Option<PathBuf>,
    pub peer: Option<Peer>,
    /// The call acts on the last component itself, without following a symlink there.
    pub nofollow: bool,
    /// For a rename: where the file went (the event itself is the delete of its old name).
    pub renamed_to: Option<PathBuf>,
    /// The system call, for the report.
    pub syscall: String,
    /// `None` on success, else the errno name.
    pub error: Option<String>,
    /// For an exec: the argument vector.
    pub argv: Vec<String>,
}

/// Everything observed for one command.
#[derive(Debug, Default)]
pub struct Observation {
    pub events: Vec<Event>,
    /// Lines the parser did not understand (reported, never silently dropped).
    pub unparsed: Vec<String>,
    /// Whether the command's shell was seen starting (the harness worked).
    pub started: bool,
}

/// One system call with its arguments and result, after `<unfinished ...>` / `resumed`
/// halves were joined.
struct Record {
    pid: u32,
    name: String,
    args: Vec<String>,
    result: String,
}

/// Parse the trace written for a command run beneath `root` (the host path of its `/`),
/// which started in `workdir` and whose shell was started as `shell`.
pub fn parse(trace: &str, root: &Path, workdir: &Path, shell: &str) -> Observation {
    let mut obs = Observation::default();
    let mut records: Vec<(usize, Record)> = Vec::new();
    // pid -> (index of the first line, text so far) of an unfinished call.
    let mut pending: HashMap<u32, (usize, String)> = HashMap::new();
    for (i, line) in trace.lines().enumerate() {
        let Some((pid, rest)) = split_pid(line) else {
            if !line.trim().is_empty() {
                obs.unparsed.push(line.to_string());
            }
            continue;
        };
        if rest.starts_with("+++") || rest.starts_with("---") {
            continue;
        }
        let (start, text) = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid, (i, head.to_string()));
            continue;
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let Some(after) = tail.split_once(" resumed>").map(|(_, a)| a) else {
                obs.unparsed.push(line.to_string());
                continue;
            };
            match pending.remove(&pid) {
                Some((start, head)) => (start, format!("{head}{after}")),
                None => {
                    obs.unparsed.push(line.to_string());
                    continue;
                }
            }
        } else {
            (i, rest.to_string())
        };
        match parse_call(pid, &text) {
            Some(r) => records.push((start, r)),
            None => obs.unparsed.push(line.to_string()),
        }
    }
    // A call that never resumed (the process was killed inside it) still was attempted.
    for (pid, (start, head)) in pending {
        if let Some(r) = parse_call(pid, &format!("{head}) = ?")) {
            records.push((start, r));
        }
    }
    // Calls in the order they started, so a `clone` comes before its child's first call.
    records.sort_by_key(|(start, _)| *start);

    let mut procs: BTreeMap<u32, Proc> = BTreeMap::new();
    let mut root_pid = None;
    for (_, r) in records {
        let root_pid = *root_pid.get_or_insert(r.pid);
        if !obs.started {
            // Everything before the command's shell starts is the harness (`chroot`, `env`).
            if r.pid == root_pid
                && r.name == "execve"
                && r.args.first().map(|a| unquote(a).0) == Some(shell.as_bytes().to_vec())
                && ok(&r.result)
            {
                obs.started = true;
                procs.insert(
                    r.pid,
                    Proc {
                        cwd: workdir.to_path_buf(),
                        program: "(shell)".into(),
                        exe: PathBuf::from(shell),
                    },
                );
            }
            continue;
        }
        let ctx = Ctx { root };
        let proc = procs.entry(r.pid).or_insert_with(|| Proc {
            cwd: workdir.to_path_buf(),
            program: "?".into(),
            exe: PathBuf::new(),
        });
        // `AT_FDCWD</path>` tells the working directory outright.
        for a in &r.args {
            if let Some(p) = a
                .strip_prefix("AT_FDCWD<")
                .and_then(|p| p.strip_suffix('>'))
                && let Some(p) = ctx.inside(Path::new(p))
            {
                proc.cwd = p;
            }
        }
        let proc = proc.clone();
        ctx.record(&r, &proc, &mut procs, &mut obs);
    }
    obs
}

#[derive(Debug, Clone)]
struct Proc {
    cwd: PathBuf,
    program: String,
    exe: PathBuf,
}

struct Ctx<'a> {
    root: &'a Path,
}

impl Ctx<'_> {
    /// A host path as strace printed it, seen from inside the new root.
    fn inside(&self, host: &Path) -> Option<PathBuf> {
        let rest = host.strip_prefix(self.root).ok()?;
        Some(Path::new("/").join(rest))
    }

    /// The directory a `*at` call's directory argument stands for.
    fn dirfd(&self, arg: &str, proc: &Proc) -> Option<PathBuf> {
        if arg.starts_with("AT_FDCWD") {
            return Some(proc.cwd.clone());
        }
        let p = decoration(arg)?;
        self.inside(Path::new(&p))
    }

    /// A path argument made absolute against `base`.
    fn path(&self, arg: &str, base: Option<PathBuf>) -> Option<PathBuf> {
        let (bytes, _) = unquote(arg);
        let p = PathBuf::from(String::from_utf8_lossy(&bytes).into_owned());
        if p.as_os_str().is_empty() {
            return base.map(|b| clean(&b));
        }
        if p.is_absolute() {
            Some(clean(&p))
        } else {
            base.map(|b| clean(&b.join(p)))
        }
    }

    fn record(
        &self,
        r: &Record,
        proc: &Proc,
        procs: &mut BTreeMap<u32, Proc>,
        obs: &mut Observation,
    ) {
        let error = if ok(&r.result) {
            None
        } else {
            Some(
                r.result
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("?")
                    .to_string(),
            )
        };
        let cwd = Some(proc.cwd.clone());
        let arg = |i: usize| r.args.get(i).map(String::as_str).unwrap_or("");
        let push = |obs: &mut Observation, act: Act, path: Option<PathBuf>| {
            let Some(path) = path else {
                obs.unparsed
                    .push(format!("{} {}({})", r.pid, r.name, r.args.join(", ")));
                return;
            };
            obs.events.push(Event {
                pid: r.pid,
                program: proc.program.clone(),
                exe: proc.exe.clone(),
                act,
                path,
                resolved: None,
                nofollow: !matches!(
                    r.name.as_str(),
                    "open"
                        | "openat"
                        | "openat2"
                        | "creat"
                        | "truncate"
                        | "chmod"
                        | "chown"
                        | "utimes"
                        | "getdents64"
                        | "getdents"
                ),
                peer: None,
                renamed_to: None,
                syscall: r.name.clone(),
                error: error.clone(),
                argv: Vec::new(),
            });
        };
        match r.name.as_str() {
            "clone" | "clone3" | "fork" | "vfork" => {
                if let Ok(child) = r
                    .result
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .parse::<u32>()
                {
                    procs.insert(child, proc.clone());
                }
            }
            "chdir" => {
                if error.is_none()
                    && let Some(p) = self.path(arg(0), cwd)
                    && let Some(me) = procs.get_mut(&r.pid)
                {
                    me.cwd = p;
                }
            }
            "fchdir" => {
                if error.is_none()
                    && let Some(p) = decoration(arg(0)).and_then(|p| self.inside(Path::new(&p)))
                    && let Some(me) = procs.get_mut(&r.pid)
                {
                    me.cwd = p;
                }
            }
            "execve" | "execveat" => {
                if error.is_some() {
                    return;
                }
                let (path, argv) = if r.name == "execve" {
                    (self.path(arg(0), cwd), arg(1))
                } else {
                    (self.path(arg(1), self.dirfd(arg(0), proc)), arg(2))
                };
                let Some(path) = path else {
                    push(obs, Act::Exec, None);
                    return;
                };
                let argv = string_array(argv);
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                obs.events.push(Event {
                    pid: r.pid,
                    program: proc.program.clone(),
                    exe: proc.exe.clone(),
                    act: Act::Exec,
                    path: path.clone(),
                    resolved: None,
                    nofollow: false,
                    peer: None,
                    renamed_to: None,
                    syscall: r.name.clone(),
                    error: None,
                    argv,
                });
                if let Some(me) = procs.get_mut(&r.pid) {
                    me.program = name;
                    me.exe = path;
                }
            }
            "open" | "openat" | "openat2" | "creat" => {
                let (path, flags) = match r.name.as_str() {
                    "open" => (self.path(arg(0), cwd), arg(1).to_string()),
                    "creat" => (self.path(arg(0), cwd), "O_WRONLY|O_CREAT|O_TRUNC".into()),
                    "openat" => (
                        self.path(arg(1), self.dirfd(arg(0), proc)),
                        arg(2).to_string(),
                    ),
                    _ => (
                        self.path(arg(1), self.dirfd(arg(0), proc)),
                        arg(2)
                            .trim_start_matches('{')
                            .split(", ")
                            .find_map(|f| f.strip_prefix("flags="))
                            .unwrap_or("")
                            .to_string(),
                    ),
                };
                let fl: Vec<&str> = flags.split('|').collect();
                let act = if fl.iter().any(|f| {
                    matches!(
                        *f,
                        "O_WRONLY" | "O_RDWR" | "O_CREAT" | "O_TRUNC" | "O_APPEND" | "O_TMPFILE"
                    )
                }) {
                    Act::Write
                } else if fl.contains(&"O_PATH") || fl.contains(&"O_DIRECTORY") {
                    // A handle without access to the contents: a lookup, like stat, or a
                    // directory kept open to work beneath it or to return to it. Listing
                    // the directory is `getdents64` on it, recorded below.
                    return;
                } else {
                    Act::Read
                };
                push(obs, act, path);
                if error.is_none()
                    && let Some(e) = obs.events.last_mut()
                {
                    e.resolved = decoration(&r.result).and_then(|p| self.inside(Path::new(&p)));
                }
            }
            "getdents64" | "getdents" => push(
                obs,
                Act::List,
                decoration(arg(0)).and_then(|p| self.inside(Path::new(&p))),
            ),
            "unlink" | "rmdir" => push(obs, Act::Delete, self.path(arg(0), cwd)),
            "unlinkat" => push(
                obs,
                Act::Delete,
                self.path(arg(1), self.dirfd(arg(0), proc)),
            ),
            "rename" | "renameat" | "renameat2" => {
                let (from, to) = if r.name == "rename" {
                    (self.path(arg(0), cwd.clone()), self.path(arg(1), cwd))
                } else {
                    (
                        self.path(arg(1), self.dirfd(arg(0), proc)),
                        self.path(arg(3), self.dirfd(arg(2), proc)),
                    )
                };
                let exchange = r.args.get(4).is_some_and(|f| f.contains("RENAME_EXCHANGE"));
                if exchange {
                    push(obs, Act::Write, from);
                    push(obs, Act::Write, to);
                } else {
                    push(obs, Act::Delete, from);
                    if let Some(e) = obs.events.last_mut() {
                        e.renamed_to = to.clone();
                    }
                    push(obs, Act::Write, to);
                }
            }
            "link" => push(obs, Act::Write, self.path(arg(1), cwd)),
            "linkat" => push(obs, Act::Write, self.path(arg(3), self.dirfd(arg(2), proc))),
            "symlink" => push(obs, Act::Write, self.path(arg(1), cwd)),
            "symlinkat" => push(obs, Act::Write, self.path(arg(2), self.dirfd(arg(1), proc))),
            "mkdir" | "truncate" | "chmod" | "chown" | "lchown" | "utimes" | "mknod" => {
                push(obs, Act::Write, self.path(arg(0), cwd))
            }
            "mkdirat" | "fchmodat" | "fchownat" | "mknodat" => {
                push(obs, Act::Write, self.path(arg(1), self.dirfd(arg(0), proc)))
            }
            "utimensat" => {
                // `utimensat(fd, NULL, ...)` changes the file `fd` is open on.
                if arg(1) == "NULL" {
                    push(
                        obs,
                        Act::Write,
                        decoration(arg(0)).and_then(|p| self.inside(Path::new(&p))),
                    )
                } else {
                    push(obs, Act::Write, self.path(arg(1), self.dirfd(arg(0), proc)))
                }
            }
            "connect" | "sendto" | "sendmsg" | "sendmmsg" => {
                let addr = match r.name.as_str() {
                    "connect" => arg(1),
                    "sendto" => arg(4),
                    _ => arg(1),
                };
                if let Some(peer) = peer(addr) {
                    obs.events.push(Event {
                        pid: r.pid,
                        program: proc.program.clone(),
                        exe: proc.exe.clone(),
                        act: Act::Connect,
                        path: PathBuf::new(),
                        resolved: None,
                        nofollow: false,
                        peer: Some(peer),
                        renamed_to: None,
                        syscall: r.name.clone(),
                        error,
                        argv: Vec::new(),
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_calls() {
        let root = Path::new("/r");
        let t = r#"9 execve("/usr/sbin/chroot", ["chroot"], 0x1 /* 3 vars */) = 0
9 execve("/bin/bash", ["/bin/bash", "-c", "x"], 0x1 /* 3 vars */) = 0
9 openat(AT_FDCWD</r/home/user/proj>, "a b.txt", O_RDONLY) = 3</r/home/user/proj/a b.txt>
9 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>
10 execve("/usr/bin/rm", ["rm", "-r", "d"], 0x1 /* 3 vars */) = 0
9 <... clone resumed>, child_tidptr=0x1) = 10
10 unlinkat(4</r/home/user/proj/d>, "f", 0) = 0
10 rename("x", "/tmp/y") = -1 EXDEV (Invalid cross-device link)
10 connect(3<socket:[1]>, {sa_family=AF_INET, sin_port=htons(9), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 ENETUNREACH (Network is unreachable)
"#;
        let o = parse(t, root, Path::new("/home/user/proj"), "/bin/bash");
        assert!(o.started);
        assert!(o.unparsed.is_empty(), "{:?}", o.unparsed);
        let e: Vec<_> = o
            .events
            .iter()
            .map(|e| {
                (
                    e.program.as_str(),
                    e.act.clone(),
                    e.path.display().to_string(),
                )
            })
            .collect();
        assert_eq!(
            e,
            vec![
                ("(shell)", Act::Read, "/home/user/proj/a b.txt".to_string()),
                ("(shell)", Act::Exec, "/usr/bin/rm".to_string()),
                ("rm", Act::Delete, "/home/user/proj/d/f".to_string()),
                ("rm", Act::Delete, "/home/user/proj/x".to_string()),
                ("rm", Act::Write, "/tmp/y".to_string()),
                ("rm", Act::Connect, String::new()),
            ]
        );
        assert_eq!(
            o.events[5].peer,
            Some(Peer::Inet("127.0.0.1".parse().unwrap(), 9))
        );
    }

    #[test]
    fn unquotes() {
        assert_eq!(unquote(r#""a\"b\303\251\n""#).0, b"a\"b\xc3\xa9\n".to_vec());
        assert!(unquote(r#""abc"..."#).1);
    }
}
