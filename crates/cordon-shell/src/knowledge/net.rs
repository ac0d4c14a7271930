//! Network programs: transfers (`curl`, `wget`, `scp`, `rsync`), remote shells
//! (`ssh`), raw sockets (`nc`, `socat`) and name lookups (`dig`, `nslookup`, `ping`).
//! Literal targets are reported; a program that reaches the network with no visible
//! target says so.

use super::{Entry, Invocation, Opts, Outcome, Parsed, join, parse_args};
use crate::model::{Class, Word};

mod http;
mod remote;
use http::{curl, fetcher, httpie, wget};
pub(crate) use remote::sftp_batch;
use remote::{rsync, scp, ssh};

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
