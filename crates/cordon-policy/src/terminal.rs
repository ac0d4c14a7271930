//! Untrusted text made safe to print on a terminal: the one escaping function every
//! crate of cordon uses before it writes a path, a reason, a hint or a record to
//! stderr or stdout for a human.
//!
//! A file name, a command, a host name or a log line may have been chosen by whoever
//! wrote the data an agent read. Printed raw, a newline forges an extra `cordon:` line,
//! a carriage return overwrites one, and an escape sequence (`ESC [`, or the one-byte
//! C1 `CSI` U+009B) moves the cursor, recolours, retitles or clears the screen. Here
//! every such character is shown as a visible escape instead (`\n`, `\u{1b}`,
//! `\u{9b}`). JSON output needs none of this: serde escapes it already.

use std::path::Path;

/// Written before cordon's own lines on a terminal that a command has just written to.
/// A command may end by switching on concealed or same-colour text, a line-drawing
/// character set, or a narrow scrolling region (so that cordon's question scrolls away
/// under a fake one it drew); none of that may hide what cordon says next (a summary of
/// what containment blocked, an approval question). In order: save the cursor (DECSC),
/// soft reset (DECSTR: margins, origin mode, autowrap, insert mode, cursor visibility),
/// the scrolling region made the whole screen (DECSTBM, which homes the cursor), the
/// cursor put back where it was (DECRC), ASCII in G0 shifted in, attributes reset (SGR 0).
pub const RESET_ATTRIBUTES: &str = "\x1b7\x1b[!p\x1b[r\x1b8\x1b(B\x0f\x1b[0m";

/// Escape every character that could act on a terminal or forge a line: C0 controls
/// (newline, carriage return, ESC, BEL, …), DEL, the C1 range, the Unicode line and
/// paragraph separators, and bidirectional overrides (which reorder what is shown).
/// Other text, non-ASCII letters included, is unchanged.
pub fn sanitize_for_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// [`sanitize_for_terminal`] of a path (bytes that are not UTF-8 are shown as U+FFFD).
pub fn path_for_terminal(path: &Path) -> String {
    sanitize_for_terminal(&path.to_string_lossy())
}

/// Control characters, line and paragraph separators, and every format character
/// (Unicode category Cf: bidirectional controls, zero-width characters, the Arabic letter
/// mark, invisible operators, tags), which change how the text around them is shown.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{890}'..='\u{891}'
                | '\u{8e2}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0001}'
                | '\u{e0020}'..='\u{e007f}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_acts_on_a_terminal() {
        let s = sanitize_for_terminal;
        assert_eq!(s("a\u{1b}[2Jb\rc"), "a\\u{1b}[2Jb\\rc");
        assert_eq!(s("one\ncordon: forged"), "one\\ncordon: forged");
        assert_eq!(s("csi\u{9b}31m"), "csi\\u{9b}31m");
        assert_eq!(s("bel\u{7}del\u{7f}"), "bel\\u{7}del\\u{7f}");
        assert_eq!(s("tab\there"), "tab\\there");
        assert_eq!(s("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(s("line\u{2028}sep"), "line\\u{2028}sep");
        assert_eq!(s("nul\0"), "nul\\u{0}");
        // Zero-width and other format characters hide or reorder text too.
        assert_eq!(s("a\u{200b}b\u{61c}c"), "a\\u{200b}b\\u{61c}c");
        assert_eq!(s("tag\u{e0041}\u{feff}"), "tag\\u{e0041}\\u{feff}");
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        let s = sanitize_for_terminal;
        assert_eq!(
            s("plain ünïcode 日本 'quoted' \"x\" \\"),
            "plain ünïcode 日本 'quoted' \"x\" \\"
        );
        assert_eq!(s(""), "");
    }

    #[test]
    fn paths_are_escaped_too() {
        assert_eq!(
            path_for_terminal(Path::new("/w/a\nb\u{1b}[31m")),
            "/w/a\\nb\\u{1b}[31m"
        );
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"/w/\xff\x1b");
        assert_eq!(path_for_terminal(Path::new(bad)), "/w/\u{fffd}\\u{1b}");
    }

    #[test]
    fn no_control_character_survives() {
        for c in (0u32..0x110000).filter_map(char::from_u32) {
            let out = sanitize_for_terminal(&c.to_string());
            assert!(
                !out.chars().any(needs_escape),
                "U+{:04X} shown as {out:?}",
                c as u32
            );
        }
    }
}
