#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Property: a path whose real resolution (by the kernel) leaves the workspace is never
//! judged inside, whatever mix of `.`, `..`, names and planted symlinks it is made of.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::RealFs;
use cordon_policy::paths::{Location, facts_for, locate};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
}

/// root/ws/{a/b, in -> a, out -> ../outside, up -> .., abs -> root/outside, deep/l -> ../../outside}
/// root/ws_evil, root/outside/{x, back -> ../ws}
fn tree() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::create_dir_all(ws.join("deep")).unwrap();
        std::fs::create_dir_all(root.join("ws_evil")).unwrap();
        std::fs::create_dir_all(root.join("outside/x")).unwrap();
        let link = |target: &str, at: &Path| std::os::unix::fs::symlink(target, at).unwrap();
        link("a", &ws.join("in"));
        link("../outside", &ws.join("out"));
        link("..", &ws.join("up"));
        link(root.join("outside").to_str().unwrap(), &ws.join("abs"));
        link("../../outside", &ws.join("deep/l"));
        link("../ws", &root.join("outside/back"));
        link("../ws_evil", &ws.join("a/evil"));
        Tree {
            _tmp: tmp,
            root,
            ws,
        }
    })
}

fn token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        ".", "..", "a", "b", "x", "in", "out", "up", "abs", "deep", "l", "back", "evil", "ws",
        "ws_evil", "outside", "new",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn escaping_paths_are_never_inside(tokens in prop::collection::vec(token(), 1..8), absolute in any::<bool>()) {
        let t = tree();
        let rel = tokens.join("/");
        let written = if absolute { format!("{}/{rel}", t.ws.display()) } else { rel.clone() };
        let facts = facts_for(&written, &t.ws, Path::new("/nonexistent-home"), &RealFs);
        let loc = locate(&facts, std::slice::from_ref(&t.ws));
        let raw = if absolute { PathBuf::from(&written) } else { t.ws.join(&rel) };
        // The kernel's answer for the path itself, or for its parent (where a new file
        // would be created).
        let kernel = std::fs::canonicalize(&raw)
            .ok()
            .or_else(|| raw.parent().and_then(|p| std::fs::canonicalize(p).ok()).map(|p| p.join("new")));
        if let Some(real) = kernel {
            if !real.starts_with(&t.ws) {
                prop_assert_ne!(loc, Location::Inside, "{} resolves to {} but was judged inside", written, real.display());
            }
            if std::fs::canonicalize(&raw).is_ok() {
                prop_assert_eq!(&facts.resolved, &real, "resolution of {} differs from the kernel's", written);
            }
        }
        let _ = &t.root;
    }
}
