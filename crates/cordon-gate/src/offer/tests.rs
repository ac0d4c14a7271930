#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The decision of what a blocked write may be offered, one line per case, on a tree
//! made for it: a HOME with a workspace, a directory on `PATH` in HOME and one reached
//! through a symlink, a git repository, cordon's state, and ordinary directories.
#![allow(clippy::unwrap_used, clippy::panic)] // test code

use super::*;
use std::os::unix::fs::{PermissionsExt, symlink};

struct Tree {
    _top: tempfile::TempDir,
    _var_tmp: tempfile::TempDir,
    top: PathBuf,
    home: PathBuf,
    var_tmp: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let top_dir = tempfile::tempdir().unwrap();
        let top = top_dir.path().canonicalize().unwrap();
        let var_tmp_dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let var_tmp = var_tmp_dir.path().canonicalize().unwrap();
        let home = top.join("home");
        let dir = |p: PathBuf| {
            std::fs::create_dir_all(&p).unwrap();
            // Whatever the umask: an ordinary directory is the user's alone.
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        for d in [
            "home/src/proj",
            "home/.local/bin",
            "home/.ssh",
            "home/.config",
            "home/other-project",
            "home/many",
            "repo/.git/hooks",
            "bare.git/objects",
            "bare.git/hooks",
            "bare.git/refs",
            "realbin",
            "state",
            "shared",
        ] {
            dir(top.join(d));
        }
        dir(var_tmp.join("out"));
        std::fs::set_permissions(top.join("shared"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        for f in [
            "home/other-project/out.txt",
            "home/notes.txt",
            "home/.bashrc",
            "bare.git/HEAD",
        ] {
            std::fs::write(top.join(f), "host\n").unwrap();
        }
        symlink(top.join("realbin"), top.join("pathlink")).unwrap();
        symlink(home.join(".local/bin"), top.join("tobin")).unwrap();
        symlink(home.join("other-project"), home.join("link-to-other")).unwrap();
        symlink(home.join("missing"), home.join("dangling")).unwrap();
        Tree {
            _top: top_dir,
            _var_tmp: var_tmp_dir,
            top,
            home,
            var_tmp,
        }
    }

    /// `~/…` in HOME, `@/…` in the tree, `%/…` in its directory in `/var/tmp`.
    fn path(&self, p: &str) -> PathBuf {
        for (prefix, base) in [("~", &self.home), ("@", &self.top), ("%", &self.var_tmp)] {
            if let Some(rest) = p.strip_prefix(prefix) {
                return PathBuf::from(format!("{}{rest}", base.display()));
            }
        }
        PathBuf::from(p)
    }

    fn places(&self) -> HostPlaces {
        let search = format!(
            "{}:{}:/usr/local/bin:/usr/bin:/bin",
            self.home.join(".local/bin").display(),
            self.top.join("pathlink").display()
        );
        HostPlaces::new(&self.home, self.home.join("src/proj"))
            .search_path(OsStr::new(&search), &self.home.join("src/proj"))
            .own_place(self.top.join("state"))
    }
}

/// What a case must come to.
enum Want {
    /// No offer, for a reason that says this.
    No(&'static str),
    /// This directory.
    Dir(&'static str),
    /// This file alone.
    File(&'static str),
}
use Want::{Dir, File, No};

fn check(tree: &Tree, places: &HostPlaces, cases: &[(&str, Want)]) {
    for (blocked, want) in cases {
        let got = offer_write(&tree.path(blocked), places);
        match (want, &got) {
            (No(why), Err(n)) if n.reason.contains(why) => {}
            (Dir(p), Ok(g)) if g.kind() == GrantKind::Directory && g.path() == tree.path(p) => {}
            (File(p), Ok(g)) if g.kind() == GrantKind::File && g.path() == tree.path(p) => {}
            _ => panic!("{blocked}: got {got:?}"),
        }
    }
}

#[test]
fn what_a_blocked_write_may_be_offered() {
    let tree = Tree::new();
    for i in 0..=MAX_CHECKED_ENTRIES {
        std::fs::write(tree.path("~/many").join(i.to_string()), "").unwrap();
    }
    check(
        &tree,
        &tree.places(),
        &[
            ("/usr/local/bin/x", No("/usr/local/bin")),
            ("~/.local/bin/x", No("a directory on PATH")),
            ("/etc/x", No("/etc, a system directory")),
            ("/x", No("top-level")),
            ("~/x", No("is HOME")),
            ("~/src/x", No("holds the workspace")),
            ("~/src/proj/../x", No("holds the workspace")),
            ("@/x", No("holds HOME")),
            ("~/.bashrc", No("protected (~/.bashrc)")),
            ("~/.ssh/x", No("secret (~/.ssh)")),
            ("~/.config/x", No("holds ~/.config/")),
            ("@/repo/.git/hooks/x", No("protected (.git/hooks)")),
            ("@/repo/.git/x", No("git directory")),
            ("@/bare.git/hooks/x", No("git directory")),
            // The PATH entry is a link to this directory; the write goes through a link
            // to a PATH directory.
            ("@/realbin/x", No("a directory on PATH")),
            ("@/tobin/x", No("a directory on PATH")),
            ("@/state/x", No("cordon's own state")),
            ("@/shared/x", No("other users can write")),
            ("~/many/x", No("too many")),
            (
                "~/notes.txt",
                No("needs its directory mounted copy-on-write, and"),
            ),
            ("~/dangling", No("leads nowhere")),
            ("~/nowhere/x", No("does not exist")),
            ("relative/x", No("not absolute")),
            ("%/out/x", Dir("%/out")),
            ("~/other-project/new.txt", Dir("~/other-project")),
            ("~/other-project", Dir("~/other-project")),
            ("~/other-project/out.txt", File("~/other-project/out.txt")),
            // Offered by where the link leads.
            ("~/link-to-other/out.txt", File("~/other-project/out.txt")),
            ("~/link-to-other/new.txt", Dir("~/other-project")),
        ],
    );
}

#[test]
fn without_single_file_grants_the_directory_is_offered_and_says_why() {
    let tree = Tree::new();
    let places = tree.places().file_grants(false);
    check(
        &tree,
        &places,
        &[
            ("~/other-project/out.txt", Dir("~/other-project")),
            (
                "~/notes.txt",
                No("is HOME; and the file alone cannot be granted"),
            ),
        ],
    );
    let g = offer_write(&tree.path("~/other-project/out.txt"), &places).unwrap();
    let text = g.describe();
    assert!(text.starts_with("write access to the directory "), "{text}");
    assert!(
        text.contains("cannot make a single file writable"),
        "{text}"
    );
}

#[test]
fn another_users_directory_or_file_is_not_offered() {
    let tree = Tree::new();
    let places = tree.places().user(rustix::process::geteuid().as_raw() + 1);
    check(
        &tree,
        &places,
        &[
            ("~/other-project/new.txt", No("belongs to another user")),
            ("~/other-project/out.txt", No("belongs to another user")),
        ],
    );
    // Root can hand a file to another user: a directory holding it is not offered.
    if rustix::process::geteuid().is_root() {
        let f = tree.path("~/other-project/theirs");
        std::fs::write(&f, "").unwrap();
        std::os::unix::fs::lchown(&f, Some(65534), Some(65534)).unwrap();
        check(
            &tree,
            &tree.places(),
            &[(
                "~/other-project/new.txt",
                No("holds theirs, which belongs to another user"),
            )],
        );
    }
}

#[test]
fn the_offer_names_the_path_and_its_kind_and_binds_the_approval_to_it() {
    let tree = Tree::new();
    let places = tree.places();
    let file = offer_write(&tree.path("~/other-project/out.txt"), &places).unwrap();
    let dir = offer_write(&tree.path("~/other-project/new.txt"), &places).unwrap();
    let shown = tree.path("~/other-project").display().to_string();
    assert_eq!(
        file.describe(),
        format!("write access to the file {shown}/out.txt alone")
    );
    assert_eq!(file.key(), format!("write-file:{shown}/out.txt"));
    assert_eq!(
        dir.describe(),
        format!("write access to the directory {shown}")
    );
    assert_eq!(dir.key(), format!("write:{shown}"));
    assert!(file.still_holds(&places).is_ok());
    assert!(dir.still_holds(&places).is_ok());
    // Replaced by a link to HOME after it was offered: the grant no longer holds.
    let d = tree.path("~/other-project");
    std::fs::rename(&d, tree.path("~/moved")).unwrap();
    symlink(&tree.home, &d).unwrap();
    assert!(dir.still_holds(&places).is_err());
    assert!(file.still_holds(&places).is_err());
}
