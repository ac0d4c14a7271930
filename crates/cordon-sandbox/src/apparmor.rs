//! Ubuntu's restriction of unprivileged user namespaces, and the AppArmor profile that
//! lifts it for the cordon binary alone.
//!
//! With `kernel.apparmor_restrict_unprivileged_userns = 1` (Ubuntu 24.04 and later), a
//! user namespace made by an *unconfined* program gets no capabilities, so cordon cannot
//! build its mounts and only the fallback tier is left. A profile attached to the
//! binary's exact path that allows `userns,` lifts it for that binary only; the profile is
//! otherwise unconfined (`flags=(unconfined)`): it adds no other permission, because an
//! unconfined program has every other one already. Whether a profile applies is read
//! from the kernel (this process's AppArmor label), not from files.

use std::path::{Path, PathBuf};

/// Where AppArmor profiles are installed.
pub const PROFILE_DIR: &str = "/etc/apparmor.d";

/// The path the Debian package installs the binary at, and whose profile it ships as
/// `/etc/apparmor.d/cordon`.
pub const PACKAGED_PATH: &str = "/usr/bin/cordon";

/// A profile for one installed binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The profile's name (`cordon` for the packaged path).
    pub name: String,
    /// The file it goes in, under [`PROFILE_DIR`].
    pub file: PathBuf,
    /// The profile.
    pub text: String,
}

/// The profile that lets the binary at `exe` create user namespaces. The path must be
/// absolute and spelled only with letters, digits and `._+-/`: anything else (a space, a
/// quote, a glob character such as `*`, `?`, `[` or `{`) would make the attachment match
/// other paths or need quoting rules, and is refused with the reason.
pub fn profile_for(exe: &Path) -> Result<Profile, AppArmorError> {
    let Some(text) = exe.to_str() else {
        return Err(AppArmorError::NotUtf8(exe.to_path_buf()));
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || "._+-/".contains(c);
    if !exe.is_absolute() || !text.chars().all(plain) || text.contains("//") {
        return Err(AppArmorError::NotPlain(text.to_string()));
    }
    let name = if text == PACKAGED_PATH {
        "cordon".to_string()
    } else {
        format!("cordon{}", text.replace('/', "."))
    };
    let profile = format!(
        "# AppArmor profile for {text}, written by `cordon setup apparmor` (or the package).\n\
         # It lets this binary create user namespaces where\n\
         # kernel.apparmor_restrict_unprivileged_userns = 1 (Ubuntu 24.04 and later), so that\n\
         # cordon's full tier works. It grants nothing else: the binary stays unconfined.\n\
         abi <abi/4.0>,\n\
         include <tunables/global>\n\
         \n\
         profile {name} {text} flags=(unconfined) {{\n\
         \x20 userns,\n\
         \n\
         \x20 # Site-specific additions and overrides.\n\
         \x20 include if exists <local/{name}>\n\
         }}\n"
    );
    Ok(Profile {
        file: Path::new(PROFILE_DIR).join(&name),
        name,
        text: profile,
    })
}

/// Write `profile` to its file (root only: the directory is root's). The caller says how
/// to load it.
pub fn install(profile: &Profile, exe: &Path) -> Result<(), AppArmorError> {
    if !rustix::process::geteuid().is_root() {
        return Err(AppArmorError::NeedsRoot {
            file: profile.file.clone(),
            exe: exe.to_path_buf(),
        });
    }
    cordon_fs::write_at(&profile.file, profile.text.as_bytes(), 0o644).map_err(|source| {
        AppArmorError::Write {
            file: profile.file.clone(),
            source,
        }
    })
}

/// Why a profile cannot be made for a binary, or cannot be written.
#[derive(Debug)]
#[non_exhaustive]
pub enum AppArmorError {
    /// The binary's path is not valid UTF-8.
    NotUtf8(PathBuf),
    /// The binary's path is not absolute or holds a character a profile cannot name
    /// exactly (anything but letters, digits and `._+-/`, or `//`).
    NotPlain(String),
    /// Writing the profile needs root.
    NeedsRoot {
        /// The profile's file.
        file: PathBuf,
        /// The binary it is for (the fix names it).
        exe: PathBuf,
    },
    /// The profile's file could not be written.
    Write {
        /// The profile's file.
        file: PathBuf,
        /// What failed.
        source: cordon_fs::FsError,
    },
}

impl std::fmt::Display for AppArmorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AppArmorError::NotUtf8(exe) => write!(
                f,
                "{} is not valid UTF-8; install cordon at a plain path such as /usr/local/bin/cordon",
                exe.display()
            ),
            AppArmorError::NotPlain(text) => write!(
                f,
                "{text} cannot be named exactly in an AppArmor profile (it must be an absolute path of letters, digits and ._+-/ only); install cordon at a plain path such as /usr/local/bin/cordon"
            ),
            AppArmorError::NeedsRoot { file, exe } => write!(
                f,
                "writing {} needs root, once: run `{}`",
                file.display(),
                fix_command(exe)
            ),
            AppArmorError::Write { file, source } => {
                write!(f, "cannot write {}: {source}", file.display())
            }
        }
    }
}

impl std::error::Error for AppArmorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AppArmorError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// This process's AppArmor label (`unconfined`, or `NAME (MODE)` under a profile);
/// `None` where AppArmor is not enabled.
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
pub fn label() -> Option<String> {
    [
        "/proc/self/attr/apparmor/current",
        "/proc/self/attr/current",
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok())
    .map(|s| s.trim_end_matches(['\0', '\n']).to_string())
    .filter(|s| !s.is_empty())
}

/// Is this process under an AppArmor profile (so the restriction of unconfined programs
/// does not apply to it)?
pub fn under_profile() -> bool {
    label().is_some_and(|l| l != "unconfined")
}

/// A profile file under [`PROFILE_DIR`] that attaches to `exe` and allows `userns`.
/// Read-only and bounded: files of at most 64 KiB, the directory's top level only.
pub fn installed_for(exe: &Path) -> Option<PathBuf> {
    let exe = exe.to_str()?;
    let entries = std::fs::read_dir(PROFILE_DIR).ok()?;
    entries
        .flatten()
        .map(|e| e.path())
        .find(|p| cordon_fs::read_regular_text(p, 64 * 1024).is_ok_and(|text| attaches(&text, exe)))
}

/// Does the profile text attach to `exe` and allow `userns`?
fn attaches(text: &str, exe: &str) -> bool {
    let lines = || {
        text.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
    };
    let header = lines().any(|l| {
        let mut words = l.split_whitespace();
        match words.next() {
            Some("profile") => words.nth(1) == Some(exe),
            Some(first) => first == exe,
            None => false,
        }
    });
    header && lines().any(|l| l == "userns," || l.starts_with("userns create"))
}

/// The command that installs the profile for `exe`: `cordon setup apparmor` as root.
pub fn fix_command(exe: &Path) -> String {
    format!("sudo {} setup apparmor", exe.display())
}

/// What `cordon doctor` says about AppArmor and this binary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// `kernel.apparmor_restrict_unprivileged_userns` (`None`: not on this kernel).
    pub restrict_unprivileged_userns: Option<u64>,
    /// This process's label (`None`: AppArmor is not enabled).
    pub label: Option<String>,
    /// This binary.
    pub binary: Option<PathBuf>,
    /// The installed profile that attaches to this binary and allows `userns`.
    pub profile: Option<PathBuf>,
    /// The command that lifts the restriction for this binary, when it applies.
    pub fix: Option<String>,
}

/// Read the kernel's setting, this process's label and the installed profiles.
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
pub fn report() -> Report {
    let restrict =
        std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
            .ok()
            .and_then(|v| v.trim().parse().ok());
    let binary = std::env::current_exe().ok();
    Report {
        restrict_unprivileged_userns: restrict,
        label: label(),
        profile: binary.as_deref().and_then(installed_for),
        fix: binary
            .as_deref()
            .and_then(|b| (restrict == Some(1) && !under_profile()).then(|| fix_command(b))),
        binary,
    }
}

/// One sentence for a run or a report where AppArmor's restriction is what keeps the
/// full tier away; `None` where it is not on or does not apply to this process.
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
pub fn advice() -> Option<String> {
    let on = std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
        .is_ok_and(|v| v.trim() == "1");
    if !on || under_profile() || rustix::process::geteuid().is_root() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    Some(format!(
        "AppArmor restricts user namespaces of unconfined programs here; `{}` installs a profile that lets this binary create them (once, as root)",
        fix_command(&exe)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packaged_path_gets_the_cordon_profile() {
        let p = profile_for(Path::new("/usr/bin/cordon")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.name, "cordon");
        assert_eq!(p.file, Path::new("/etc/apparmor.d/cordon"));
        assert!(
            p.text
                .contains("profile cordon /usr/bin/cordon flags=(unconfined) {\n  userns,\n")
        );
        assert!(attaches(&p.text, "/usr/bin/cordon"));
        assert!(!attaches(&p.text, "/usr/bin/cordon2"));
    }

    #[test]
    fn another_path_gets_a_profile_of_its_own() {
        let p =
            profile_for(Path::new("/home/u/.cargo/bin/cordon")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.name, "cordon.home.u..cargo.bin.cordon");
        assert!(attaches(&p.text, "/home/u/.cargo/bin/cordon"));
    }

    #[test]
    fn paths_that_would_match_more_are_refused() {
        for bad in [
            "cordon",
            "/opt/my tools/cordon",
            "/opt/*/cordon",
            "/opt/c?rdon",
            "/opt/{a,b}/cordon",
            "/opt/[ab]/cordon",
            "/opt/\"x\"/cordon",
            "/opt//cordon",
            "/opt/x,y/cordon",
        ] {
            assert!(
                matches!(profile_for(Path::new(bad)), Err(AppArmorError::NotPlain(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn each_refusal_is_one_sentence_with_the_fix() {
        let e = profile_for(Path::new("/opt/*/cordon")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/opt/*/cordon cannot be named exactly in an AppArmor profile (it must be an \
             absolute path of letters, digits and ._+-/ only); install cordon at a plain path \
             such as /usr/local/bin/cordon"
        );
        let e = AppArmorError::NeedsRoot {
            file: "/etc/apparmor.d/cordon".into(),
            exe: "/usr/bin/cordon".into(),
        };
        assert_eq!(
            e.to_string(),
            "writing /etc/apparmor.d/cordon needs root, once: run `sudo /usr/bin/cordon setup apparmor`"
        );
    }

    #[test]
    fn a_profile_without_userns_or_for_another_path_does_not_count() {
        assert!(!attaches(
            "profile x /usr/bin/cordon {\n}\n",
            "/usr/bin/cordon"
        ));
        assert!(!attaches(
            "# profile x /usr/bin/cordon {\n userns,\n}",
            "/usr/bin/cordon"
        ));
        assert!(attaches(
            "/usr/bin/cordon flags=(unconfined) {\n  userns,\n}",
            "/usr/bin/cordon"
        ));
    }
}
