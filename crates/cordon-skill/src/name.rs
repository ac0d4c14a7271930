//! Entry names: what a package may call its files. A name is refused, not repaired: any
//! repair (dropping a drive prefix, turning `\` into `/`) is a place where cordon and the
//! tool that later reads the folder could disagree about which file is meant.

use unicode_normalization::UnicodeNormalization;

/// Why an entry name was refused, one sentence each.
pub(crate) fn check(raw: &[u8], max_bytes: usize) -> Result<String, String> {
    if raw.len() > max_bytes {
        return Err(format!("the name is longer than {max_bytes} bytes"));
    }
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err("the name is not valid UTF-8".into());
    };
    if text.is_empty() {
        return Err("the name is empty".into());
    }
    if text.chars().any(|c| c.is_control()) {
        return Err("the name contains NUL or another control character".into());
    }
    if text.contains('\\') {
        return Err("the name contains a backslash (a Windows separator)".into());
    }
    if text.starts_with('/') {
        return Err("the name is an absolute path".into());
    }
    let b = text.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Err("the name starts with a drive prefix".into());
    }
    let mut parts = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => continue,
            ".." => return Err("the name has a `..` component".into()),
            p if p.ends_with('.') || p.ends_with(' ') => {
                return Err(format!(
                    "the component {p:?} ends with a dot or a space (Windows drops them, so it \
                     names another file there)"
                ));
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err("the name names the package root itself".into());
    }
    Ok(parts.join("/"))
}

/// The key under which two names are the same file on a case-insensitive or
/// normalizing file system (macOS, Windows): Unicode NFC, then lower case.
pub(crate) fn collision_key(name: &str) -> String {
    name.nfc()
        .flat_map(char::to_lowercase)
        .collect::<String>()
        .nfc()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! refuses {
        ($($name:ident: $raw:expr;)*) => {$(
            #[test]
            fn $name() {
                assert!(check($raw, 1024).is_err(), "{:?}", $raw);
            }
        )*};
    }

    refuses! {
        absolute: b"/etc/passwd";
        dotdot: b"a/../../x";
        dotdot_alone: b"..";
        backslash: b"a\\b";
        drive: b"C:x";
        nul: b"a\0b";
        newline: b"a\nb";
        escape: b"a\x1b[31m";
        trailing_dot: b"run.sh.";
        trailing_space: b"dir /x";
        not_utf8: b"\xff\xfe";
        empty: b"";
        root: b"./";
        c1_control: "a\u{85}b".as_bytes();
    }

    #[test]
    fn plain_names_are_kept_and_dots_dropped() {
        assert_eq!(
            check(b"./scripts/run.sh", 1024).as_deref(),
            Ok("scripts/run.sh")
        );
        assert_eq!(check(b"dir/", 1024).as_deref(), Ok("dir"));
        assert_eq!(check(b".hidden", 1024).as_deref(), Ok(".hidden"));
    }

    #[test]
    fn collisions_under_case_and_normalization() {
        assert_eq!(collision_key("SKILL.md"), collision_key("skill.MD"));
        assert_eq!(collision_key("caf\u{e9}"), collision_key("cafe\u{301}"));
        assert_ne!(collision_key("a"), collision_key("b"));
    }
}
