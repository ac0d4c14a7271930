//! `StoreLocation::check_sandbox_reach` and `check_net_reach` (shared.rs): every spelling
//! of the store's endpoint an allowance could reach.

#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
use super::*;
use cordon_policy::net::NetworkPolicy;

fn at(url: &str) -> StoreLocation {
    StoreLocation {
        local: PathBuf::from("/nowhere/store.sqlite3"),
        shared: std::sync::Arc::new(StoreAt::Postgres(PgTarget::new(url, None, "m1").unwrap())),
        settings: None,
    }
}

fn net(allow: &str, private: &str) -> NetworkPolicy {
    NetworkPolicy::from_lists(&[allow.to_string()], &[], &[private.to_string()]).unwrap()
}

/// A loopback exemption in any spelling, with the store's port allowed, is refused;
/// the same spellings of another host's network are not.
#[test]
fn every_spelling_of_loopback_is_refused() {
    let s = at("postgres://m1@127.0.0.1:55432/cordon");
    for (private, allow) in [
        ("127.0.0.1/32", "127.0.0.1:55432"),
        ("::ffff:127.0.0.1/128", "[::ffff:127.0.0.1]:55432"),
        ("::ffff:0:0/96", "[::ffff:7f00:1]:55432"),
        ("::ffff:127.5.0.0/112", "x.example:55432"),
        ("::127.0.0.1/128", "x.example:55432"),
        ("64:ff9b::7f00:1/128", "x.example:55432"),
        ("::/0", "x.example:55432"),
        ("0.0.0.0/0", "x.example:55432"),
    ] {
        let e = s.check_net_reach(&net(allow, private)).unwrap_err();
        assert!(
            e.0.contains("listens on loopback port 55432"),
            "{private}: {e}"
        );
        assert!(
            s.check_sandbox_reach(&[], &net(allow, private), false)
                .is_err(),
            "{private}"
        );
    }
    for private in ["::ffff:10.0.0.0/104", "10.0.0.0/8", "fd00::/8"] {
        assert!(
            s.check_net_reach(&net("x.example:55432", private)).is_ok(),
            "{private}"
        );
    }
}

/// A store on a Unix socket: the port its socket's name gives is the server's TCP
/// port as well.
#[test]
fn a_socket_stores_port_is_checked_too() {
    let s = at("postgresql:///cordon?host=/run/pg&port=55432&user=m1");
    let e = s
        .check_net_reach(&net("127.0.0.1:55432", "127.0.0.1/32"))
        .unwrap_err();
    assert!(e.0.contains("port 55432"), "{e}");
    assert!(
        s.check_net_reach(&net("127.0.0.1:8080", "127.0.0.1/32"))
            .is_ok()
    );
    assert_eq!(
        server_ports(&[PathBuf::from("/run/pg/.s.PGSQL.5433")], vec![5432, 5433]),
        vec![5432, 5433]
    );
}

/// A hard link to the store's socket (or to anything in its directory), allowed by
/// another path, is refused by inode; an unrelated socket is not.
#[test]
fn a_hard_link_to_the_socket_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sockdir = dir.path().join("pg");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&sockdir).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let socket = sockdir.join(".s.PGSQL.5432");
    let _l = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let lock = sockdir.join(".s.PGSQL.5432.lock");
    std::fs::write(&lock, "1").unwrap();
    let s = at(&format!(
        "postgresql:///cordon?host={}&user=m1",
        sockdir.display()
    ));
    let none = net("x.example", "10.0.0.0/8");
    let link = elsewhere.join("innocent.sock");
    std::fs::hard_link(&socket, &link).unwrap();
    let e = s
        .check_sandbox_reach(std::slice::from_ref(&link), &none, false)
        .unwrap_err();
    assert!(e.0.contains("under another name"), "{e}");
    let link2 = elsewhere.join("lock-link");
    std::fs::hard_link(&lock, &link2).unwrap();
    assert!(s.check_sandbox_reach(&[link2], &none, false).is_err());
    let other = elsewhere.join("other.sock");
    let _o = std::os::unix::net::UnixListener::bind(&other).unwrap();
    assert!(s.check_sandbox_reach(&[other], &none, false).is_ok());
}
