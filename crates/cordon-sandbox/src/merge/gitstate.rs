//! Git's own files that can hide a run's changes from the user's review (`git status`,
//! `git diff`): the local exclude list and the index's assume-unchanged and
//! skip-worktree bits. Each is judged against the host's current file: what the run
//! adds waits for a human.

use std::collections::HashSet;

/// The largest index parsed; a larger one is judged by its size alone (held).
const MAX_INDEX: u64 = 256 << 20;

/// Why a run's `info/exclude` waits (`None`: it adds no pattern the host's lacks).
pub(super) fn exclude_hold(run: &[u8], host: Option<&[u8]>) -> Option<String> {
    let active = |b: &[u8]| -> HashSet<Vec<u8>> {
        b.split(|c| *c == b'\n')
            .map(|l| l.trim_ascii().to_vec())
            .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
            .collect()
    };
    let host = host.map(active).unwrap_or_default();
    let added = active(run).into_iter().find(|l| !host.contains(l))?;
    Some(format!(
        "it adds `{}` to git's local exclude list, which hides matching files from `git status`",
        String::from_utf8_lossy(&added)
    ))
}

/// Why a run's index waits (`None`: it marks no path assume-unchanged or skip-worktree
/// that the host's index does not mark).
pub(super) fn index_hold(run: &[u8], host: Option<&[u8]>) -> Option<String> {
    let Some(run_marked) = marked(run) else {
        return Some(
            "it cannot be read as a git index to check which changes it hides from `git status`"
                .into(),
        );
    };
    let host_marked = host.and_then(marked).unwrap_or_default();
    let hidden = run_marked.into_iter().find(|p| !host_marked.contains(p))?;
    Some(format!(
        "it marks {} assume-unchanged or skip-worktree, which hides its changes from `git status` and `git diff`",
        String::from_utf8_lossy(&hidden)
    ))
}

/// The paths an index (version 2 to 4, SHA-1 or SHA-256) marks assume-unchanged or
/// skip-worktree; `None` when it is not an index cordon can read.
pub(super) fn marked(index: &[u8]) -> Option<HashSet<Vec<u8>>> {
    if index.len() as u64 > MAX_INDEX {
        return None;
    }
    [20, 32].into_iter().find_map(|oid| parse(index, oid))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn parse(b: &[u8], oid: usize) -> Option<HashSet<Vec<u8>>> {
    if b.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(b, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(b, 8)?;
    let mut at = 12usize;
    let mut out = HashSet::new();
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let flags = be16(b, at + 40 + oid)?;
        at += 40 + oid + 2;
        let mut skip_worktree = false;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            skip_worktree = be16(b, at)? & 0x4000 != 0;
            at += 2;
        }
        let path = if version == 4 {
            // A varint of how many bytes of the previous path to drop, then the rest.
            let mut drop = 0usize;
            loop {
                let c = *b.get(at)?;
                at += 1;
                drop = drop.checked_mul(128)?.checked_add(usize::from(c & 0x7f))?;
                if c & 0x80 == 0 {
                    break;
                }
                drop = drop.checked_add(1)?;
            }
            let end = at + b.get(at..)?.iter().position(|c| *c == 0)?;
            let keep = prev.len().checked_sub(drop)?;
            let mut p = prev[..keep].to_vec();
            p.extend_from_slice(&b[at..end]);
            at = end + 1;
            p
        } else {
            let end = at + b.get(at..)?.iter().position(|c| *c == 0)?;
            let p = b[at..end].to_vec();
            at = start + ((end - start + 8) & !7);
            p
        };
        // The length in the flags must agree (it is capped at 0xfff): a wrong object
        // size shows here.
        let len = usize::from(flags & 0x0fff);
        if (len < 0x0fff && len != path.len()) || path.is_empty() {
            return None;
        }
        if flags & 0x8000 != 0 || skip_worktree {
            out.insert(path.clone());
        }
        prev = path;
    }
    // What follows the entries is extensions and a checksum of the object size.
    (b.len() >= at + oid).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_added_exclude_pattern_waits() {
        let host = b"# git ls-files --others --exclude-from=.git/info/exclude\n# *.o\n";
        assert_eq!(exclude_hold(host, Some(host)), None);
        assert!(exclude_hold(b"# c\nplanted.sh\n", Some(host)).is_some());
        assert!(exclude_hold(b"  /x \n", None).is_some());
        assert_eq!(exclude_hold(b"a\n", Some(b"a\nb\n")), None);
        assert!(index_hold(b"not an index", None).is_some());
    }
}
