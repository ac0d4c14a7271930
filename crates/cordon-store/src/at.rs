//! Where the store lives: the embedded SQLite file (the default) or a PostgreSQL database
//! shared by a fleet of machines.
//!
//! A [`PgTarget`] never holds a password in its URL: a URL carrying one is refused (a
//! password in a config file or a command line ends up in logs and `ps`), and the password
//! comes from a file or the environment as a [`Password`], whose `Debug` and `Display`
//! never show it. Without TLS (not built yet), only a Unix socket or a loopback address is
//! accepted: a password or a lease sent in clear over a network is refused, not risked.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{StoreError, StoreErrorKind};

/// Where the shared store lives.
#[derive(Debug, Clone)]
pub enum StoreAt {
    /// The embedded SQLite file (default; unchanged behaviour).
    File(PathBuf),
    /// A PostgreSQL database shared by a fleet of machines.
    Postgres(PgTarget),
}

/// A database password; its `Debug` and `Display` never show it, and it is overwritten
/// when dropped.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// A password taken from the environment or a prompt.
    pub fn new(s: String) -> Password {
        Password(s)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

fn wipe(s: &mut String) {
    let mut bytes = std::mem::take(s).into_bytes();
    bytes.fill(0);
    std::hint::black_box(&bytes);
}

impl Drop for Password {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(hidden)")
    }
}

impl fmt::Display for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(hidden)")
    }
}

/// A PostgreSQL database to use as the store.
#[derive(Clone)]
pub struct PgTarget {
    /// The URL as given (it holds no password: one that did was refused).
    url: String,
    pub(crate) config: Box<postgres::Config>,
    machine: String,
}

impl fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgTarget")
            .field("url", &self.url)
            .field("machine", &self.machine)
            .finish_non_exhaustive()
    }
}

/// Whether `host` names this machine: a loopback name or address.
fn loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback())
}

impl PgTarget {
    /// `url`: `postgres://user@host:port/db?...` or `postgresql:///db?host=/run/socket/dir`.
    /// A URL holding a password is refused (passwords come from a file or the environment).
    /// `machine`: this machine's name in the fleet (shown in the console, stored with
    /// pending approvals and shipped decisions).
    pub fn new(
        url: &str,
        password: Option<Password>,
        machine: &str,
    ) -> Result<PgTarget, StoreError> {
        // A refused URL is shown without its user and query, where a password could be in
        // any spelling; an accepted one holds none.
        let short = short_url(url);
        let bad = |why: String| StoreError::new(Path::new(&short), StoreErrorKind::Invalid(why));
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(bad(
                "a shared store is named by a URL starting with postgres:// or postgresql://"
                    .into(),
            ));
        }
        let mut config = postgres::Config::from_str(url).map_err(|e| {
            bad(format!(
                "the URL could not be read ({})",
                scrub(&e.to_string(), url)
            ))
        })?;
        // `user%3Apw@`: a user name holding `:` is a password in another spelling.
        if config.get_password().is_some() || config.get_user().is_some_and(|u| u.contains(':')) {
            return Err(bad(
                "the URL holds a password; give it in a password file or an environment variable instead"
                    .into(),
            ));
        }
        if config.get_hosts().is_empty() {
            return Err(bad(
                "the URL names no host; give a host name or a socket directory (?host=/run/postgresql)"
                    .into(),
            ));
        }
        for host in config.get_hosts() {
            if let postgres::config::Host::Tcp(name) = host
                && !loopback(name)
            {
                return Err(bad(format!(
                    "host {name} is not this machine, and TLS is not supported yet; use a Unix socket or a loopback address (a tunnel or a local proxy for a remote server)"
                )));
            }
        }
        for addr in config.get_hostaddrs() {
            if !addr.is_loopback() {
                return Err(bad(format!(
                    "host address {addr} is not this machine, and TLS is not supported yet; use a Unix socket or a loopback address"
                )));
            }
        }
        if config.get_dbname().is_none_or(str::is_empty) {
            return Err(bad("the URL names no database".into()));
        }
        let machine = machine.trim();
        if !cordon_policy::settings::valid_machine_name(machine) {
            return Err(bad(format!(
                "a machine name must be 1 to {} letters, digits, `.`, `-` or `_`",
                cordon_policy::settings::MAX_MACHINE_NAME
            )));
        }
        if let Some(p) = &password {
            config.password(p.expose());
        }
        if config.get_application_name().is_none() {
            config.application_name("cordon");
        }
        Ok(PgTarget {
            url: redact_url(url),
            config: Box::new(config),
            machine: machine.to_string(),
        })
    }

    /// This machine's name in the fleet.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// The URL, for messages (it holds no password).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where the server is reached: the Unix socket files (`DIR/.s.PGSQL.PORT`) and the
    /// TCP ports on this machine's loopback (a URL naming another host is refused).
    pub fn endpoints(&self) -> (Vec<PathBuf>, Vec<u16>) {
        let ports = self.config.get_ports();
        let port_of = |i: usize| match ports {
            [] => 5432,
            [one] => *one,
            many => many.get(i).copied().unwrap_or(5432),
        };
        let mut sockets = Vec::new();
        let mut tcp = Vec::new();
        for (i, host) in self.config.get_hosts().iter().enumerate() {
            match host {
                postgres::config::Host::Unix(dir) => {
                    sockets.push(dir.join(format!(".s.PGSQL.{}", port_of(i))));
                }
                postgres::config::Host::Tcp(_) => tcp.push(port_of(i)),
            }
        }
        for i in 0..self.config.get_hostaddrs().len() {
            tcp.push(port_of(i));
        }
        tcp.sort_unstable();
        tcp.dedup();
        (sockets, tcp)
    }
}

/// `scheme://host[:port]/db` of `url`: no user, no query (`postgresql://` plus the path
/// alone for a socket URL).
fn short_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(a URL that is not postgres://)".into();
    };
    let (auth, tail) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    let path = tail.split(['?', '#']).next().unwrap_or("");
    format!("{scheme}://{host}{path}")
}

/// `url` for messages about an accepted URL: the user (no password, which was refused),
/// host, database and the query parameters that say where the server is; any other
/// parameter's value is hidden.
fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut out = format!("{scheme}://");
    match auth.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(u, _)| u);
            out.push_str(&format!("{user}@{host}"));
        }
        None => out.push_str(auth),
    }
    // A password given as a query parameter.
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    out.push_str(path);
    if !query.is_empty() {
        let query = query
            .split('&')
            .map(|kv| {
                let (k, _) = kv.split_once('=').unwrap_or((kv, ""));
                let safe = [
                    "host",
                    "hostaddr",
                    "port",
                    "dbname",
                    "user",
                    "application_name",
                ];
                if safe.contains(&k) {
                    kv.to_string()
                } else {
                    "(hidden)".to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("&");
        out.push('?');
        out.push_str(&query);
    }
    out
}

/// A parser's message about `url` without any part of the URL in it.
fn scrub(msg: &str, url: &str) -> String {
    if url.len() > 3 && msg.contains(url) {
        msg.replace(url, "(the URL)")
    } else {
        msg.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_with_a_password_is_refused_without_showing_it() {
        for url in [
            "postgres://cordon:hunter2@localhost/cordon",
            "postgresql://cordon@localhost/cordon?password=hunter2",
            "postgresql:///cordon?host=/run/postgresql&user=cordon&pass%77ord=hunter2",
            "postgresql://cordon:@localhost/cordon?%70assword=hunter2",
            "postgresql://cordon%3Ahunter2@localhost/cordon",
            "postgresql://cordon@localhost/cordon?passwor%64=hunter2&application_name=x",
        ] {
            let e = PgTarget::new(url, None, "m1").unwrap_err().to_string();
            assert!(e.contains("password"), "{e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
        // An accepted URL is shown with only the parameters that say where the server is.
        let t = PgTarget::new(
            "postgresql:///c?host=/run/pg&options=-csecret%3Dx&user=u",
            None,
            "m1",
        )
        .unwrap();
        assert_eq!(t.url(), "postgresql:///c?host=/run/pg&(hidden)&user=u");
    }

    #[test]
    fn only_local_hosts_without_tls() {
        for ok in [
            "postgres://cordon@localhost/c",
            "postgres://cordon@127.0.0.1:5433/c",
            "postgres://cordon@[::1]/c",
            "postgresql:///c?host=/run/postgresql",
        ] {
            PgTarget::new(ok, None, "m").unwrap();
        }
        for bad in [
            "postgres://cordon@db.example.com/c",
            "postgres://cordon@10.0.0.5/c",
            "postgresql:///c?host=db.example.com",
            "postgres://cordon@localhost/c?hostaddr=10.1.2.3",
            "mysql://x@localhost/c",
            "postgres://cordon@localhost/",
        ] {
            assert!(PgTarget::new(bad, None, "m").is_err(), "{bad}");
        }
        let e = PgTarget::new("postgres://cordon@db.example.com/c", None, "m")
            .unwrap_err()
            .to_string();
        assert!(e.contains("TLS is not supported yet"), "{e}");
    }

    #[test]
    fn a_password_never_shows() {
        let p = Password::new("hunter2".into());
        assert!(!format!("{p:?} {p}").contains("hunter2"));
        let t = PgTarget::new("postgres://u@localhost/c", Some(p), "m").unwrap();
        assert!(!format!("{t:?}").contains("hunter2"));
        assert_eq!(t.machine(), "m");
    }
}
