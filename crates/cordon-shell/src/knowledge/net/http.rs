//! HTTP clients: `curl`, `wget`, HTTPie and the other fetchers, with the URLs they
//! reach and the files they read, write and send.

use crate::knowledge::{Invocation, Opts, Outcome, Parsed, parse_args};
use crate::model::{Class, Word};

/// curl's options that take a value: all of curl(1)'s, so that no value is taken for a
/// URL.
const CURL_OPTS: Opts = Opts::gnu(
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
);

/// Options whose value is a file curl writes.
const CURL_WRITES: &[&str] = &[
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
];

/// Options that save each URL under the name its path ends with (or the server says).
const CURL_REMOTE_NAME: &[&str] = &[
    "-O",
    "--remote-name",
    "--remote-name-all",
    "-J",
    "--remote-header-name",
];

/// Options whose value is a file curl reads (and may send).
const CURL_READS: &[&str] = &[
    "-T",
    "--upload-file",
    "-K",
    "--config",
    "--netrc-file",
    "-E",
    "--cert",
    "--key",
    "--cacert",
];

/// Options whose value, when it is `@FILE`, sends FILE.
const CURL_DATA: &[&str] = &[
    "-d",
    "--data",
    "--data-binary",
    "--data-ascii",
    "--data-urlencode",
    "--json",
    "-b",
    "--cookie",
];

pub(super) fn curl(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &CURL_OPTS);
    let mut o = Outcome::read_only();
    o.fetches = true;
    let urls = curl_urls(&p, &mut o);
    o.writes(p.values(CURL_WRITES));
    if p.has(CURL_REMOTE_NAME) {
        curl_remote_names(&p, &urls, &mut o);
        o.fetches = false;
    }
    // Output saved to a file is not output a pipe can run.
    if p.has(&["-o", "--output"]) && !p.values(&["-o", "--output"]).any(is_stdout) {
        o.fetches = false;
    }
    curl_reads(&p, &mut o);
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

/// The URLs curl reaches (operands and `--url`), each a network target; with none, a
/// destination only its configuration knows.
fn curl_urls(p: &Parsed, o: &mut Outcome) -> Vec<Word> {
    let mut urls: Vec<Word> = p.operands.clone();
    urls.extend(p.values(&["--url"]).cloned());
    for u in &urls {
        o.net(u);
    }
    o.urls = urls.clone();
    if urls.is_empty() {
        o.net_unknown();
    }
    urls
}

/// `-O`/`-J`: each URL is saved under the last part of its path, in `--output-dir`
/// when given; a name known only at run time (or none) is not literal.
fn curl_remote_names(p: &Parsed, urls: &[Word], o: &mut Outcome) {
    let dir = p.values(&["--output-dir"]).last().cloned();
    for u in urls {
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
}

/// Does an output file name standard output?
fn is_stdout(w: &Word) -> bool {
    matches!(
        w.value.as_str(),
        "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1"
    )
}

/// The files curl reads: uploads, its configuration, certificates and keys, `@FILE`
/// data and cookies, and the files of `-F name=@FILE` / `name=<FILE` form fields.
fn curl_reads(p: &Parsed, o: &mut Outcome) {
    o.reads(p.values(CURL_READS));
    for v in p.values(CURL_DATA) {
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
}

/// wget's options that take a value, so that no value is taken for a URL.
const WGET_OPTS: Opts = Opts::gnu(
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
);

/// Options whose value is a file wget reads (and may send).
const WGET_READS: &[&str] = &[
    "--post-file",
    "--body-file",
    "--load-cookies",
    "--config",
    "--ca-certificate",
    "--certificate",
    "--private-key",
];

/// Options whose value is a file wget writes besides the download: its log, cookies and
/// the log of rejected URLs.
const WGET_WRITES: &[&str] = &[
    "-o",
    "--output-file",
    "-a",
    "--append-output",
    "--save-cookies",
    "--rejected-log",
];

/// Options that download every page a page links to, under a tree of names.
const WGET_RECURSIVE: &[&str] = &[
    "-r",
    "--recursive",
    "-m",
    "--mirror",
    "-p",
    "--page-requisites",
];

pub(super) fn wget(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &WGET_OPTS);
    let mut o = Outcome::read_only();
    wget_urls(&p, &mut o);
    o.reads(p.values(WGET_READS));
    o.writes(p.values(WGET_WRITES));
    if let Some(cmd) = p.values(&["--use-askpass"]).next() {
        o.code("wget", "--use-askpass", cmd);
    }
    // A whole wgetrc (`--config`) can change any setting, including where the download
    // is written (`output_document`) and which file is sent (`post_file`).
    if p.has(&["--config"]) {
        o.exec(
            "wget",
            "--config",
            "takes its settings from a file (a wgetrc can set where the download is written and which file is sent)",
        );
    }
    // A wgetrc command (`-e`): it can change any setting, including output paths.
    if p.values(&["-e", "--execute"]).next().is_some() {
        o.effects.class = Class::Unknown;
    }
    wget_downloads(&p, &mut o);
    o
}

/// The URLs wget reaches, each a network target, and the `--input-file`s it reads more
/// of them from (with one, or with no URL, a destination not known here).
fn wget_urls(p: &Parsed, o: &mut Outcome) {
    for u in &p.operands {
        o.net(u);
    }
    o.urls = p.operands.clone();
    let input_files: Vec<Word> = p.values(&["-i", "--input-file"]).cloned().collect();
    if p.operands.is_empty() || !input_files.is_empty() {
        o.net_unknown();
    }
    o.reads(&input_files);
}

/// Where the downloads go: `-O` names one file (standard output: the output is what a
/// pipe may run); without it each URL is saved under the last part of its path, in
/// `-P`'s directory when given, and a recursive download anywhere below it.
fn wget_downloads(p: &Parsed, o: &mut Outcome) {
    let outs: Vec<Word> = p.values(&["-O", "--output-document"]).cloned().collect();
    if outs.iter().any(is_stdout) {
        o.fetches = true;
        return;
    }
    if !outs.is_empty() {
        o.writes(&outs);
        return;
    }
    let dir = p.values(&["-P", "--directory-prefix"]).last().cloned();
    let recursive = p.has(WGET_RECURSIVE);
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

pub(super) fn httpie(inv: &Invocation<'_>) -> Outcome {
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

pub(super) fn fetcher(inv: &Invocation<'_>) -> Outcome {
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
