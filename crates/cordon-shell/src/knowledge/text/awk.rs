//! `awk`: its program read for the commands, pipes and redirections that run code or
//! write files.

use crate::knowledge::{Invocation, Opts, Outcome, parse_args};
use crate::model::{Class, Word};

/// `awk`: `system()`, pipes to and from commands, and output redirection inside the
/// program run commands or write files.
pub(super) fn awk(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "FvfiloWE",
            &[
                "field-separator",
                "assign",
                "file",
                "include",
                "load",
                "dump-variables",
                "profile",
                "exec",
                "source",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    let mut programs: Vec<Word> = p.values(&["--source"]).cloned().collect();
    let files: Vec<Word> = p
        .values(&["-f", "--file", "-i", "--include", "-E", "--exec"])
        .cloned()
        .collect();
    let mut operands = p.operands.clone();
    if files.is_empty() && programs.is_empty() && !operands.is_empty() {
        programs.push(operands.remove(0));
    }
    if !files.is_empty() {
        o.reads(&files);
        o.effects.class = Class::Unknown;
    }
    if p.has(&["-l", "--load"]) {
        o.exec(inv.name, "-l", "loads an extension library");
    }
    // `var=value` operands are assignments, not files.
    let inputs: Vec<Word> = operands
        .into_iter()
        .filter(|w| !w.value.contains('='))
        .collect();
    o.reads(&inputs);
    for prog in &programs {
        if !prog.literal {
            o.effects.class = Class::Unknown;
            continue;
        }
        awk_program(&prog.value, inv.name, &mut o);
    }
    o
}

fn awk_program(src: &str, name: &str, o: &mut Outcome) {
    let code = blank_awk_strings(src);
    // `system("cmd")`: a literal command line is analyzed as the shell text it is;
    // one built at run time (`system(sprintf(…))`, `system($0)`) cannot be.
    let mut from = 0;
    while let Some(pos) = code[from..].find("system") {
        let at = from + pos;
        from = at + "system".len();
        let after = code[from..].trim_start();
        let Some(args) = after.strip_prefix('(') else {
            continue;
        };
        let open = code.len() - args.len();
        match awk_string_at(src, &code, open) {
            Some((cmd, end)) if code[end..].trim_start().starts_with(')') => {
                o.code(name, "system()", &Word::literal(cmd));
            }
            _ => o.exec(name, "system()", src),
        }
    }
    // `print | "cmd"`, `"cmd" | getline`, `|&` coprocesses: a `|` that is not `||`.
    let bytes = code.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        if c != b'|'
            || i.checked_sub(1).map(|j| bytes[j]) == Some(b'|')
            || bytes.get(i + 1) == Some(&b'|')
        {
            continue;
        }
        // The command is a literal string on either side of the bar.
        let before = code[..i].trim_end();
        let after_start = i + 1 + usize::from(bytes.get(i + 1) == Some(&b'&'));
        let lit_before = before
            .strip_suffix('"')
            .and_then(|b| b.rfind('"'))
            .and_then(|start| awk_string_at(src, &code, start));
        let skip = code[after_start..].len() - code[after_start..].trim_start().len();
        let lit_after = awk_string_at(src, &code, after_start + skip);
        let getline = code[after_start..].trim_start().starts_with("getline");
        match (lit_before, lit_after) {
            (Some((cmd, _)), _) if getline => o.code(name, "| getline", &Word::literal(cmd)),
            (_, Some((cmd, _))) if !getline => o.code(name, "| command", &Word::literal(cmd)),
            _ => o.exec(name, "| command", src),
        }
    }
    // `getline < "FILE"` / `getline VAR < FILE`: reads a file.
    let mut from = 0;
    while let Some(pos) = code[from..].find("getline") {
        let at = from + pos;
        from = at + "getline".len();
        let rest = &code[from..];
        let Some(lt) = rest.find('<') else { continue };
        let between = rest[..lt].trim();
        if !between.is_empty()
            && !between
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            continue;
        }
        let target_at = from + lt + 1;
        let skip = code[target_at..].len() - code[target_at..].trim_start().len();
        match awk_string_at(src, &code, target_at + skip) {
            Some((file, _)) => o.reads([&Word::literal(file)]),
            None => {
                let expr = code[target_at..]
                    .split([')', ';', '}', '\n'])
                    .next()
                    .unwrap_or("")
                    .trim();
                o.reads([&Word {
                    value: expr.to_owned(),
                    literal: false,
                }]);
            }
        }
    }
    // Any other path named in a string (`while ((getline l < f) > 0)` with `f="…"`),
    // and decoding followed by running (`system(sprintf("%c…", …))`).
    super::inline_code(o, name, &Word::literal(src));
    // `print > "file"` / `>>`: output redirection. A comparison `a > b` looks the same,
    // so only a `>` in a statement starting with print/printf counts.
    let mut start = 0;
    for stmt in code.split([';', '{', '}', '\n']) {
        let offset = start;
        start += stmt.len() + 1;
        let t = stmt.trim_start();
        if !(t.starts_with("print") || t.starts_with("printf")) {
            continue;
        }
        let Some(gt) = stmt.rfind('>') else { continue };
        let after = src.get(offset + gt + 1..).unwrap_or("").trim_start();
        let literal_target = after
            .strip_prefix('"')
            .and_then(|b| b.find('"').map(|e| b.get(..e).unwrap_or("")));
        match literal_target {
            Some(file) => o.writes([&Word::literal(file)]),
            None => {
                let expr = after.split([';', '}', '\n']).next().unwrap_or("").trim();
                o.writes([&Word {
                    value: expr.to_owned(),
                    literal: false,
                }]);
            }
        }
    }
}

/// The awk string literal starting at byte `at` of `src` (where `code`, its blanked
/// copy, has the opening quote): its unescaped text and the byte after its closing
/// quote.
fn awk_string_at(src: &str, code: &str, at: usize) -> Option<(String, usize)> {
    if code.as_bytes().get(at) != Some(&b'"') {
        return None;
    }
    let close = at + 1 + code.get(at + 1..)?.find('"')?;
    let raw = src.get(at + 1..close)?;
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(e) => out.push(e),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    Some((out, close + 1))
}

/// Replace the contents of string literals with spaces (byte for byte, so offsets
/// still match the source) so that words inside strings are not taken for code.
fn blank_awk_strings(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut in_str = false;
    let mut esc = false;
    for ch in src.chars() {
        if in_str {
            if esc {
                esc = false;
            } else if ch == '\\' {
                esc = true;
            } else if ch == '"' {
                in_str = false;
                out.push('"');
                continue;
            }
            out.extend(std::iter::repeat_n(' ', ch.len_utf8()));
        } else {
            if ch == '"' {
                in_str = true;
            }
            out.push(ch);
        }
    }
    out
}
