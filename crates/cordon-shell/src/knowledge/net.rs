//! Network programs: transfers (`curl`, `wget`, `scp`, `rsync`), remote shells
//! (`ssh`), raw sockets (`nc`, `socat`) and name lookups (`dig`, `nslookup`, `ping`).
//! Literal targets are reported; a program that reaches the network with no visible
//! target says so.

use super::{Entry, Invocation, Opts, Outcome, parse_args};
use crate::model::{Class, Word};

pub(super) const ENTRIES: &[Entry] = &[
    Entry {
        names: &["curl"],
        classify: curl,
    },
    Entry {
        names: &["wget", "wget2"],
        classify: wget,
    },
    Entry {
        names: &["http", "https", "xh", "xhs"],
        classify: httpie,
    },
    Entry {
        names: &[
            "aria2c",
            "axel",
            "fetch",
            "lwp-request",
            "GET",
            "POST",
            "HEAD",
            "lynx",
            "w3m",
            "links",
        ],
        classify: fetcher,
    },
    Entry {
        names: &["ssh"],
        classify: ssh,
    },
    Entry {
        names: &["scp", "sftp"],
        classify: scp,
    },
    Entry {
        names: &["rsync"],
        classify: rsync,
    },
    Entry {
        names: &[
            "nc",
            "ncat",
            "netcat",
            "telnet",
            "ftp",
            "tftp",
            "ssh-keyscan",
            "whois",
        ],
        classify: socket,
    },
    Entry {
        names: &["openssl"],
        classify: openssl,
    },
    Entry {
        names: &["socat"],
        classify: socat,
    },
    Entry {
        names: &[
            "nslookup",
            "host",
            "dig",
            "drill",
            "ping",
            "ping6",
            "traceroute",
            "traceroute6",
            "tracepath",
            "mtr",
            "arping",
        ],
        classify: lookup,
    },
    Entry {
        names: &["resolvectl"],
        classify: resolvectl,
    },
    Entry {
        names: &["getent"],
        classify: getent,
    },
];

/// Operands of network programs that look like a remote `host:path`.
fn remote_host(w: &Word) -> Option<Word> {
    let v = &w.value;
    if v.contains("://") {
        return Some(w.clone());
    }
    let (host, _) = v.split_once(':')?;
    if host.is_empty() || host.contains('/') {
        return None;
    }
    Some(Word {
        value: host.to_owned(),
        literal: w.literal,
    })
}

fn curl(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "oTdFKuHXAebcDwrmxEYyzCQtUP",
            &[
                "output",
                "upload-file",
                "data",
                "data-binary",
                "data-raw",
                "data-ascii",
                "data-urlencode",
                "form",
                "form-string",
                "config",
                "user",
                "header",
                "request",
                "user-agent",
                "referer",
                "cookie",
                "cookie-jar",
                "dump-header",
                "write-out",
                "range",
                "max-time",
                "proxy",
                "cert",
                "key",
                "cacert",
                "capath",
                "url",
                "output-dir",
                "trace",
                "trace-ascii",
                "stderr",
                "libcurl",
                "resolve",
                "connect-to",
                "retry",
                "retry-delay",
                "retry-max-time",
                "limit-rate",
                "json",
                "netrc-file",
                "proxy-user",
                "interface",
                "local-port",
                "max-filesize",
                "connect-timeout",
                "speed-limit",
                "speed-time",
                "time-cond",
                "quote",
                "telnet-option",
                "oauth2-bearer",
                "aws-sigv4",
                "variable",
                "expand-url",
                "etag-save",
                "etag-compare",
                "hsts",
                "alt-svc",
                "unix-socket",
                "abstract-unix-socket",
                "preproxy",
                "doh-url",
                "dns-servers",
                "ciphers",
                "pinnedpubkey",
                "ftp-port",
                // The rest of curl(1)'s options that take a value.
                "noproxy",
                "proto",
                "proto-default",
                "proto-redir",
                "max-redirs",
                "cert-type",
                "key-type",
                "pass",
                "crlfile",
                "curves",
                "create-file-mode",
                "continue-at",
                "delegation",
                "dns-interface",
                "dns-ipv4-addr",
                "dns-ipv6-addr",
                "egd-file",
                "engine",
                "expect100-timeout",
                "ftp-account",
                "ftp-alternative-to-user",
                "ftp-method",
                "ftp-ssl-ccc-mode",
                "happy-eyeballs-timeout-ms",
                "haproxy-clientip",
                "hostpubmd5",
                "hostpubsha256",
                "ip-tos",
                "ipfs-gateway",
                "keepalive-time",
                "keepalive-cnt",
                "krb",
                "login-options",
                "mail-auth",
                "mail-from",
                "mail-rcpt",
                "parallel-max",
                "proxy-cacert",
                "proxy-capath",
                "proxy-cert",
                "proxy-cert-type",
                "proxy-ciphers",
                "proxy-crlfile",
                "proxy-header",
                "proxy-key",
                "proxy-key-type",
                "proxy-pass",
                "proxy-pinnedpubkey",
                "proxy-service-name",
                "proxy-tls13-ciphers",
                "proxy-tlsauthtype",
                "proxy-tlspassword",
                "proxy-tlsuser",
                "pubkey",
                "random-file",
                "rate",
                "request-target",
                "sasl-authzid",
                "service-name",
                "socks4",
                "socks4a",
                "socks5",
                "socks5-hostname",
                "socks5-gssapi-service",
                "tftp-blksize",
                "tls-max",
                "tls13-ciphers",
                "tlsauthtype",
                "tlspassword",
                "tlsuser",
                "trace-config",
                "url-query",
                "sigalgs",
                "ech",
                "vlan-priority",
                "ssl-sessions",
                "knownhosts",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    o.fetches = true;
    let mut urls: Vec<Word> = p.operands.clone();
    urls.extend(p.values(&["--url"]).cloned());
    for u in &urls {
        o.net(u);
    }
    o.urls = urls.clone();
    if urls.is_empty() {
        o.net_unknown();
    }
    o.writes(p.values(&[
        "-o",
        "--output",
        "-c",
        "--cookie-jar",
        "-D",
        "--dump-header",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--libcurl",
        "--etag-save",
        "--hsts",
        "--alt-svc",
    ]));
    if p.has(&[
        "-O",
        "--remote-name",
        "--remote-name-all",
        "-J",
        "--remote-header-name",
    ]) {
        let dir = p.values(&["--output-dir"]).last().cloned();
        for u in &urls {
            let name = u.value.rsplit('/').next().unwrap_or("");
            let path = match &dir {
                Some(d) => format!("{}/{name}", d.value),
                None => name.to_owned(),
            };
            let literal = u.literal && dir.as_ref().is_none_or(|d| d.literal) && !name.is_empty();
            o.writes([&Word {
                value: path,
                literal,
            }]);
        }
        o.fetches = false;
    }
    let to_stdout = |w: &Word| {
        matches!(
            w.value.as_str(),
            "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1"
        )
    };
    if p.has(&["-o", "--output"]) && !p.values(&["-o", "--output"]).any(to_stdout) {
        o.fetches = false;
    }
    o.reads(p.values(&[
        "-T",
        "--upload-file",
        "-K",
        "--config",
        "--netrc-file",
        "-E",
        "--cert",
        "--key",
        "--cacert",
    ]));
    for v in p.values(&[
        "-d",
        "--data",
        "--data-binary",
        "--data-ascii",
        "--data-urlencode",
        "--json",
        "-b",
        "--cookie",
    ]) {
        if let Some(f) = v.value.strip_prefix('@') {
            o.reads([&Word {
                value: f.to_owned(),
                literal: v.literal,
            }]);
        }
    }
    for v in p.values(&["-F", "--form"]) {
        if let Some((_, f)) = v
            .value
            .split_once("=@")
            .or_else(|| v.value.split_once("=<"))
        {
            let f = f.split(';').next().unwrap_or(f);
            o.reads([&Word {
                value: f.to_owned(),
                literal: v.literal,
            }]);
        }
    }
    if p.has(&["-K", "--config"]) {
        o.effects.class = Class::Unknown;
    }
    // A request over the container engine's socket drives the engine, which runs as
    // root: a privileged container is one request away.
    if p.values(&["--unix-socket", "--abstract-unix-socket"])
        .any(|w| w.value.contains("docker.sock") || w.value.contains("podman.sock"))
    {
        o.privilege("curl to the container engine's socket");
    }
    o
}

fn wget(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "OPoaiBeUtTwQlADRIX",
            &[
                "output-document",
                "directory-prefix",
                "output-file",
                "append-output",
                "input-file",
                "base",
                "execute",
                "user-agent",
                "tries",
                "timeout",
                "wait",
                "quota",
                "level",
                "accept",
                "reject",
                "domains",
                "exclude-domains",
                "include-directories",
                "exclude-directories",
                "post-data",
                "post-file",
                "body-data",
                "body-file",
                "method",
                "header",
                "user",
                "password",
                "http-user",
                "http-password",
                "load-cookies",
                "save-cookies",
                "config",
                "ca-certificate",
                "certificate",
                "private-key",
                "bind-address",
                "limit-rate",
                "referer",
                "cut-dirs",
                "restrict-file-names",
                "default-page",
                "rejected-log",
                "warc-file",
                "use-askpass",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    for u in &p.operands {
        o.net(u);
    }
    o.urls = p.operands.clone();
    let input_files: Vec<Word> = p.values(&["-i", "--input-file"]).cloned().collect();
    if p.operands.is_empty() || !input_files.is_empty() {
        o.net_unknown();
    }
    o.reads(&input_files);
    o.reads(p.values(&[
        "--post-file",
        "--body-file",
        "--load-cookies",
        "--config",
        "--ca-certificate",
        "--certificate",
        "--private-key",
    ]));
    o.writes(p.values(&[
        "-o",
        "--output-file",
        "-a",
        "--append-output",
        "--save-cookies",
        "--rejected-log",
    ]));
    if let Some(cmd) = p.values(&["--use-askpass"]).next() {
        o.code("wget", "--use-askpass", cmd);
    }
    for e in p.values(&["-e", "--execute"]) {
        // A wgetrc command: it can change any setting, including output paths.
        let _ = e;
        o.effects.class = Class::Unknown;
    }
    let outs: Vec<Word> = p.values(&["-O", "--output-document"]).cloned().collect();
    if outs.iter().any(|w| {
        matches!(
            w.value.as_str(),
            "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1"
        )
    }) {
        o.fetches = true;
    } else if !outs.is_empty() {
        o.writes(&outs);
    } else {
        let dir = p.values(&["-P", "--directory-prefix"]).last().cloned();
        let recursive = p.has(&[
            "-r",
            "--recursive",
            "-m",
            "--mirror",
            "-p",
            "--page-requisites",
        ]);
        for u in &p.operands {
            let name = u
                .value
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            let (value, literal) = match (&dir, recursive) {
                (Some(d), _) => (d.value.clone(), d.literal && !recursive),
                (None, true) => (".".to_owned(), false),
                (None, false) => (
                    name.to_owned(),
                    u.literal && !name.is_empty() && u.value.contains("://"),
                ),
            };
            o.writes([&Word { value, literal }]);
        }
    }
    o
}

fn httpie(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "aAo",
            &[
                "auth",
                "auth-type",
                "output",
                "session",
                "session-read-only",
                "verify",
                "cert",
                "cert-key",
                "proxy",
                "timeout",
                "max-redirects",
                "style",
                "print",
                "pretty",
                "format-options",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    o.fetches = true;
    const METHODS: [&str; 7] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
    let url = p
        .operands
        .iter()
        .find(|w| !METHODS.contains(&w.value.as_str()));
    match url {
        Some(u) => {
            o.net(u);
            o.urls.push(u.clone());
        }
        None => o.net_unknown(),
    }
    for item in &p.operands {
        if let Some((_, f)) = item.value.split_once("@")
            && (item.value.contains("=@")
                || item.value.contains(":=@")
                || item.value.contains("@") && !item.value.contains("://"))
        {
            o.reads([&Word {
                value: f.to_owned(),
                literal: item.literal,
            }]);
        }
    }
    o.writes(p.values(&["-o", "--output", "--session"]));
    if p.has(&["-d", "--download"]) {
        o.writes([&Word::literal(".")]);
    }
    o
}

fn fetcher(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu("doOi", &["dir", "out", "output", "input-file"]),
    );
    let mut o = Outcome::read_only();
    o.fetches = true;
    let urls: Vec<Word> = p
        .operands
        .iter()
        .filter(|w| w.value.contains("://") || w.value.contains('.'))
        .cloned()
        .collect();
    for u in &urls {
        o.net(u);
    }
    if urls.is_empty() {
        o.net_unknown();
    }
    o.urls = urls;
    o.writes(p.values(&["-d", "--dir", "-o", "-O", "--out", "--output"]));
    if matches!(inv.name, "aria2c" | "axel")
        && !p.has(&["-d", "--dir", "-o", "--out", "-O", "--output"])
    {
        o.writes([&Word::literal(".")]);
    }
    o
}

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

fn ssh(inv: &Invocation<'_>) -> Outcome {
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

fn scp(inv: &Invocation<'_>) -> Outcome {
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

fn rsync(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
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
        ),
    );
    let mut o = Outcome::mutating();
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
    o.reads(p.values(&[
        "--exclude-from",
        "--include-from",
        "--files-from",
        "--password-file",
        "--read-batch",
    ]));
    o.writes(p.values(&["--log-file", "--write-batch", "--only-write-batch"]));
    let Some((dest, srcs)) = p.operands.split_last() else {
        o.effects.class = Class::Unknown;
        return o;
    };
    if srcs.is_empty() {
        // `rsync SRC` alone lists.
        match remote_host(dest) {
            Some(h) => o.net(&h),
            None => o.reads([dest]),
        }
        return o;
    }
    for s in srcs {
        match remote_host(s) {
            Some(h) => o.net(&h),
            None => o.reads([s]),
        }
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

fn socket(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "ecpswiqIOTxXPbgGmo",
            &[
                "exec",
                "sh-exec",
                "lua-exec",
                "source-port",
                "proxy",
                "proxy-type",
                "wait",
                "idle-timeout",
                "output",
                "connect",
                "servername",
                "port",
            ],
        ),
    );
    let mut o = Outcome::mutating();
    o.fetches = matches!(inv.name, "nc" | "ncat" | "netcat" | "telnet");
    for (name, v) in &p.opts {
        match (name.as_str(), v) {
            // `-e PROG` / `--exec PROG` runs a program; `-c CMD` / `--sh-exec CMD` a
            // shell command, with the socket as its standard input and output.
            ("-e" | "-c" | "--exec" | "--sh-exec", Some(cmd)) => o.code(inv.name, name, cmd),
            ("-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec", _) => {
                let val = v.as_ref().map(|w| w.value.as_str()).unwrap_or("");
                o.exec(inv.name, name, val);
            }
            _ => {}
        }
    }
    o.writes(p.values(&["-o", "--output"]));
    let mut ops = p.operands.iter();
    match ops.next() {
        Some(host) => {
            let target = match ops.next() {
                Some(port) => Word {
                    value: format!("{}:{}", host.value, port.value),
                    literal: host.literal && port.literal,
                },
                None => host.clone(),
            };
            o.lookup_hosts.push(host.clone());
            o.net(&target);
        }
        None => o.net_unknown(),
    }
    o
}

/// Options of `openssl` commands (single-dash long options, never letter clusters)
/// whose value is a file the command reads.
const OPENSSL_READS: &[&str] = &[
    "-in",
    "-inkey",
    "-key",
    "-cert",
    "-CAfile",
    "-CAkey",
    "-CA",
    "-certfile",
    "-signkey",
    "-kfile",
    "-config",
    "-extfile",
    "-crl",
    "-CRLfile",
    "-untrusted",
    "-trusted",
    "-verify",
    "-prverify",
    "-sigfile",
    "-signature",
    "-peerkey",
    "-paramfile",
    "-dcert",
    "-dkey",
    "-chainCAfile",
    "-verifyCAfile",
    "-issuer",
    "-respin",
    "-reqin",
    "-sess_in",
    "-xkey",
    "-xcert",
    "-xchain",
    "-cert_chain",
    "-key2",
    "-cert2",
    "-dhparam",
    "-psk_session",
    "-recip",
    "-content",
    "-keyfile",
    "-outkey",
];

/// Options of `openssl` commands whose value is a file the command writes.
const OPENSSL_WRITES: &[&str] = &[
    "-out",
    "-keyout",
    "-writerand",
    "-respout",
    "-reqout",
    "-sess_out",
    "-keylogfile",
    "-signer",
    "-msgfile",
    "-pubout_file",
];

/// Other `openssl` options that take a value.
const OPENSSL_VALUES: &[&str] = &[
    "-inform",
    "-outform",
    "-keyform",
    "-certform",
    "-CAform",
    "-CAkeyform",
    "-crlform",
    "-passin",
    "-passout",
    "-pass",
    "-subj",
    "-days",
    "-newkey",
    "-pkeyopt",
    "-sigopt",
    "-md",
    "-digest",
    "-cipher",
    "-name",
    "-connect",
    "-servername",
    "-host",
    "-port",
    "-K",
    "-iv",
    "-S",
    "-k",
    "-engine",
    "-set_serial",
    "-nameopt",
    "-certopt",
    "-reqopt",
    "-section",
    "-extensions",
    "-reqexts",
    "-addext",
    "-starttls",
    "-proxy",
    "-nextprotoneg",
    "-alpn",
    "-ciphersuites",
    "-curves",
    "-groups",
    "-sigalgs",
    "-verify_hostname",
    "-verify_ip",
    "-verify_email",
    "-purpose",
    "-attime",
    "-iter",
    "-saltlen",
    "-CApath",
    "-chainCApath",
    "-verifyCApath",
    "-macopt",
    "-mac",
    "-kdf",
    "-kdfopt",
    "-keyopt",
    "-algorithm",
    "-propquery",
    "-provider",
    "-provider-path",
    "-bufsize",
    "-serial",
    "-startdate",
    "-enddate",
    "-policy",
    "-psk",
    "-psk_identity",
    "-srpuser",
    "-srppass",
    "-keymatexport",
    "-keymatexportlen",
    "-max_send_frag",
    "-split_send_frag",
    "-max_pipelines",
    "-read_buf",
    "-dane_tlsa_domain",
    "-dane_tlsa_rrdata",
    "-ssl_config",
    "-auth_level",
    "-verify_depth",
    "-verify_name",
    "-checkhost",
    "-checkemail",
    "-checkip",
    "-ext",
    "-url",
    "-rand",
    "-accept",
    "-timeout",
    "-pkeyform",
    "-keygen_engine",
    "-sigform",
    "-certsout",
    "-chainout",
    "-ocsp_url",
    "-CRL",
    "-ignore_unknown",
];

/// `openssl` subcommands whose operands are not files.
const OPENSSL_NON_FILE_OPERANDS: &[&str] = &[
    "genrsa", "gendsa", "dhparam", "rand", "prime", "s_client", "s_server", "s_time", "errstr",
    "list", "version", "ciphers", "speed", "passwd", "help", "engine",
];

/// `openssl COMMAND [options] [operands]`: keys and certificates read through `-in` and
/// friends, files written through `-out`, decoding (`enc -d`, `base64 -d`), and the
/// network for `s_client`, `s_time` and `ocsp -url`.
fn openssl(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let Some((cmd, rest)) = inv.args.split_first() else {
        // The interactive prompt reads commands from standard input.
        o.effects.class = Class::Unknown;
        return o;
    };
    let sub = cmd.value.as_str();
    let mut operands = Vec::new();
    let mut decode = false;
    let mut connect = None;
    let mut i = 0;
    while i < rest.len() {
        let w = &rest[i];
        let a = w.value.as_str();
        if a == "--" {
            operands.extend(rest[i + 1..].iter().cloned());
            break;
        }
        if !a.starts_with('-') || a == "-" {
            operands.push(w.clone());
            i += 1;
            continue;
        }
        // `-opt=value` is not openssl's syntax, but a leading `--` is accepted.
        let name = a
            .strip_prefix('-')
            .filter(|r| r.starts_with('-'))
            .unwrap_or(a);
        let takes = OPENSSL_READS.contains(&name)
            || OPENSSL_WRITES.contains(&name)
            || OPENSSL_VALUES.contains(&name);
        let value = if takes { rest.get(i + 1) } else { None };
        if let Some(v) = value {
            if OPENSSL_READS.contains(&name) {
                o.reads([v]);
            } else if OPENSSL_WRITES.contains(&name) {
                o.writes([v]);
            }
            match name {
                "-passin" | "-passout" | "-pass" | "-kfile" => {
                    if let Some(f) = v.value.strip_prefix("file:") {
                        o.reads([&Word {
                            value: f.to_owned(),
                            literal: v.literal,
                        }]);
                    }
                }
                "-connect" | "-proxy" | "-url" | "-ocsp_url" => {
                    connect.get_or_insert_with(|| v.clone());
                }
                "-engine" | "-provider" | "-provider-path" | "-keygen_engine" => {
                    o.exec("openssl", name, &v.value);
                }
                _ => {}
            }
        }
        if name == "-d" || name == "-decrypt" {
            decode = true;
        }
        i += if takes { 2 } else { 1 };
    }
    let encoder = matches!(sub, "enc" | "base64" | "zlib")
        || sub.starts_with("aes")
        || sub.starts_with("des")
        || sub.starts_with("camellia")
        || sub.starts_with("chacha")
        || sub.starts_with("bf")
        || sub.starts_with("cast")
        || sub.starts_with("rc")
        || sub.starts_with("seed")
        || sub.starts_with("sm4");
    o.decodes = decode && (encoder || matches!(sub, "smime" | "cms" | "pkeyutl" | "rsautl"));
    match sub {
        "s_client" | "s_time" | "ocsp" => {
            let target = connect.or_else(|| operands.first().cloned());
            match target {
                Some(c) => {
                    o.lookup_hosts.push(c.clone());
                    o.net(&c);
                }
                None if sub == "ocsp" => {}
                None => o.net_unknown(),
            }
            o.fetches = sub == "s_client";
        }
        "s_server" => o.net_unknown(),
        _ if OPENSSL_NON_FILE_OPERANDS.contains(&sub) => {}
        _ => o.reads(&operands),
    }
    o
}

fn socat(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::mutating();
    o.fetches = true;
    let addrs: Vec<&Word> = inv
        .args
        .iter()
        .filter(|w| !w.value.starts_with('-') || w.value == "-")
        .collect();
    // `-u`: data flows from the first address to the second only (`-U` the reverse).
    let one_way = inv.args.iter().any(|w| w.value == "-u" || w.value == "-U");
    for (k, a) in addrs.into_iter().enumerate() {
        let upper = a.value.to_ascii_uppercase();
        if upper.starts_with("EXEC:") || upper.starts_with("SYSTEM:") {
            // `EXEC:PROG ARGS,OPTIONS` / `SYSTEM:SHELL-COMMAND,OPTIONS`.
            let colon = a.value.find(':').unwrap_or(0);
            let spec = &a.value[colon + 1..];
            let cmd = spec.split(',').next().unwrap_or(spec);
            o.code(
                "socat",
                &a.value[..colon],
                &Word {
                    value: cmd.to_owned(),
                    literal: a.literal,
                },
            );
        } else if let Some(rest) = [
            "TCP:", "TCP4:", "TCP6:", "UDP:", "UDP4:", "UDP6:", "SSL:", "OPENSSL:", "PROXY:",
        ]
        .iter()
        .find_map(|p| upper.starts_with(p).then(|| &a.value[p.len()..]))
        {
            let target = rest.split(',').next().unwrap_or(rest);
            o.net(&Word {
                value: target.to_owned(),
                literal: a.literal,
            });
        } else if upper.contains("LISTEN") {
            o.net_unknown();
        } else if let Some(prefix) = ["OPEN:", "GOPEN:", "FILE:", "CREATE:"]
            .iter()
            .find(|p| upper.starts_with(**p))
        {
            let path = &a.value[prefix.len()..];
            let file = Word {
                value: path.split(',').next().unwrap_or(path).to_owned(),
                literal: a.literal,
            };
            // A file address is read (its data goes to the other address) unless it
            // is only created or only written to.
            let reader = *prefix != "CREATE:" && (!one_way || k == 0);
            if reader {
                o.reads([&file]);
            }
            if *prefix == "CREATE:" || !one_way || k > 0 {
                o.writes([&file]);
            }
        }
    }
    o
}

/// Name lookups: each host operand is a network target and is checked for the
/// DNS-exfiltration shape.
fn lookup(inv: &Invocation<'_>) -> Outcome {
    let spec = match inv.name {
        "dig" => Opts::gnu("bcfkpqtxy", &[]),
        "ping" | "ping6" | "arping" => Opts::gnu("cisIWwtlpQSMFmI", &[]),
        "traceroute" | "traceroute6" | "mtr" => Opts::gnu("fgimNpqswzAFtz", &[]),
        "host" => Opts::gnu("cNRtW", &[]),
        _ => Opts::gnu("", &[]),
    };
    let p = parse_args(inv.args, &spec);
    let mut o = Outcome::mutating();
    let mut hosts: Vec<Word> = p
        .operands
        .iter()
        .filter(|w| !w.value.starts_with('+'))
        .map(|w| Word {
            value: w.value.trim_start_matches('@').to_owned(),
            literal: w.literal,
        })
        .collect();
    hosts.extend(p.values(&["-q", "-x"]).cloned());
    if inv.name == "dig" {
        o.reads(p.values(&["-f", "-k"]));
    }
    if hosts.is_empty() {
        o.net_unknown();
    }
    for h in &hosts {
        o.net(h);
    }
    o.lookup_hosts = hosts;
    o
}

/// `resolvectl query|tlsa|service|openpgp NAME…` looks names up; the other verbs show
/// or change the resolver's state.
fn resolvectl(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu("ipt", &["interface", "protocol", "type", "class"]),
    );
    let Some((verb, names)) = p.operands.split_first() else {
        return Outcome::read_only();
    };
    match verb.value.as_str() {
        "query" | "tlsa" | "service" | "openpgp" => {
            let mut o = Outcome::mutating();
            for n in names {
                o.net(n);
            }
            if names.is_empty() {
                o.net_unknown();
            }
            o.lookup_hosts = names.to_vec();
            o
        }
        "status" | "statistics" | "dns" | "domain" | "default-route" | "llmnr" | "mdns"
        | "dnssec" | "dnsovertls" | "nta" | "log-level" | "monitor" | "show-cache"
        | "show-server-state"
            if names.is_empty() =>
        {
            Outcome::read_only()
        }
        _ => Outcome::unknown(),
    }
}

fn getent(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("s", &["service"]));
    let Some((db, keys)) = p.operands.split_first() else {
        return Outcome::read_only();
    };
    if matches!(
        db.value.as_str(),
        "hosts" | "ahosts" | "ahostsv4" | "ahostsv6"
    ) {
        let mut o = Outcome::mutating();
        for k in keys {
            o.net(k);
        }
        o.lookup_hosts = keys.to_vec();
        return o;
    }
    Outcome::read_only()
}
