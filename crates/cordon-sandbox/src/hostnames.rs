//! The names of what the host has installed, for the merge's shadowing rule.
//!
//! `cordon_policy::obeyed::shadows` asks whether an entry a run left takes the place of
//! a program on the host's `PATH` or of a Python module its interpreters import. This
//! module answers the I/O half once per merge: it lists the directories of `PATH` for
//! executables and the host's Python library directories for top-level modules.
//!
//! It reads directory listings (and the metadata of their entries) only. It never runs
//! Python to ask for `sys.path`: that would run whatever start-up hooks the host's
//! interpreter has, on every merge, to learn what a listing shows. The work is bounded
//! (see [`Limits`]): past a limit, names are missed, which can only let a shadow go
//! unnoticed, never hold an ordinary file. Directories that do not exist or cannot be
//! read are skipped; nothing here fails or panics.

use cordon_policy::obeyed::{HostNames, python_module_name};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs::{self, DirEntry};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// How much a gathering may read.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// Directory entries read in all, `PATH` and Python together.
    entries: usize,
    /// Entries read from any one directory.
    per_dir: usize,
    /// `PATH` directories listed.
    path_dirs: usize,
    /// Python library directories listed.
    python_dirs: usize,
}

/// Generous for a developer machine: `/usr/bin` holds a few thousand names, a
/// `dist-packages` a few hundred.
const LIMITS: Limits = Limits {
    entries: 200_000,
    per_dir: 50_000,
    path_dirs: 256,
    python_dirs: 512,
};

/// What the host has installed: the executables in each absolute directory of
/// `path_var` (a `PATH`-style list; relative entries name nothing stable and are
/// skipped) and the top-level modules of the host's Pythons, from the standard library
/// and site directories under `/usr/lib/python3*`, `/usr/lib64/python3*`,
/// `/usr/local/lib/python3*` (Debian's `/usr/lib/python3/dist-packages` among them),
/// the user site under `home`, pyenv's and uv's interpreters, and pipx's and uv's tool
/// environments (where pre-commit is often installed).
pub fn gather_host_names(path_var: &OsStr, home: &Path) -> HostNames {
    gather(path_var, home, Path::new("/"), LIMITS)
}

/// [`gather_host_names`] with the system directories under `system_root`, for tests.
fn gather(path_var: &OsStr, home: &Path, system_root: &Path, limits: Limits) -> HostNames {
    let mut budget = Budget {
        left: limits.entries,
        per_dir: limits.per_dir,
    };
    let mut names = HostNames::new();
    let mut listed = BTreeSet::new();
    let path_dirs = std::env::split_paths(path_var)
        .filter(|d| d.is_absolute())
        .take(limits.path_dirs);
    for dir in path_dirs {
        // `/bin` and `/usr/bin` are often one directory: list it once.
        if !listed.insert(fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone())) {
            continue;
        }
        for entry in budget.list(&dir) {
            if is_executable(&entry) {
                names.add_program(&entry.file_name());
            }
        }
    }
    let python_dirs = python_dirs(home, system_root, &mut budget);
    for dir in python_dirs.iter().take(limits.python_dirs) {
        for entry in budget.list(dir) {
            add_module(&mut names, &entry);
        }
    }
    names
}

/// Add the top-level modules of the virtualenv `venv` (a directory holding `pyvenv.cfg`)
/// to `names`: `python -m tool` with the project's interpreter imports a module at the
/// root in place of the environment's own `tool` (pytest, black, mypy, …).
pub fn add_venv_modules(names: &mut HostNames, venv: &Path) {
    let mut budget = Budget {
        left: LIMITS.per_dir,
        per_dir: LIMITS.per_dir,
    };
    for version in budget.subdirs(&venv.join("lib"), "python3") {
        for entry in budget.list(&version.join("site-packages")) {
            add_module(names, &entry);
        }
    }
}

/// What is left to read.
struct Budget {
    left: usize,
    per_dir: usize,
}

impl Budget {
    /// The entries of `dir`, as many as the budget allows; none when it cannot be read.
    fn list(&mut self, dir: &Path) -> Vec<DirEntry> {
        let Ok(read) = fs::read_dir(dir) else {
            return Vec::new();
        };
        let entries: Vec<DirEntry> = read
            .take(self.per_dir.min(self.left))
            .filter_map(Result::ok)
            .collect();
        self.left = self.left.saturating_sub(entries.len());
        entries
    }

    /// The subdirectories of `dir` whose names start with `prefix`, links followed.
    fn subdirs(&mut self, dir: &Path, prefix: &str) -> Vec<PathBuf> {
        self.list(dir)
            .into_iter()
            .filter(|e| {
                e.file_name()
                    .as_encoded_bytes()
                    .starts_with(prefix.as_bytes())
            })
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect()
    }
}

/// A regular file (links followed) that someone may execute. The listing's entry type
/// spares a look at a directory, and a regular file is looked at beside its directory's
/// descriptor (one path component, not the whole path).
fn is_executable(entry: &DirEntry) -> bool {
    let meta = match entry.file_type() {
        Ok(t) if t.is_dir() => return false,
        Ok(t) if t.is_file() => entry.metadata(),
        _ => fs::metadata(entry.path()),
    };
    meta.is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `entry` is a directory (links followed), from the listing's entry type when
/// it is not a link.
fn is_dir(entry: &DirEntry) -> bool {
    match entry.file_type() {
        Ok(t) if !t.is_symlink() => t.is_dir(),
        _ => entry.path().is_dir(),
    }
}

/// The directories whose entries an interpreter installed under `prefix/lib/python3.X`
/// imports by top-level name.
fn install_dirs(version_dir: &Path) -> [PathBuf; 4] {
    [
        version_dir.to_path_buf(),
        version_dir.join("lib-dynload"),
        version_dir.join("site-packages"),
        version_dir.join("dist-packages"),
    ]
}

/// Every Python library directory of the host, from listings of the places Pythons are
/// installed.
fn python_dirs(home: &Path, system_root: &Path, budget: &mut Budget) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for lib in ["usr/lib", "usr/lib64", "usr/local/lib", "usr/local/lib64"] {
        for version in budget.subdirs(&system_root.join(lib), "python3") {
            out.extend(install_dirs(&version));
        }
    }
    for version in budget.subdirs(&home.join(".local/lib"), "python3") {
        out.push(version.join("site-packages"));
    }
    // Whole interpreters: <base>/<name>/lib/python3.X.
    for base in [".pyenv/versions", ".local/share/uv/python"] {
        for interpreter in budget.subdirs(&home.join(base), "") {
            for version in budget.subdirs(&interpreter.join("lib"), "python3") {
                out.extend(install_dirs(&version));
            }
        }
    }
    // Tool environments: <base>/<tool>/lib/python3.X/site-packages.
    for base in [
        ".local/share/pipx/venvs",
        ".local/pipx/venvs",
        ".local/share/uv/tools",
    ] {
        for venv in budget.subdirs(&home.join(base), "") {
            for version in budget.subdirs(&venv.join("lib"), "python3") {
                out.push(version.join("site-packages"));
            }
        }
    }
    out
}

/// Record the module `entry` of a library directory gives, if any.
fn add_module(names: &mut HostNames, entry: &DirEntry) {
    let file_name = entry.file_name();
    let is_dir = is_dir(entry);
    let Some(module) = python_module_name(&file_name, is_dir) else {
        return;
    };
    if module == "__pycache__" {
        return;
    }
    // A package without an __init__ is a namespace package. An __init__ that is only an
    // extension module is not looked for: such a package counts as a namespace, the
    // side on which the shadowing rule holds more, not less.
    let regular = !is_dir
        || ["__init__.py", "__init__.pyc"]
            .iter()
            .any(|i| entry.path().join(i).is_file());
    if regular {
        names.add_python_module(module);
    } else {
        names.add_python_namespace(module);
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn file(path: &Path, mode: u32) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, b"").unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    fn path_var(dirs: &[&Path]) -> std::ffi::OsString {
        std::env::join_paths(dirs).unwrap()
    }

    #[test]
    fn executables_on_path_are_programs() {
        let t = tempfile::tempdir().unwrap();
        let (bin1, bin2) = (t.path().join("bin1"), t.path().join("bin2"));
        file(&bin1.join("git"), 0o755);
        file(&bin1.join("notes.txt"), 0o644);
        fs::create_dir(bin1.join("dir")).unwrap();
        symlink(bin1.join("git"), bin1.join("linked-git")).unwrap();
        symlink(bin1.join("missing"), bin1.join("dangling")).unwrap();
        file(&bin2.join("Node"), 0o700);
        let path = path_var(&[
            &bin1,
            Path::new("relative/bin"),
            Path::new("/nonexistent/bin"),
            &bin2,
            &bin1,
        ]);
        let names = gather(&path, &t.path().join("home"), &t.path().join("sys"), LIMITS);
        for (name, want) in [
            ("git", true),
            ("linked-git", true),
            ("node", true),
            ("NODE", true),
            ("notes.txt", false),
            ("dir", false),
            ("dangling", false),
        ] {
            assert_eq!(names.has_program(OsStr::new(name)), want, "{name}");
        }
        assert_eq!(names.program_count(), 3);
    }

    #[test]
    fn python_modules_come_from_the_hosts_library_directories() {
        let t = tempfile::tempdir().unwrap();
        let (sys, home) = (t.path().join("sys"), t.path().join("home"));
        let std = sys.join("usr/lib/python3.12");
        for (path, mode) in [
            (std.join("os.py"), 0o644),
            (std.join("json/__init__.py"), 0o644),
            (std.join("lib-dynload/_ssl.cpython-312-x86_64-linux-gnu.so"), 0o755),
            (std.join("site-packages/requests/__init__.py"), 0o644),
            (std.join("site-packages/google/protobuf/__init__.py"), 0o644),
            (std.join("site-packages/six.py"), 0o644),
            (std.join("site-packages/_yaml.abi3.so"), 0o755),
            (std.join("site-packages/requests-2.0.dist-info/METADATA"), 0o644),
            (std.join("site-packages/distutils-precedence.pth"), 0o644),
            (std.join("site-packages/__pycache__/six.cpython-312.pyc"), 0o644),
            (sys.join("usr/lib/python3/dist-packages/apt/__init__.py"), 0o644),
            (sys.join("usr/local/lib/python3.11/dist-packages/localmod.py"), 0o644),
            (sys.join("usr/lib64/python3.12/site-packages/rpm/__init__.py"), 0o644),
            (home.join(".local/lib/python3.12/site-packages/usermod.py"), 0o644),
            (home.join(".pyenv/versions/3.11.9/lib/python3.11/pyenvstd.py"), 0o644),
            (
                home.join(".pyenv/versions/3.11.9/lib/python3.11/site-packages/pyenvpkg/__init__.py"),
                0o644,
            ),
            (
                home.join(".local/share/pipx/venvs/pre-commit/lib/python3.12/site-packages/pre_commit/__init__.py"),
                0o644,
            ),
            (
                home.join(".local/share/uv/tools/ruff/lib/python3.12/site-packages/ruff/__init__.py"),
                0o644,
            ),
        ] {
            file(&path, mode);
        }
        let names = gather(OsStr::new(""), &home, &sys, LIMITS);
        for (name, want) in [
            ("os", true),
            ("json", true),
            ("_ssl", true),
            ("requests", true),
            ("google", true),
            ("six", true),
            ("_yaml", true),
            ("apt", true),
            ("localmod", true),
            ("rpm", true),
            ("usermod", true),
            ("pyenvstd", true),
            ("pyenvpkg", true),
            ("pre_commit", true),
            ("ruff", true),
            ("Requests", false),
            ("requests-2.0.dist-info", false),
            ("distutils-precedence", false),
            ("__pycache__", false),
            ("site-packages", false),
            ("python3", false),
        ] {
            assert_eq!(names.has_python_module(OsStr::new(name)), want, "{name}");
        }
        assert!(names.is_python_namespace(OsStr::new("google")));
        assert!(!names.is_python_namespace(OsStr::new("requests")));
    }

    #[test]
    fn the_work_is_bounded() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("bin");
        for i in 0..20 {
            file(&bin.join(format!("tool{i}")), 0o755);
        }
        let small = Limits {
            entries: 5,
            ..LIMITS
        };
        let names = gather(&path_var(&[&bin]), t.path(), t.path(), small);
        assert_eq!(names.program_count(), 5);
        let per_dir = Limits {
            per_dir: 3,
            ..LIMITS
        };
        let names = gather(&path_var(&[&bin]), t.path(), t.path(), per_dir);
        assert_eq!(names.program_count(), 3);
    }

    #[test]
    fn this_host_has_a_shell() {
        let names = gather_host_names(OsStr::new("/usr/bin:/bin"), Path::new("/nonexistent"));
        assert!(names.has_program(OsStr::new("sh")));
    }
}
