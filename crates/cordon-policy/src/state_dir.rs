//! Where cordon keeps its own state (store, audit log, signing key, export queue,
//! slots, caches): the one resolver that the store (which writes there), the sandbox
//! (which masks it and keeps slots and caches in it) and the protected-write guard (which
//! never lets a command write it) all call, so that they cannot disagree.
//!
//! `$CORDON_STATE_DIR` if set, else `$XDG_STATE_HOME/cordon`, else
//! `$HOME/.local/state/cordon`. Relative (and empty) values are ignored, as the XDG
//! specification requires. Reading the environment is all this does: nothing is created
//! or opened here.

use std::ffi::OsString;
use std::path::PathBuf;

/// cordon's state directory, from the process environment; `None` when no variable
/// names an absolute directory (not even `HOME`).
pub fn state_dir() -> Option<PathBuf> {
    state_dir_from(|name| std::env::var_os(name))
}

/// [`state_dir`] with the environment given by `var` (a variable's value by name).
pub fn state_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let abs = |name: &str| {
        var(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute() && !p.as_os_str().is_empty())
    };
    if let Some(dir) = abs("CORDON_STATE_DIR") {
        return Some(dir);
    }
    if let Some(dir) = abs("XDG_STATE_HOME") {
        return Some(dir.join("cordon"));
    }
    abs("HOME").map(|home| home.join(".local").join("state").join("cordon"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Option<PathBuf> {
        state_dir_from(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn cordon_state_dir_then_xdg_then_home() {
        let all = [
            ("CORDON_STATE_DIR", "/s"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(with(&all), Some(PathBuf::from("/s")));
        assert_eq!(with(&all[1..]), Some(PathBuf::from("/x/cordon")));
        assert_eq!(
            with(&all[2..]),
            Some(PathBuf::from("/h/.local/state/cordon"))
        );
        assert_eq!(with(&[]), None);
    }

    #[test]
    fn relative_and_empty_values_are_ignored() {
        let vars = [
            ("CORDON_STATE_DIR", "state"),
            ("XDG_STATE_HOME", ""),
            ("HOME", "/h"),
        ];
        assert_eq!(with(&vars), Some(PathBuf::from("/h/.local/state/cordon")));
        assert_eq!(with(&[("HOME", "h")]), None);
    }
}
