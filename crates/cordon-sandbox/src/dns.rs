//! The name server of a sandbox with a network namespace of its own. Nothing outside is
//! reachable from there, so a lookup could only time out or fail on an unreachable
//! address, and the command's user would learn nothing. Instead `/etc/resolv.conf` names
//! this stub on the namespace's loopback; it answers every query at once with "no such
//! name" and remembers the names asked, which the run reports (`lookup` in the denial
//! report) with the way to allow them. The egress proxy, outside, resolves for itself:
//! a program that uses it never asks the stub.

use crate::report::{Blocked, BlockedKind};
use std::net::UdpSocket;
use std::sync::{Arc, Mutex};

/// The stub's address inside the namespace.
pub(crate) const STUB_ADDR: &str = "127.0.0.53";

/// `/etc/resolv.conf` inside such a sandbox: the stub only, one try, no search list.
pub(crate) const RESOLV_CONF: &str = "# cordon: this run has no network of its own; lookups are answered and reported\nnameserver 127.0.0.53\noptions timeout:1 attempts:1\n";

/// Names kept for the report (the first ones asked).
const MAX_NAMES: usize = 32;

/// A running stub: the names asked so far.
pub(crate) struct Stub {
    names: Arc<Mutex<Vec<String>>>,
}

impl Stub {
    /// Bind the stub on the namespace's loopback (port 53) and answer on a thread of its
    /// own for as long as the process lives.
    pub(crate) fn start() -> std::io::Result<Stub> {
        let sock = UdpSocket::bind((STUB_ADDR, 53))?;
        let names = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&names);
        std::thread::Builder::new()
            .name("cordon-dns".into())
            .spawn(move || serve(&sock, &seen))?;
        Ok(Stub { names })
    }

    /// What the command looked up, as report records.
    pub(crate) fn records(&self) -> Vec<Blocked> {
        let names = self.names.lock().map(|n| n.clone()).unwrap_or_default();
        names
            .into_iter()
            .map(|name| Blocked {
                kind: BlockedKind::Lookup,
                target: name,
                detail: "looked up inside the sandbox, where no name resolves: this run reaches the network only through cordon's proxy, if at all".into(),
            })
            .collect()
    }
}

fn serve(sock: &UdpSocket, names: &Mutex<Vec<String>>) {
    let mut buf = [0u8; 1500];
    loop {
        let Ok((n, peer)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let Some((name, reply)) = answer(&buf[..n]) else {
            continue;
        };
        if let Ok(mut seen) = names.lock()
            && seen.len() < MAX_NAMES
            && !seen.contains(&name)
        {
            seen.push(name);
        }
        let _ = sock.send_to(&reply, peer);
    }
}

/// The name a query asks for (lower case, no trailing dot) and the "no such name" answer
/// to it; `None` for anything that is not a one-question standard query.
pub(crate) fn answer(query: &[u8]) -> Option<(String, Vec<u8>)> {
    let header = query.get(..12)?;
    let flags = u16::from_be_bytes([header[2], header[3]]);
    let is_query = flags & 0x8000 == 0;
    let opcode = (flags >> 11) & 0xf;
    let questions = u16::from_be_bytes([header[4], header[5]]);
    if !is_query || opcode != 0 || questions != 1 {
        return None;
    }
    // The question: labels up to the root, then type and class.
    let mut at = 12;
    let mut labels: Vec<String> = Vec::new();
    loop {
        let len = usize::from(*query.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        // A pointer or a reserved label type has no place in a question.
        if len > 63 {
            return None;
        }
        let label = query.get(at..at + len)?;
        labels.push(String::from_utf8_lossy(label).to_ascii_lowercase());
        at += len;
        if at > 12 + 255 {
            return None;
        }
    }
    let end = at + 4;
    let question = query.get(12..end)?;
    let mut reply = Vec::with_capacity(end);
    reply.extend_from_slice(&header[..2]);
    // QR, the query's opcode (0) and RD, RA set, RCODE 3 (NXDOMAIN).
    let rd = flags & 0x0100;
    reply.extend_from_slice(&(0x8000 | rd | 0x0080 | 3).to_be_bytes());
    reply.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    reply.extend_from_slice(question);
    Some((labels.join("."), reply))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(name: &str, id: u16) -> Vec<u8> {
        let mut q = id.to_be_bytes().to_vec();
        q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
        for label in name.split('.') {
            q.push(u8::try_from(label.len()).unwrap_or(0));
            q.extend_from_slice(label.as_bytes());
        }
        q.extend_from_slice(&[0, 0, 1, 0, 1]);
        q
    }

    #[test]
    fn a_query_gets_no_such_name_with_its_question() {
        let q = query("Registry.NPMJS.org", 0xbeef);
        let (name, reply) = answer(&q).unwrap_or_default();
        assert_eq!(name, "registry.npmjs.org");
        assert_eq!(&reply[..2], &[0xbe, 0xef]);
        // QR set, RD kept, RCODE 3.
        assert_eq!(reply[2] & 0x80, 0x80);
        assert_eq!(reply[2] & 0x01, 0x01);
        assert_eq!(reply[3] & 0x0f, 3);
        assert_eq!(&reply[4..6], &[0, 1]);
        assert_eq!(&reply[12..], &q[12..]);
    }

    #[test]
    fn anything_else_is_ignored() {
        let mut answer_not_query = query("a.b", 1);
        answer_not_query[2] |= 0x80;
        let mut two_questions = query("a.b", 1);
        two_questions[5] = 2;
        let mut pointer = query("a.b", 1);
        pointer[12] = 0xc0;
        for bad in [
            &[][..],
            &[0u8; 11][..],
            &answer_not_query[..],
            &two_questions[..],
            &pointer[..],
            &query("a.b", 1)[..15],
        ] {
            assert!(answer(bad).is_none(), "{bad:?}");
        }
    }
}
