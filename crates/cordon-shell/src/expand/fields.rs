//! Field splitting on `IFS` and the marking of globs in the fields built.

use super::{Expander, Field, Piece, is_pattern_char, render_home};
use crate::env::{HOME, Val};
use crate::model::Dynamic;
use crate::pattern::Pattern;

impl Expander<'_> {
    /// Split pieces into fields and mark globs.
    pub(super) fn fields(&mut self, pieces: Vec<Piece>, split: bool) -> Vec<Field> {
        let ifs = if split
            && pieces
                .iter()
                .any(|p| matches!(p, Piece::Exp { quoted: false, .. }))
        {
            match self.env.get("IFS") {
                Val::Str(s) => Some(s),
                Val::Unset => Some(" \t\n".into()),
                _ => None,
            }
        } else {
            None
        };
        let mut b = Builder::new(split, self.globs_changed);
        for p in pieces {
            match p {
                Piece::Lit { s, quoted } => {
                    for c in s.chars() {
                        b.ch(c, quoted);
                    }
                }
                Piece::Exp { s, quoted, written } => {
                    if quoted || !split {
                        for c in s.chars() {
                            b.ch(c, true);
                        }
                        b.has = true;
                        continue;
                    }
                    let Some(ifs) = &ifs else {
                        b.atom(&written, &[Dynamic::ParameterExpansion(written.clone())]);
                        continue;
                    };
                    for c in s.chars() {
                        if ifs.contains(c) {
                            b.delimit(c.is_ascii_whitespace());
                        } else {
                            b.ch(c, false);
                        }
                    }
                }
                Piece::Atom { text, why } => b.atom(&text, &why),
                // Quoted elements carry their own `Has`; unquoted empty ones vanish.
                Piece::Break => b.finish(),
                Piece::Has => b.has = true,
            }
        }
        b.finish();
        b.out
    }
}

/// Builds fields character by character.
struct Builder {
    out: Vec<Field>,
    value: String,
    /// Byte offsets in `value` of pattern characters that were quoted.
    quoted_at: Vec<usize>,
    /// Byte ranges in `value` of parts only known at run time.
    atoms: Vec<(usize, usize)>,
    /// An unquoted pattern character was seen: the field may be a glob.
    maybe_glob: bool,
    dynamic: Vec<Dynamic>,
    has: bool,
    /// The last delimiter was IFS white space (a following non-white delimiter joins
    /// it), or a non-white one.
    after_white: bool,
    at_start: bool,
    split: bool,
    glob: bool,
    globs_changed: bool,
}

impl Builder {
    pub(super) fn new(split: bool, globs_changed: bool) -> Self {
        Self {
            out: Vec::new(),
            value: String::new(),
            quoted_at: Vec::new(),
            atoms: Vec::new(),
            maybe_glob: false,
            dynamic: Vec::new(),
            has: false,
            after_white: false,
            at_start: true,
            split,
            glob: split,
            globs_changed,
        }
    }

    pub(super) fn ch(&mut self, c: char, quoted: bool) {
        if is_pattern_char(c) {
            if quoted || !self.glob {
                self.quoted_at.push(self.value.len());
            } else {
                self.maybe_glob = true;
            }
        }
        self.value.push(c);
        self.has = true;
        self.at_start = false;
        self.after_white = false;
    }

    pub(super) fn atom(&mut self, text: &str, why: &[Dynamic]) {
        let start = self.value.len();
        self.value.push_str(text);
        self.atoms.push((start, self.value.len()));
        for d in why {
            if !self.dynamic.contains(d) {
                self.dynamic.push(d.clone());
            }
        }
        self.has = true;
        self.at_start = false;
        self.after_white = false;
    }

    /// An IFS character from an unquoted expansion.
    fn delimit(&mut self, white: bool) {
        if white {
            if self.has {
                self.finish();
                self.after_white = true;
            }
        } else if self.has {
            self.finish();
            self.after_white = false;
        } else if self.after_white {
            self.after_white = false;
        } else {
            // `,a` or `a,,b` with IFS=,: an empty field.
            self.has = true;
            self.finish();
        }
        self.at_start = false;
    }

    /// End the current field, if something made it exist.
    fn finish(&mut self) {
        if !self.has {
            return;
        }
        let mut value = std::mem::take(&mut self.value);
        let quoted_at = std::mem::take(&mut self.quoted_at);
        let atoms = std::mem::take(&mut self.atoms);
        let maybe_glob = std::mem::replace(&mut self.maybe_glob, false);
        let mut dynamic = std::mem::take(&mut self.dynamic);
        self.has = false;
        // The glob pattern (quoted pattern characters escaped) and what glob detection
        // sees (unknown parts replaced by an escaped placeholder), only when needed.
        let mut glob = None;
        if self.glob && maybe_glob {
            let (pattern, detect) = glob_texts(&value, &quoted_at, &atoms);
            if has_wildcard(&detect) || Pattern::parse(&detect).literal().is_none() {
                glob = Some(pattern);
            }
        }
        if value.contains(HOME) {
            let (v, known) = render_home(&value);
            value = v;
            glob = glob.map(|p| render_home(&p).0);
            let d = Dynamic::ParameterExpansion("$HOME".into());
            if !known && !dynamic.contains(&d) {
                dynamic.push(d);
            }
        }
        if let Some(pattern) = glob {
            dynamic.push(Dynamic::Glob(pattern));
            if self.globs_changed {
                dynamic.push(Dynamic::Opaque(
                    "shell options in this text change what globs match".into(),
                ));
            }
        }
        let _ = self.split;
        self.out.push(Field { value, dynamic });
    }
}

/// The glob pattern of a field value and the text glob detection reads: characters at
/// `quoted_at` escaped; unknown parts (`atoms`) kept as written in the pattern and
/// replaced by an escaped placeholder for detection.
fn glob_texts(value: &str, quoted_at: &[usize], atoms: &[(usize, usize)]) -> (String, String) {
    let mut pattern = String::with_capacity(value.len() + quoted_at.len());
    let mut detect = String::with_capacity(value.len() + quoted_at.len());
    let mut q = quoted_at.iter().peekable();
    let mut a = atoms.iter().peekable();
    for (i, c) in value.char_indices() {
        while a.peek().is_some_and(|(_, end)| *end <= i) {
            a.next();
        }
        if let Some((start, _)) = a.peek()
            && *start <= i
        {
            pattern.push(c);
            if *start == i {
                detect.push_str("\\x");
            }
            continue;
        }
        if q.peek() == Some(&&i) {
            q.next();
            pattern.push('\\');
            detect.push('\\');
        }
        pattern.push(c);
        detect.push(c);
    }
    (pattern, detect)
}

/// Does pattern text have an unescaped `*` or `?` (the cheap case of a glob)?
fn has_wildcard(p: &str) -> bool {
    let mut escaped = false;
    for c in p.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' => return true,
            _ => {}
        }
    }
    false
}
