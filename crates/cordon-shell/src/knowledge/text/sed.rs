//! `sed`: its script read for the commands that write or read files or run commands.

use crate::knowledge::{Invocation, Opts, Outcome, parse_args};
use crate::model::{Class, Word};

/// `sed`: `-i` edits its files in place; the script's `w`/`W` commands and `s///w`
/// flags write files, `r`/`R` read files, and `e` or `s///e` run commands.
pub(super) fn sed(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu("efl", &["expression", "file", "line-length"]),
    );
    let mut o = Outcome::read_only();
    let mut scripts: Vec<Word> = p.values(&["-e", "--expression"]).cloned().collect();
    let script_files: Vec<Word> = p.values(&["-f", "--file"]).cloned().collect();
    let mut operands = p.operands.clone();
    if scripts.is_empty() && script_files.is_empty() && !operands.is_empty() {
        scripts.push(operands.remove(0));
    }
    o.reads(&script_files);
    if !script_files.is_empty() {
        // The script is in a file the text does not show: it may write or run anything.
        o.effects.class = Class::Unknown;
    }
    let in_place = p
        .opts
        .iter()
        .any(|(n, _)| n == "-i" || n.starts_with("--in-place"))
        || inv
            .args
            .iter()
            .any(|a| a.value.starts_with("-i") && !a.value.starts_with("--"));
    if in_place {
        o.writes(&operands);
        // `-iSUFFIX` / `--in-place=SUFFIX` keeps a backup of each file beside it (a `*`
        // in the suffix stands for the file's name).
        let suffix = inv.args.iter().find_map(|a| {
            let v = a.value.as_str();
            v.strip_prefix("--in-place=")
                .or_else(|| v.strip_prefix("-i").filter(|_| !v.starts_with("--")))
                .filter(|s| !s.is_empty())
                .map(|s| (s.to_owned(), a.literal))
        });
        if let Some((suffix, literal)) = suffix {
            let backups: Vec<Word> = operands
                .iter()
                .map(|f| {
                    let value = if suffix.contains('*') {
                        let (dir, name) = match f.value.rsplit_once('/') {
                            Some((d, n)) => (format!("{d}/"), n),
                            None => (String::new(), f.value.as_str()),
                        };
                        format!("{dir}{}", suffix.replace('*', name))
                    } else {
                        format!("{}{suffix}", f.value)
                    };
                    Word {
                        value,
                        literal: literal && f.literal,
                    }
                })
                .collect();
            o.writes(&backups);
        }
    }
    o.reads(&operands);
    for s in &scripts {
        if !s.literal {
            o.effects.class = Class::Unknown;
            continue;
        }
        sed_script(&s.value, &mut o);
    }
    o
}

/// Scan a sed script for commands that write, read or execute.
fn sed_script(script: &str, o: &mut Outcome) {
    let b = script.as_bytes();
    let mut i = 0;
    let mut at_cmd = true;
    while i < b.len() {
        let c = b[i];
        if !at_cmd {
            if matches!(c, b';' | b'\n' | b'{' | b'}') {
                at_cmd = true;
            }
            i += 1;
            continue;
        }
        match c {
            b' ' | b'\t' | b';' | b'\n' | b'{' | b'}' | b'!' => i += 1,
            // Addresses: line numbers, `$`, `/re/`, `\cREc`, ranges and steps.
            b'0'..=b'9' | b'$' | b',' | b'~' | b'+' => i += 1,
            b'/' => i = skip_delimited(b, i + 1, b'/') + 1,
            b'\\' if i + 1 < b.len() => {
                let d = b[i + 1];
                i = skip_delimited(b, i + 2, d) + 1;
            }
            b'I' | b'M' => i += 1,
            b's' | b'y' if i + 1 < b.len() => {
                let d = b[i + 1];
                let mid = skip_delimited(b, i + 2, d);
                let end = skip_delimited(b, mid + 1, d);
                i = end + 1;
                if c == b's' {
                    // Flags until the end of the command.
                    let start = i;
                    while i < b.len() && !matches!(b[i], b';' | b'\n' | b'}') {
                        if b[i] == b'e' {
                            o.exec("sed", "s///e", script);
                        }
                        if b[i] == b'w' {
                            let file = line_rest(script, i + 1);
                            o.writes([&Word::literal(file.trim())]);
                            i = b.len();
                            break;
                        }
                        i += 1;
                    }
                    let _ = start;
                }
                at_cmd = false;
            }
            b'e' => {
                // `e COMMAND` runs COMMAND through the shell; a bare `e` runs the
                // pattern space, which only the input decides.
                let cmd = line_rest(script, i + 1).trim();
                if cmd.is_empty() {
                    o.exec("sed", "e", "pattern space");
                } else {
                    // An executing argument (sed's purpose is editing text), and the
                    // command is analyzed as what it is.
                    o.exec("sed", "e", cmd);
                    o.code("sed", "e", &Word::literal(cmd));
                }
                i = skip_line(b, i);
            }
            b'w' | b'W' => {
                o.writes([&Word::literal(line_rest(script, i + 1).trim())]);
                i = skip_line(b, i);
            }
            b'r' | b'R' => {
                o.reads([&Word::literal(line_rest(script, i + 1).trim())]);
                i = skip_line(b, i);
            }
            b'a' | b'i' | b'c' => {
                // Text commands run to the end of the line.
                i = skip_line(b, i);
            }
            b'b' | b't' | b'T' | b':' => {
                // Labels end at `;` or a newline.
                at_cmd = false;
                i += 1;
            }
            _ => {
                at_cmd = false;
                i += 1;
            }
        }
    }
}

fn skip_delimited(b: &[u8], mut i: usize, d: u8) -> usize {
    while i < b.len() && b[i] != d {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    i
}

fn skip_line(b: &[u8], i: usize) -> usize {
    b.get(i..)
        .and_then(|r| r.iter().position(|&c| c == b'\n'))
        .map_or(b.len(), |p| i + p + 1)
}

fn line_rest(s: &str, i: usize) -> &str {
    let rest = s.get(i..).unwrap_or("");
    rest.split('\n').next().unwrap_or("")
}
