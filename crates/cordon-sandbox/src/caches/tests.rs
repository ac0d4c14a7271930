#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
use super::*;
use std::os::unix::fs::PermissionsExt;

/// Directories of programs that tools put on `PATH` under HOME (relative to HOME).
const PROGRAM_DIRS_IN_HOME: &[&str] = &[
    "bin",
    ".local/bin",
    ".cargo/bin",
    "go/bin",
    ".local/share/pnpm",
    ".npm-global/bin",
    ".yarn/bin",
    ".config/yarn/global/node_modules/.bin",
    ".deno/bin",
    ".bun/bin",
    ".pyenv/bin",
    ".pyenv/shims",
    ".rbenv/bin",
    ".rbenv/shims",
    ".sdkman/bin",
    ".dotnet/tools",
    ".nvm/versions/node/v22.0.0/bin",
];

#[test]
fn every_cache_has_one_data_entry_and_a_layer_of_its_own() {
    assert_eq!(CACHE_WRITERS.len(), DEV_CACHES.len());
    for cache in DEV_CACHES {
        let entries: Vec<_> = CACHE_DATA.iter().filter(|(c, _)| c == cache).collect();
        assert_eq!(entries.len(), 1, "{cache}: one entry in CACHE_DATA");
    }
    for (cache, data) in CACHE_DATA {
        assert!(
            DEV_CACHES.contains(cache),
            "{cache} is not a developer cache"
        );
        if let CacheData::Only(parts) = data {
            for p in *parts {
                // One name at the top of the cache: the reset looks no deeper.
                assert!(
                    !p.is_empty() && !p.contains('/') && *p != "..",
                    "{cache}: {p}"
                );
            }
        }
    }
    let mut names: Vec<String> = DEV_CACHES.iter().map(|c| layer_name(c)).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), DEV_CACHES.len(), "{names:?}");
    assert_eq!(layer_name(".cache/pip"), "cache-pip");
    assert_eq!(layer_name("go/pkg/mod"), "go-pkg-mod");
    for i in SLOT_INSTALLS {
        let (cache, rest) = i.split_once('/').unwrap();
        assert!(DEV_CACHES.contains(&cache) && !rest.contains('/'), "{i}");
    }
}

#[test]
fn no_data_part_is_or_holds_a_directory_of_programs() {
    for (cache, data) in CACHE_DATA {
        let parts: Vec<PathBuf> = match data {
            CacheData::Whole => vec![PathBuf::from(cache)],
            CacheData::Only(parts) => parts.iter().map(|p| Path::new(cache).join(p)).collect(),
        };
        for part in parts {
            for bin in PROGRAM_DIRS_IN_HOME {
                assert!(
                    !Path::new(bin).starts_with(&part),
                    "{} is kept and holds {bin}, a directory of programs",
                    part.display()
                );
            }
        }
    }
    // The same at run time, against the directories of the PATH at hand.
    let home = Path::new("/h");
    let programs: Vec<PathBuf> = PROGRAM_DIRS_IN_HOME.iter().map(|b| home.join(b)).collect();
    for cache in DEV_CACHES {
        for persist in [Persist::Data, Persist::DataAndInstalls] {
            let keep = kept(cache, home, persist, &programs);
            if let Keep::Only(names) = keep {
                for n in names {
                    let at = home.join(cache).join(n);
                    let installs = SLOT_INSTALLS.iter().any(|i| home.join(i) == at);
                    assert!(
                        installs || !programs.iter().any(|d| d.starts_with(&at)),
                        "{}",
                        at.display()
                    );
                }
            }
        }
    }
}

#[test]
fn what_persists_of_each_cache() {
    let home = Path::new("/h");
    let only = |v: &[&'static str]| Keep::Only(v.to_vec());
    // (cache, persist, directories of programs, what is kept)
    let cases: &[(&str, Persist, &[&str], Keep)] = &[
        (
            ".cargo",
            Persist::Data,
            &[],
            only(&["registry", "git", ".global-cache"]),
        ),
        (
            ".cargo",
            Persist::DataAndInstalls,
            &[],
            only(&[
                "registry",
                "git",
                ".global-cache",
                "bin",
                ".crates.toml",
                ".crates2.json",
            ]),
        ),
        (".cargo", Persist::Everything, &[], Keep::All),
        (".npm", Persist::Data, &[], only(&["_cacache"])),
        (".npm", Persist::DataAndInstalls, &[], only(&["_cacache"])),
        (".cache/pip", Persist::Data, &[], Keep::All),
        ("go/pkg/mod", Persist::Data, &[], Keep::All),
        (".local/share/pnpm", Persist::Data, &[], only(&["store"])),
        (
            ".gradle",
            Persist::Data,
            &[],
            only(&["caches", "wrapper", "jdks"]),
        ),
        (".m2", Persist::Data, &[], only(&["repository", "wrapper"])),
        // A PATH that runs programs out of a data part keeps that part from persisting.
        (
            ".cargo",
            Persist::Data,
            &["/h/.cargo/registry/bin"],
            only(&["git", ".global-cache"]),
        ),
        (
            ".cache/pip",
            Persist::Data,
            &["/h/.cache/pip/bin"],
            only(&[]),
        ),
        ("go/pkg/mod", Persist::Data, &["/h/go/pkg/mod"], only(&[])),
        // PNPM_HOME on PATH holds the store, not the other way round.
        (
            ".local/share/pnpm",
            Persist::Data,
            &["/h/.local/share/pnpm"],
            only(&["store"]),
        ),
        (
            ".cargo",
            Persist::Data,
            &["/h/.cargo/bin"],
            only(&["registry", "git", ".global-cache"]),
        ),
    ];
    for (cache, persist, path, want) in cases {
        let programs: Vec<PathBuf> = path.iter().map(PathBuf::from).collect();
        assert_eq!(
            &kept(cache, home, *persist, &programs),
            want,
            "{cache} {persist:?} {path:?}"
        );
    }
}

#[test]
fn program_dirs_are_absolute_and_spelled_both_ways() {
    let t = tempfile::tempdir().unwrap();
    let real = t.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, t.path().join("link")).unwrap();
    let path = format!("relative/bin::{}", t.path().join("link").display());
    let dirs = program_dirs(Some(OsStr::new(&path)));
    assert!(dirs.contains(&t.path().join("link")));
    assert!(dirs.contains(&std::fs::canonicalize(&real).unwrap()));
    assert!(dirs.iter().all(|d| d.is_absolute()), "{dirs:?}");
    assert!(program_dirs(None).is_empty());
}

#[test]
fn programs_are_found_on_path() {
    let t = tempfile::tempdir().unwrap();
    let tool = t.path().join("npm");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::ffi::OsString::from(format!("/nonexistent:{}", t.path().display()));
    assert!(installed(&["npm", "npx"], &path));
    assert!(!installed(&["go"], &path));
}

#[test]
fn workspace_keys_are_32_hex_digits_and_differ() {
    let a = workspace_key(Path::new("/src/a"));
    assert_eq!(a.len(), 32);
    assert!(a.bytes().all(|b| b.is_ascii_hexdigit()), "{a}");
    assert_eq!(a, workspace_key(Path::new("/src/a")));
    assert_ne!(a, workspace_key(Path::new("/src/b")));
}

struct Fixture {
    _t: tempfile::TempDir,
    home: PathBuf,
    base: PathBuf,
    caches: Vec<PathBuf>,
}

impl Fixture {
    /// A HOME with `~/.cargo` (an overlay's upper layer) and without `~/.npm` (a plain
    /// directory).
    fn new() -> Fixture {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        let caches = vec![home.join(".cargo"), home.join(".npm")];
        let base = t.path().join("caches");
        Fixture {
            _t: t,
            home,
            base,
            caches,
        }
    }

    fn take(&self, workspace: &str, persist: Persist) -> CacheSlot {
        CacheSlot::take(&CacheRequest {
            base: &self.base,
            workspace: Path::new(workspace),
            home: &self.home,
            caches: &self.caches,
            persist,
            programs: &[],
        })
        .unwrap()
    }
}

#[test]
fn slots_are_per_workspace_exclusive_and_reused() {
    let f = Fixture::new();
    let a = f.take("/w1", Persist::Data);
    let b = f.take("/w1", Persist::Data);
    let w1 = f.base.join(workspace_key(Path::new("/w1")));
    assert_eq!(a.layers()[0].upper, w1.join("slot-0/cargo/upper"));
    assert_eq!(a.layers()[0].work, Some(w1.join("slot-0/cargo/work")));
    assert_eq!(b.layers()[0].upper, w1.join("slot-1/cargo/upper"));
    // The host has ~/.cargo (an upper layer over it) but no ~/.npm (a plain dir).
    assert_eq!(a.layers()[1].upper, w1.join("slot-0/npm/dir"));
    assert!(a.layers()[1].work.is_none());
    std::fs::create_dir(a.layers()[1].upper.join("_cacache")).unwrap();
    std::fs::write(a.layers()[1].upper.join("_cacache/kept"), "x").unwrap();
    drop(a);
    let c = f.take("/w1", Persist::Data);
    assert!(
        c.layers()[1].upper.join("_cacache/kept").exists(),
        "slot-0 is reused, its data kept"
    );
    // Another workspace has slots of its own, empty.
    let other = f.take("/w2", Persist::Data);
    assert!(
        other.layers()[1]
            .upper
            .starts_with(f.base.join(workspace_key(Path::new("/w2"))))
    );
    assert!(!other.layers()[1].upper.join("_cacache").exists());
}

/// Make an overlayfs whiteout (a 0:0 character device) at `p`, when this kernel lets
/// this user (Linux 5.8 lets anyone make that one device).
fn whiteout(p: &Path) -> bool {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        p,
        FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0),
        0,
    )
    .is_ok()
}

#[test]
fn only_data_outlives_a_run() {
    let f = Fixture::new();
    let outside = f.home.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep-me"), "host").unwrap();
    let slot = f.take("/w", Persist::Data);
    let cargo = slot.layers()[0].upper.clone();
    let npm = slot.layers()[1].upper.clone();
    // What a run leaves: code and configuration beside the data, links out, a
    // directory it locked away, overlayfs's marks.
    for d in ["registry/cache/idx", "bin", "locked/deep"] {
        std::fs::create_dir_all(cargo.join(d)).unwrap();
    }
    std::fs::write(cargo.join("registry/cache/idx/a.crate"), "data").unwrap();
    std::fs::write(cargo.join("bin/cargo"), "#!/bin/sh\necho planted").unwrap();
    std::fs::write(cargo.join("config.toml"), "[build]\nrustc-wrapper='/x'").unwrap();
    std::fs::write(cargo.join(".global-cache"), "sqlite").unwrap();
    std::os::unix::fs::symlink(&outside, cargo.join("git")).unwrap();
    rustix::fs::setxattr(
        cargo.join("bin"),
        "user.overlay.opaque",
        b"y",
        rustix::fs::XattrFlags::empty(),
    )
    .ok();
    std::fs::set_permissions(cargo.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let wh = whiteout(&cargo.join("env"));
    for d in ["_cacache/index", "_npx/x/node_modules/.bin"] {
        std::fs::create_dir_all(npm.join(d)).unwrap();
    }
    std::fs::write(npm.join("_npx/x/node_modules/.bin/x"), "planted").unwrap();
    // Even the layer's own mode.
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o000)).unwrap();
    drop(slot);

    let slot = f.take("/w", Persist::Data);
    let mut removed: Vec<String> = slot
        .removed()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    removed.sort();
    let mut want = vec![
        ".cargo/bin",
        ".cargo/config.toml",
        ".cargo/git",
        ".cargo/locked",
        ".npm/_npx",
    ];
    if wh {
        want.push(".cargo/env");
    }
    want.sort();
    assert_eq!(removed, want);
    let mut left: Vec<String> = std::fs::read_dir(&cargo)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [".global-cache", "registry"]);
    assert_eq!(
        std::fs::read_to_string(cargo.join("registry/cache/idx/a.crate")).unwrap(),
        "data"
    );
    assert_eq!(
        std::fs::metadata(&cargo).unwrap().permissions().mode() & 0o7777,
        0o700
    );
    assert!(npm.join("_cacache/index").is_dir() && !npm.join("_npx").exists());
    // The link was removed, not followed.
    assert_eq!(
        std::fs::read_to_string(outside.join("keep-me")).unwrap(),
        "host"
    );
    drop(slot);
    // Nothing left to remove.
    assert!(f.take("/w", Persist::Data).removed().is_empty());
}

#[test]
fn a_slot_keeps_its_installs_and_asked_keeps_everything() {
    let f = Fixture::new();
    let slot = f.take("/w", Persist::DataAndInstalls);
    let cargo = slot.layers()[0].upper.clone();
    std::fs::create_dir_all(cargo.join("bin")).unwrap();
    std::fs::write(cargo.join("bin/rg"), "tool").unwrap();
    std::fs::write(cargo.join(".crates.toml"), "[v1]").unwrap();
    std::fs::write(cargo.join("config.toml"), "x").unwrap();
    std::os::unix::fs::symlink("/", cargo.join(".crates2.json")).unwrap();
    drop(slot);
    let slot = f.take("/w", Persist::DataAndInstalls);
    let mut removed = slot.removed().to_vec();
    removed.sort();
    assert_eq!(
        removed,
        [
            PathBuf::from(".cargo/.crates2.json"),
            PathBuf::from(".cargo/config.toml")
        ]
    );
    assert!(cargo.join("bin/rg").is_file() && cargo.join(".crates.toml").is_file());
    std::fs::write(cargo.join("config.toml"), "x").unwrap();
    drop(slot);
    assert!(f.take("/w", Persist::Everything).removed().is_empty());
    assert!(cargo.join("config.toml").is_file());
}

#[test]
fn a_path_that_is_not_a_cache_under_home_is_refused() {
    let f = Fixture::new();
    for caches in [
        vec![f.home.join(".ssh")],
        vec![PathBuf::from("/elsewhere/.cargo")],
    ] {
        let e = CacheSlot::take(&CacheRequest {
            base: &f.base,
            workspace: Path::new("/w"),
            home: &f.home,
            caches: &caches,
            persist: Persist::Data,
            programs: &[],
        })
        .unwrap_err();
        assert!(e.message.contains("not a developer cache"), "{e}");
    }
}
