//! Bash patterns (`*`, `?`, `[…]`): the syntax globs, `case` labels and the pattern
//! operators of parameter expansion (`${x#p}`, `${x/p/r}`) share.
//!
//! Owns: parsing a pattern, matching it against a string, and deciding whether a glob
//! can match a name that another pattern (a guard's) describes. Every operation is a
//! simulation of the pattern's automaton, so its cost is at most the product of the two
//! lengths: no input can make matching backtrack exponentially. Never looks at a file
//! system.
//!
//! In a pattern string a backslash makes the next character literal; the analyzer
//! writes quoted glob characters that way in [`crate::Dynamic::Glob`].

/// One element of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A character matched as itself.
    Lit(char),
    /// `?`: any one character.
    Any,
    /// `*`: any run of characters.
    Star,
    /// `[…]`: one character of a set.
    Class(Class),
    /// An extglob group (`@(…)`, `!(…)`, `+(…)`, `*(…)`, `?(…)`): modelled as any run
    /// of characters, a leading dot included.
    Group,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Class {
    negated: bool,
    items: Vec<Item>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Ch(char),
    Range(char, char),
    Named(Named),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    Alpha,
    Digit,
    Alnum,
    Upper,
    Lower,
    Space,
    Blank,
    Punct,
    Xdigit,
    Cntrl,
    Print,
    Graph,
    Word,
}

impl Named {
    fn from_name(n: &str) -> Option<Self> {
        Some(match n {
            "alpha" => Self::Alpha,
            "digit" => Self::Digit,
            "alnum" => Self::Alnum,
            "upper" => Self::Upper,
            "lower" => Self::Lower,
            "space" => Self::Space,
            "blank" => Self::Blank,
            "punct" => Self::Punct,
            "xdigit" => Self::Xdigit,
            "cntrl" => Self::Cntrl,
            "print" => Self::Print,
            "graph" => Self::Graph,
            "word" => Self::Word,
            _ => return None,
        })
    }

    fn has(self, c: char) -> bool {
        match self {
            Self::Alpha => c.is_alphabetic(),
            Self::Digit => c.is_ascii_digit(),
            Self::Alnum => c.is_alphanumeric(),
            Self::Upper => c.is_uppercase(),
            Self::Lower => c.is_lowercase(),
            Self::Space => c.is_whitespace(),
            Self::Blank => c == ' ' || c == '\t',
            Self::Punct => c.is_ascii_punctuation(),
            Self::Xdigit => c.is_ascii_hexdigit(),
            Self::Cntrl => c.is_control(),
            Self::Print => !c.is_control(),
            Self::Graph => !c.is_control() && !c.is_whitespace(),
            Self::Word => c.is_alphanumeric() || c == '_',
        }
    }

    /// Characters that stand for the class when looking for a common character.
    fn samples(self) -> &'static [char] {
        match self {
            Self::Alpha | Self::Alnum | Self::Print | Self::Graph | Self::Word => {
                &['a', 'Z', '5', '_', '.', '-']
            }
            Self::Digit | Self::Xdigit => &['0', '7', 'a', 'F'],
            Self::Upper => &['A', 'Z'],
            Self::Lower => &['a', 'z'],
            Self::Space | Self::Blank => &[' ', '\t'],
            Self::Punct => &['.', '-', '_', '~', '!'],
            Self::Cntrl => &['\u{1}'],
        }
    }
}

impl Class {
    fn has(&self, c: char) -> bool {
        let inside = self.items.iter().any(|i| match *i {
            Item::Ch(x) => x == c,
            Item::Range(a, b) => a <= c && c <= b,
            Item::Named(n) => n.has(c),
        });
        inside != self.negated
    }
}

/// A parsed bash pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    toks: Vec<Tok>,
    /// Some element matches a run of characters (a star or a group).
    stars: bool,
}

/// Longest pattern, in elements, that the pairwise operations take on; a longer one is
/// answered conservatively (see each operation).
const MAX_TOKS: usize = 256;

impl Pattern {
    /// Parse a pattern; a backslash makes the next character literal. Never fails: an
    /// unclosed `[` is a literal `[`, as in bash.
    #[must_use]
    pub fn parse(p: &str) -> Self {
        let chars: Vec<char> = p.chars().collect();
        let mut toks = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '\\' if i + 1 < chars.len() => {
                    toks.push(Tok::Lit(chars[i + 1]));
                    i += 2;
                }
                '*' | '?' | '@' | '!' | '+' if chars.get(i + 1) == Some(&'(') => {
                    match close_group(&chars, i + 2) {
                        Some(end) => {
                            if toks.last() != Some(&Tok::Group) {
                                toks.push(Tok::Group);
                            }
                            i = end + 1;
                        }
                        None => {
                            toks.push(match c {
                                '*' => Tok::Star,
                                '?' => Tok::Any,
                                _ => Tok::Lit(c),
                            });
                            i += 1;
                        }
                    }
                }
                '*' => {
                    if toks.last() != Some(&Tok::Star) {
                        toks.push(Tok::Star);
                    }
                    i += 1;
                }
                '?' => {
                    toks.push(Tok::Any);
                    i += 1;
                }
                '[' => match class(&chars, i + 1) {
                    Some((cl, end)) => {
                        toks.push(Tok::Class(cl));
                        i = end + 1;
                    }
                    None => {
                        toks.push(Tok::Lit('['));
                        i += 1;
                    }
                },
                _ => {
                    toks.push(Tok::Lit(c));
                    i += 1;
                }
            }
        }
        let stars = toks.iter().any(|t| matches!(t, Tok::Star | Tok::Group));
        Self { toks, stars }
    }

    /// The text this pattern matches when it has no wildcard.
    #[must_use]
    pub fn literal(&self) -> Option<String> {
        self.toks
            .iter()
            .map(|t| match t {
                Tok::Lit(c) => Some(*c),
                _ => None,
            })
            .collect()
    }

    /// Does the pattern contain an extglob group, which bash only knows with
    /// `shopt -s extglob` and which is modelled loosely here?
    #[must_use]
    pub fn has_group(&self) -> bool {
        self.toks.contains(&Tok::Group)
    }

    /// Does `s` match the whole pattern (pattern matching as in `case` and `[[ == ]]`)?
    #[must_use]
    pub fn matches(&self, s: &str) -> bool {
        // Without a star each element takes exactly one character.
        if !self.stars && (s.len() < self.toks.len() || s.chars().count() != self.toks.len()) {
            return false;
        }
        if self.toks.len() < 64 {
            return self.matches_small(s);
        }
        let mut run = Run::new(self);
        for c in s.chars() {
            if !run.step(c) {
                return false;
            }
        }
        run.accepts()
    }

    /// [`Pattern::matches`] with the active positions in one machine word.
    fn matches_small(&self, s: &str) -> bool {
        let toks = &self.toks;
        let close = |mut on: u64| {
            for (i, t) in toks.iter().enumerate() {
                if on >> i & 1 == 1 && matches!(t, Tok::Star | Tok::Group) {
                    on |= 1 << (i + 1);
                }
            }
            on
        };
        let mut on = close(1);
        for c in s.chars() {
            let mut next = 0u64;
            for (i, t) in toks.iter().enumerate() {
                if on >> i & 1 == 0 {
                    continue;
                }
                match t {
                    Tok::Star | Tok::Group => next |= 1 << i,
                    _ if takes(t, c) => next |= 1 << (i + 1),
                    _ => {}
                }
            }
            if next == 0 {
                return false;
            }
            on = close(next);
        }
        on >> toks.len() & 1 == 1
    }

    /// Does the file name `name` match, with the rule of file-name expansion that a
    /// leading `.` is only matched by a literal `.`?
    #[must_use]
    pub fn matches_name(&self, name: &str) -> bool {
        if name.starts_with('.') && !matches!(self.toks.first(), Some(Tok::Lit('.') | Tok::Group)) {
            return false;
        }
        self.matches(name)
    }

    /// For each prefix length of `s` (in characters, 0 to its length), does that prefix
    /// match the whole pattern? Costs `O(len(s) · len(pattern))`.
    pub(crate) fn prefix_matches(&self, s: &[char]) -> Vec<bool> {
        let mut out = Vec::with_capacity(s.len() + 1);
        let mut run = Run::new(self);
        out.push(run.accepts());
        for &c in s {
            let alive = run.step(c);
            out.push(alive && run.accepts());
            if !alive {
                out.resize(s.len() + 1, false);
                break;
            }
        }
        out
    }

    /// The pattern read backwards, for suffix matching.
    pub(crate) fn reversed(&self) -> Self {
        let mut toks = self.toks.clone();
        toks.reverse();
        Self {
            toks,
            stars: self.stars,
        }
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.toks.len()
    }

    /// Can a file name exist that this glob matches (file-name rules) and that `guard`
    /// matches ignoring ASCII case? `guard` is a pattern from a guard list
    /// (`.ssh`, `python*`, `*.pem`). Patterns longer than the analysis bound answer
    /// `true`: a guard errs towards matching.
    #[must_use]
    pub fn could_match(&self, guard: &Pattern) -> bool {
        self.meets(guard).0
    }

    /// [`Pattern::could_match`], and whether it can while *aiming* at the guard: some
    /// character the glob spells (a literal other than the leading dot of a hidden
    /// name, or a bracket expression that is not negated; never `*` or `?`) is one the
    /// guard spells too. `*.o` can match `id_rsa.o`, a name `id_rsa*`
    /// covers, without aiming at it; `id_*` and `.en?` aim at `id_rsa` and `.env`.
    #[must_use]
    pub fn meets(&self, guard: &Pattern) -> (bool, bool) {
        self.meets_as(guard, false)
    }

    /// [`Pattern::meets`] for a component of a search tool's glob (ripgrep with
    /// `--hidden`, node-glob with `dot`): any element may take a leading dot, and a dot
    /// never counts as aiming (`*.ts` can match `.env.ts` without aiming at `.env.*`).
    #[must_use]
    pub fn meets_as_tool_glob(&self, guard: &Pattern) -> (bool, bool) {
        self.meets_as(guard, true)
    }

    fn meets_as(&self, guard: &Pattern, tool: bool) -> (bool, bool) {
        if self.toks.len() > MAX_TOKS || guard.toks.len() > MAX_TOKS {
            return (true, true);
        }
        let cands = candidates(self, guard);
        let (n, m) = (self.toks.len(), guard.toks.len());
        // State: position in self, position in guard, a character taken, aimed.
        let idx = |i: usize, j: usize, started: bool, aimed: bool| {
            ((i * (m + 1) + j) * 2 + usize::from(started)) * 2 + usize::from(aimed)
        };
        let mut seen = vec![false; (n + 1) * (m + 1) * 4];
        let mut stack = vec![(0usize, 0usize, false, false)];
        seen[idx(0, 0, false, false)] = true;
        let mut found = (false, false);
        while let Some((i, j, started, aimed)) = stack.pop() {
            if i == n && j == m && started {
                found.0 = true;
                found.1 |= aimed;
                if found.1 {
                    return found;
                }
            }
            let mut push = |st: (usize, usize, bool, bool), stack: &mut Vec<_>| {
                let k = idx(st.0, st.1, st.2, st.3);
                if !seen[k] {
                    seen[k] = true;
                    stack.push(st);
                }
            };
            // A star or group may match nothing.
            if matches!(self.toks.get(i), Some(Tok::Star | Tok::Group)) {
                push((i + 1, j, started, aimed), &mut stack);
            }
            if matches!(guard.toks.get(j), Some(Tok::Star | Tok::Group)) {
                push((i, j + 1, started, aimed), &mut stack);
            }
            let (Some(a), Some(b)) = (self.toks.get(i), guard.toks.get(j)) else {
                continue;
            };
            // What the glob spells: a literal (not the leading dot every hidden name
            // needs) or a set of characters (not a negated one).
            let spelled = match a {
                Tok::Lit('.') => started && !tool,
                Tok::Lit(_) => true,
                Tok::Class(cl) => !cl.negated,
                _ => false,
            } && matches!(b, Tok::Lit(_) | Tok::Class(_));
            for &c in &cands {
                // A leading dot is only matched by a `.` that starts the glob.
                if c == '.' && !started && i > 0 && !tool {
                    continue;
                }
                if !glob_takes(a, c, started || tool) || !guard_takes(b, c) {
                    continue;
                }
                let ni = if matches!(a, Tok::Star | Tok::Group) {
                    i
                } else {
                    i + 1
                };
                let nj = if matches!(b, Tok::Star | Tok::Group) {
                    j
                } else {
                    j + 1
                };
                push((ni, nj, true, aimed || spelled), &mut stack);
            }
        }
        found
    }
}

/// Can the glob element `t` take `c` as a character of a file name (`started`: not the
/// first character)?
fn glob_takes(t: &Tok, c: char, started: bool) -> bool {
    if c == '/' {
        return false;
    }
    if c == '.' && !started {
        return matches!(t, Tok::Lit('.') | Tok::Group);
    }
    takes(t, c)
}

/// Can the guard element `t` take `c`, ignoring ASCII case?
fn guard_takes(t: &Tok, c: char) -> bool {
    takes(t, c) || takes(t, c.to_ascii_lowercase()) || takes(t, c.to_ascii_uppercase())
}

fn takes(t: &Tok, c: char) -> bool {
    match t {
        Tok::Lit(x) => *x == c,
        Tok::Any | Tok::Star | Tok::Group => true,
        Tok::Class(cl) => cl.has(c),
    }
}

/// Characters worth trying when looking for one both patterns take: every character
/// either names (in both cases), the ends of ranges and their neighbours, samples of
/// named classes, and a few ordinary characters neither names.
fn candidates(a: &Pattern, b: &Pattern) -> Vec<char> {
    let mut out: Vec<char> = vec!['a', 'Z', '0', '_', '-', '.', '~', ' ', '\u{e9}', '\u{1}'];
    for t in a.toks.iter().chain(&b.toks) {
        match t {
            Tok::Lit(c) => out.push(*c),
            Tok::Class(cl) => {
                for it in &cl.items {
                    match *it {
                        Item::Ch(c) => out.push(c),
                        Item::Range(x, y) => {
                            out.extend([x, y]);
                            out.extend(char::from_u32(u32::from(x).wrapping_sub(1)));
                            out.extend(char::from_u32(u32::from(y) + 1));
                        }
                        Item::Named(n) => out.extend_from_slice(n.samples()),
                    }
                }
            }
            _ => {}
        }
    }
    let cased: Vec<char> = out
        .iter()
        .flat_map(|c| [c.to_ascii_lowercase(), c.to_ascii_uppercase()])
        .collect();
    out.extend(cased);
    out.sort_unstable();
    out.dedup();
    out
}

/// The simulation of a pattern's automaton over a string.
struct Run<'a> {
    toks: &'a [Tok],
    /// Active positions (0 to `toks.len()`).
    on: Vec<bool>,
    next: Vec<bool>,
}

impl<'a> Run<'a> {
    fn new(p: &'a Pattern) -> Self {
        let mut r = Self {
            toks: &p.toks,
            on: vec![false; p.toks.len() + 1],
            next: vec![false; p.toks.len() + 1],
        };
        r.on[0] = true;
        close(r.toks, &mut r.on);
        r
    }

    /// Take one character; false when no position is left.
    fn step(&mut self, c: char) -> bool {
        self.next.iter_mut().for_each(|x| *x = false);
        let mut any = false;
        for (i, t) in self.toks.iter().enumerate() {
            if !self.on[i] {
                continue;
            }
            match t {
                Tok::Star | Tok::Group => {
                    self.next[i] = true;
                    any = true;
                }
                _ if takes(t, c) => {
                    self.next[i + 1] = true;
                    any = true;
                }
                _ => {}
            }
        }
        std::mem::swap(&mut self.on, &mut self.next);
        close(self.toks, &mut self.on);
        any
    }

    fn accepts(&self) -> bool {
        self.on[self.toks.len()]
    }
}

/// Stars match the empty string: a position before one also activates the next.
fn close(toks: &[Tok], on: &mut [bool]) {
    for i in 0..toks.len() {
        if on[i] && matches!(toks[i], Tok::Star | Tok::Group) {
            on[i + 1] = true;
        }
    }
}

/// Index of the `)` closing an extglob group whose content starts at `i`.
fn close_group(chars: &[char], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Parse a bracket expression whose content starts at `i` (after `[`); returns the
/// class and the index of the closing `]`.
fn class(chars: &[char], mut i: usize) -> Option<(Class, usize)> {
    let mut cl = Class {
        negated: false,
        items: Vec::new(),
    };
    if matches!(chars.get(i), Some('!' | '^')) {
        cl.negated = true;
        i += 1;
    }
    let first = i;
    while i < chars.len() {
        let c = chars[i];
        if c == ']' && i > first {
            return Some((cl, i));
        }
        if c == '[' && chars.get(i + 1) == Some(&':') {
            let rest = &chars[i + 2..];
            if let Some(end) = rest.windows(2).position(|w| w == [':', ']']) {
                let name: String = rest[..end].iter().collect();
                if let Some(n) = Named::from_name(&name) {
                    cl.items.push(Item::Named(n));
                    i += 2 + end + 2;
                    continue;
                }
            }
        }
        let (lo, used) = if c == '\\' && i + 1 < chars.len() {
            (chars[i + 1], 2)
        } else {
            (c, 1)
        };
        i += used;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&x| x != ']') {
            let (hi, used) = if chars[i + 1] == '\\' && i + 2 < chars.len() {
                (chars[i + 2], 3)
            } else {
                (chars[i + 1], 2)
            };
            i += used;
            cl.items.push(Item::Range(lo, hi));
        } else {
            cl.items.push(Item::Ch(lo));
        }
    }
    None
}

/// The part of the pattern `pattern` that spells the last characters of `value`:
/// `value` is what the pattern reads as after its backslashes are removed, or a tail
/// of that (a program may take a path from the end of an argument, `--file=.env*`).
#[must_use]
pub fn pattern_for<'a>(pattern: &'a str, value: &str) -> Option<&'a str> {
    // (byte offset in pattern, unescaped char)
    let mut plain: Vec<(usize, char)> = Vec::with_capacity(pattern.len());
    let mut it = pattern.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if c == '\\'
            && let Some((_, n)) = it.next()
        {
            plain.push((i, n));
            continue;
        }
        plain.push((i, c));
    }
    let want: Vec<char> = value.chars().collect();
    if want.len() > plain.len() {
        return None;
    }
    let start = plain.len() - want.len();
    if plain[start..]
        .iter()
        .map(|(_, c)| *c)
        .ne(want.iter().copied())
    {
        return None;
    }
    let at = plain.get(start).map_or(pattern.len(), |(i, _)| *i);
    pattern.get(at..)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Pattern {
        Pattern::parse(s)
    }

    #[test]
    fn matching() {
        assert!(p("*.rs").matches("main.rs"));
        assert!(!p("*.rs").matches("main.rsx"));
        assert!(p("c?t").matches("cat"));
        assert!(p("[a-c]at").matches("bat"));
        assert!(!p("[!a-c]at").matches("bat"));
        assert!(p("[[:digit:]]x").matches("7x"));
        assert!(p("a\\*").matches("a*"));
        assert!(!p("a\\*").matches("ab"));
        assert!(p("[]]").matches("]"));
        assert!(p("[").matches("["));
        assert!(p("**a**b**").matches("xxaxxbxx"));
        assert!(!p("*").matches_name(".env"));
        assert!(p(".*").matches_name(".env"));
    }

    #[test]
    fn matching_is_linear() {
        let pat = p(&"*a".repeat(200));
        let s = "a".repeat(5_000) + "b";
        let t = std::time::Instant::now();
        assert!(!pat.matches(&s));
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn could_match_guards() {
        assert!(p(".s?h").could_match(&p(".ssh")));
        assert!(p(".[s]sh").could_match(&p(".ssh")));
        assert!(p("cred*").could_match(&p("credentials")));
        assert!(p(".env*").could_match(&p(".env")));
        assert!(p(".en?").could_match(&p(".env")));
        assert!(p("*").could_match(&p("id_rsa*")));
        assert!(p(".S?H").could_match(&p(".ssh")), "guards ignore case");
        assert!(
            !p("*").could_match(&p(".ssh")),
            "a star never takes a leading dot"
        );
        assert!(!p("?ssh").could_match(&p(".ssh")));
        assert!(!p("[.]ssh").could_match(&p(".ssh")));
        assert!(!p("*.o").could_match(&p(".cordon")));
        assert!(!p("*.o").matches_name(".o"));
        assert!(!p("*.rs").could_match(&p("*.pem")));
        assert!(p("*.p?m").could_match(&p("*.pem")));
        assert!(p("@(.ssh|x)").could_match(&p(".ssh")));
        assert!(p("python3.1[0-9]").could_match(&p("python*")));
        assert!(!p("a\\*").could_match(&p("ab")));
        assert_eq!(p("*.o").meets(&p("id_rsa*")), (true, false));
        assert_eq!(p("id_*").meets(&p("id_rsa*")), (true, true));
        assert_eq!(p(".en?").meets(&p(".env")), (true, true));
        assert_eq!(p("*").meets(&p(".env*")), (false, false));
        assert_eq!(p(".??*").meets(&p(".env")), (true, false));
        assert_eq!(p(".[!.]*").meets(&p(".bashrc")), (true, false));
    }

    #[test]
    fn pattern_tails() {
        assert_eq!(pattern_for(".env*", ".env*"), Some(".env*"));
        assert_eq!(pattern_for("--file=.env*", ".env*"), Some(".env*"));
        assert_eq!(pattern_for("\\*x*", "*x*"), Some("\\*x*"));
        assert_eq!(pattern_for("a*", "b*"), None);
    }
}
