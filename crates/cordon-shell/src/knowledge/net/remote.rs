//! Remote shells and copies: `ssh` (with the local commands its options run),
//! `scp`/`sftp` and `rsync`.

use super::remote_host;
use crate::knowledge::{Invocation, Opts, Outcome, Parsed, parse_args};
use crate::model::{Class, Word};

/// The destination ssh's `%` tokens stand for in a local command (`ProxyCommand nc
/// %h %p`): user, host and port, as far as the command line shows them.
struct Dest {
    user: Option<String>,
    host: Option<Word>,
    port: String,
}

impl Dest {
    fn of(target: Option<&Word>, port: Option<&Word>) -> Dest {
        let (user, host) = match target {
            Some(t) => {
                let v = t.value.strip_prefix("ssh://").unwrap_or(&t.value);
                let v = v.split([':', '/']).next().unwrap_or(v);
                match v.rsplit_once('@') {
                    Some((u, h)) => (
                        Some(u.to_owned()),
                        Some(Word {
                            value: h.to_owned(),
                            literal: t.literal,
                        }),
                    ),
                    None => (
                        None,
                        Some(Word {
                            value: v.to_owned(),
                            literal: t.literal,
                        }),
                    ),
                }
            }
            None => (None, None),
        };
        Dest {
            user,
            host,
            port: port.map_or_else(|| "22".to_owned(), |p| p.value.clone()),
        }
    }

    /// `cmd` with its tokens filled in; not literal when a token it uses is unknown.
    fn fill(&self, cmd: &Word) -> Word {
        let mut out = String::with_capacity(cmd.value.len());
        let mut literal = cmd.literal;
        let mut chars = cmd.value.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('h' | 'n') => match &self.host {
                    Some(h) => {
                        out.push_str(&h.value);
                        literal &= h.literal;
                    }
                    None => {
                        out.push_str("%h");
                        literal = false;
                    }
                },
                Some('p') => out.push_str(&self.port),
                Some('r' | 'u') => out.push_str(self.user.as_deref().unwrap_or("user")),
                Some(other) => {
                    out.push('%');
                    out.push(other);
                }
                None => out.push('%'),
            }
        }
        Word {
            value: out,
            literal,
        }
    }
}

/// Options of ssh/scp/sftp that name programs run locally.
fn ssh_options(p: &super::Parsed, o: &mut Outcome, name: &str, dest: &Dest) {
    for v in p.values(&["-o"]) {
        // `-o Key=Value` or `-o 'Key Value'`.
        let (key, value) = match v.value.split_once(['=', ' ', '\t']) {
            Some((k, val)) => (k.trim().to_ascii_lowercase(), val.trim()),
            None => (v.value.to_ascii_lowercase(), ""),
        };
        match key.as_str() {
            // Commands the local ssh runs through the user's shell.
            "proxycommand" | "localcommand" | "knownhostscommand" => {
                if value.eq_ignore_ascii_case("none") {
                    continue;
                }
                o.code(
                    name,
                    "-o",
                    &dest.fill(&Word {
                        value: value.to_owned(),
                        literal: v.literal,
                    }),
                );
            }
            "permitlocalcommand" | "match" => o.exec(name, "-o", &v.value),
            "include" => o.effects.class = Class::Unknown,
            _ => {}
        }
    }
    // scp `-S PROGRAM` and sftp `-S PROGRAM`: the ssh to run; sftp `-D PATH`: a local
    // sftp server run instead of connecting.
    for v in p.values(&["-S"]) {
        o.code(name, "-S", v);
    }
    if name == "sftp" {
        for v in p.values(&["-D"]) {
            o.code(name, "-D", v);
        }
    }
    // A config file the text does not show may hold ProxyCommand.
    if p.has(&["-F"]) {
        o.reads(p.values(&["-F"]));
        o.effects.class = Class::Unknown;
    }
    o.reads(p.values(&["-i"]));
}

/// `host:port` as a network target (`[v6]:port` for an IPv6 literal): ssh and scp
/// reach port 22 (or `-p`/`-P`), not the HTTPS port a bare host would mean.
fn with_port(host: &Word, port: &str) -> Word {
    let h = host.value.trim_start_matches('[').trim_end_matches(']');
    let value = if h.contains(':') {
        format!("[{h}]:{port}")
    } else {
        format!("{h}:{port}")
    };
    Word {
        value,
        literal: host.literal && port.chars().all(|c| c.is_ascii_digit()),
    }
}

pub(super) fn ssh(inv: &Invocation<'_>) -> Outcome {
    let mut spec = Opts::gnu("BbcDEeFIiJLlmOoPpQRSWw", &[]);
    spec.posix = true;
    let p = parse_args(inv.args, &spec);
    let mut o = Outcome::mutating();
    let dest = Dest::of(p.operands.first(), p.values(&["-p"]).last());
    ssh_options(&p, &mut o, "ssh", &dest);
    match &dest.host {
        Some(host) => o.net(&with_port(host, &dest.port)),
        None => o.net_unknown(),
    }
    for j in p.values(&["-J"]) {
        // `[user@]host[:port]`, comma-separated hops.
        for hop in j.value.split(',') {
            let hop = Dest::of(
                Some(&Word {
                    value: hop.to_owned(),
                    literal: j.literal,
                }),
                None,
            );
            let port = j
                .value
                .rsplit_once(':')
                .map(|(_, p)| p)
                .filter(|p| p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty());
            if let Some(h) = &hop.host {
                o.net(&with_port(h, port.unwrap_or("22")));
            }
        }
    }
    if p.operands.len() > 1 {
        // The remote command runs on the other machine; record it for findings.
        let cmd = super::join(&p.operands[1..]);
        o.effects.executes.push(crate::model::ExecArg {
            program: "ssh".into(),
            arg: "remote command".into(),
            own_purpose: true,
            detail: cmd,
        });
    }
    o.writes(p.values(&["-E"]));
    o
}

pub(super) fn scp(inv: &Invocation<'_>) -> Outcome {
    // scp's `-B` is batch mode; sftp's `-B` is a buffer size and `-b` a batch file.
    let short = if inv.name == "sftp" {
        "BbcDFiJloPRsS"
    } else {
        "cFiJloPSDX"
    };
    let p = parse_args(inv.args, &Opts::gnu(short, &[]));
    let mut o = Outcome::mutating();
    let remote = p.operands.iter().find(|w| remote_host(w).is_some());
    let dest = Dest::of(remote, p.values(&["-P"]).last());
    ssh_options(&p, &mut o, inv.name, &dest);
    let mut any_remote = false;
    let last = p.operands.len().saturating_sub(1);
    for (i, w) in p.operands.iter().enumerate() {
        match remote_host(w) {
            Some(h) => {
                any_remote = true;
                let host = h.value.rsplit('@').next().unwrap_or(&h.value).to_owned();
                let host = Word {
                    value: host,
                    literal: h.literal,
                };
                o.net(&with_port(&host, &dest.port));
            }
            None if i == last && inv.name == "scp" && p.operands.len() > 1 => o.writes([w]),
            None => o.reads([w]),
        }
    }
    if !any_remote {
        o.net_unknown();
    }
    o.reads(p.values(&["-b"]));
    o
}

/// The commands of an sftp batch: `put`/`mput` read local files, `get`/`mget` write
/// them, `!CMD` runs a local shell command, `lcd` moves locally.
pub(crate) fn sftp_batch(o: &mut Outcome, batch: &str) {
    for line in batch.lines().map(str::trim) {
        // A leading `-` or `@` only changes error handling and echoing.
        let line = line.trim_start_matches(['-', '@']);
        if let Some(cmd) = line.strip_prefix('!') {
            if !cmd.trim().is_empty() {
                o.code("sftp", "!", &Word::literal(cmd.trim()));
            }
            continue;
        }
        let words: Vec<&str> = line
            .split_whitespace()
            .filter(|w| !w.starts_with('-'))
            .collect();
        match words.as_slice() {
            ["put" | "mput" | "reput", local, ..] => o.reads([&Word::literal(*local)]),
            ["get" | "mget" | "reget", _, local, ..] => o.writes([&Word::literal(*local)]),
            ["get" | "mget" | "reget", remote] => {
                let name = remote.rsplit('/').next().unwrap_or(remote);
                o.writes([&Word::literal(name)]);
            }
            ["lmkdir", dir] => o.writes([&Word::literal(*dir)]),
            ["lcd", ..] => o.effects.class = Class::Unknown,
            _ => {}
        }
    }
}

/// rsync's options that take a value, so that no value is taken for a path.
const RSYNC_OPTS: Opts = Opts::gnu(
    "eBfTM",
    &[
        "rsh",
        "rsync-path",
        "filter",
        "exclude",
        "include",
        "exclude-from",
        "include-from",
        "files-from",
        "log-file",
        "password-file",
        "temp-dir",
        "compare-dest",
        "copy-dest",
        "link-dest",
        "backup-dir",
        "suffix",
        "chmod",
        "chown",
        "usermap",
        "groupmap",
        "timeout",
        "contimeout",
        "port",
        "sockopts",
        "bwlimit",
        "partial-dir",
        "max-size",
        "min-size",
        "max-delete",
        "block-size",
        "out-format",
        "log-file-format",
        "info",
        "debug",
        "remote-option",
        "write-batch",
        "only-write-batch",
        "read-batch",
        "protocol",
        "iconv",
        "checksum-choice",
        "compress-choice",
        "stop-after",
        "stop-at",
        "outbuf",
    ],
);

/// Options whose value is a file rsync reads.
const RSYNC_READS: &[&str] = &[
    "--exclude-from",
    "--include-from",
    "--files-from",
    "--password-file",
    "--read-batch",
];

pub(super) fn rsync(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &RSYNC_OPTS);
    let mut o = Outcome::mutating();
    rsync_commands(&p, &mut o);
    o.reads(p.values(RSYNC_READS));
    o.writes(p.values(&["--log-file", "--write-batch", "--only-write-batch"]));
    let Some((dest, srcs)) = p.operands.split_last() else {
        o.effects.class = Class::Unknown;
        return o;
    };
    if srcs.is_empty() {
        // `rsync SRC` alone lists.
        rsync_source(dest, &mut o);
        return o;
    }
    for s in srcs {
        rsync_source(s, &mut o);
    }
    match remote_host(dest) {
        Some(h) => o.net(&h),
        None => {
            o.writes([dest]);
            if p.opts.iter().any(|(n, _)| n.starts_with("--delete")) {
                o.deletes([dest]);
            }
        }
    }
    if p.has(&["--remove-source-files"]) {
        o.deletes(srcs);
    }
    o
}

/// What rsync's options run: the remote shell it starts here (`-e`), the program on the
/// other end (`--rsync-path`), and options passed to it (`-M`: anything).
fn rsync_commands(p: &Parsed, o: &mut Outcome) {
    for (name, v) in &p.opts {
        let val = v.as_ref().map(|w| w.value.as_str()).unwrap_or("");
        match (name.as_str(), v) {
            // The remote shell rsync starts locally.
            ("-e" | "--rsh", Some(cmd)) => o.code("rsync", name, cmd),
            // Runs on the other end.
            ("--rsync-path", _) => o.exec("rsync", name, val),
            _ => {}
        }
        if name == "-M" || name == "--remote-option" {
            o.effects.class = Class::Unknown;
        }
    }
}

/// A source rsync reads: a host it reaches, or a local path.
fn rsync_source(w: &Word, o: &mut Outcome) {
    match remote_host(w) {
        Some(h) => o.net(&h),
        None => o.reads([w]),
    }
}
