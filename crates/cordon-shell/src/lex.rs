//! A shell lexer for text that is not run: the words of a command line with their byte
//! spans, by POSIX quoting rules (single quotes, double quotes with their four escapes,
//! backslash), without parsing or expanding anything.
//!
//! It serves readers that must find an argument in text that may be a log line, a
//! transcript or arbitrary UTF-8 (secret redaction): it never fails and never panics,
//! and every span it reports lies on character boundaries of its input. Operators
//! (`; & | ( ) < >` and newlines) end a command; a `#` at the start of a word starts a
//! comment that runs to the end of the line. Unlike a shell, a quote also ends at the end
//! of its line: the input is mostly not a script, and an apostrophe in prose must not
//! swallow the command lines after it.

use std::ops::Range;

/// One word of a command line: its text after quote removal, and where each byte of
/// that text came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexWord {
    /// The word with its quotes and escapes removed.
    pub text: String,
    /// The byte of the input each byte of `text` was read from (same length as `text`).
    origin: Vec<usize>,
    /// The whole word in the input, quotes included.
    pub span: Range<usize>,
}

impl LexWord {
    /// The input range that holds `text[range]`: from the first of those bytes to the
    /// last, quotes between them included. Empty when `range` is. `range` must lie on
    /// character boundaries of `text`; the result then lies on those of the input.
    pub fn source(&self, range: Range<usize>) -> Range<usize> {
        match (self.origin.get(range.start), range.end.checked_sub(1)) {
            (Some(&lo), Some(last)) if range.end > range.start => match self.origin.get(last) {
                Some(&hi) => lo..hi + 1,
                None => lo..lo,
            },
            (Some(&lo), _) => lo..lo,
            _ => self.span.end..self.span.end,
        }
    }
}

/// The commands of `text`, each the list of its words, in order. Empty commands are
/// left out.
pub fn commands(text: &str) -> Vec<Vec<LexWord>> {
    let bytes = text.as_bytes();
    let mut out: Vec<Vec<LexWord>> = Vec::new();
    let mut cmd: Vec<LexWord> = Vec::new();
    let mut word: Option<LexWord> = None;
    let mut i = 0;
    let end_word = |word: &mut Option<LexWord>, cmd: &mut Vec<LexWord>, at: usize| {
        if let Some(mut w) = word.take() {
            w.span.end = at;
            cmd.push(w);
        }
    };
    let start = |word: &mut Option<LexWord>, at: usize| {
        if word.is_none() {
            *word = Some(LexWord {
                text: String::new(),
                origin: Vec::new(),
                span: at..at,
            });
        }
    };
    // Push the character that starts at `at` (one or more bytes) onto the word.
    let push = |word: &mut Option<LexWord>, at: usize| -> usize {
        let len = char_len(bytes, at);
        if let Some(w) = word.as_mut()
            && let Some(s) = text.get(at..at + len)
        {
            w.text.push_str(s);
            w.origin.extend(at..at + len);
        }
        at + len
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\r' => {
                end_word(&mut word, &mut cmd, i);
                i += 1;
            }
            b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' => {
                end_word(&mut word, &mut cmd, i);
                if !cmd.is_empty() {
                    out.push(std::mem::take(&mut cmd));
                }
                i += 1;
            }
            b'#' if word.is_none() => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' => {
                start(&mut word, i);
                i += 1;
                while i < bytes.len() && !matches!(bytes[i], b'\'' | b'\n') {
                    i = push(&mut word, i);
                }
                i += usize::from(bytes.get(i) == Some(&b'\''));
            }
            b'"' => {
                start(&mut word, i);
                i += 1;
                while i < bytes.len() && !matches!(bytes[i], b'"' | b'\n') {
                    if bytes[i] == b'\\'
                        && matches!(bytes.get(i + 1), Some(b'"' | b'\\' | b'$' | b'`'))
                    {
                        i += 1;
                    }
                    i = push(&mut word, i);
                }
                i += usize::from(bytes.get(i) == Some(&b'"'));
            }
            b'\\' => {
                start(&mut word, i);
                i += 1;
                if i < bytes.len() {
                    if bytes[i] == b'\n' {
                        i += 1;
                    } else {
                        i = push(&mut word, i);
                    }
                }
            }
            _ => {
                start(&mut word, i);
                i = push(&mut word, i);
            }
        }
    }
    end_word(&mut word, &mut cmd, bytes.len());
    if !cmd.is_empty() {
        out.push(cmd);
    }
    out
}

/// The length of the UTF-8 character that starts at `at` (1 for a byte that starts
/// none, so a scan always moves on).
fn char_len(bytes: &[u8], at: usize) -> usize {
    let n = match bytes[at] {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    n.min(bytes.len() - at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        commands(text)
            .into_iter()
            .map(|c| c.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn quoting_rules() {
        assert_eq!(
            words(r#"curl -u 'admin:p w' "a\"b" c\ d; echo x"#),
            [
                vec!["curl", "-u", "admin:p w", "a\"b", "c d"],
                vec!["echo", "x"]
            ]
        );
        assert_eq!(words("a # comment; b\nc"), [vec!["a"], vec!["c"]]);
        assert_eq!(
            words("don't\nsshpass -p x"),
            [vec!["dont"], vec!["sshpass", "-p", "x"]]
        );
        assert_eq!(words("x=\"é ü\"|y"), [vec!["x=é ü"], vec!["y"]]);
    }

    #[test]
    fn spans_map_back_to_the_input() {
        let text = "curl -u 'admin:p w' -x";
        let c = commands(text);
        let w = &c[0][2];
        let colon = w.text.find(':').unwrap();
        let r = w.source(colon + 1..w.text.len());
        assert_eq!(&text[r], "p w");
        assert_eq!(&text[w.span.clone()], "'admin:p w'");
    }

    #[test]
    fn any_utf8_and_unterminated_quotes_are_fine() {
        for text in [
            "'abc",
            "\"é\\",
            "\\",
            "ü'é",
            "a\u{200b}b 'ç",
            "日本語 -p'秘密'",
        ] {
            for cmd in commands(text) {
                for w in cmd {
                    let r = w.source(0..w.text.len());
                    assert!(text.get(r).is_some(), "{text}");
                }
            }
        }
    }
}
