//! Code in another language handed to an interpreter (`python3 -c`, `node -e`,
//! `perl -e`, an awk program, a heredoc fed to `python3 -`, a script written earlier
//! in the same text). The code itself stays opaque; three things in it are not:
//!
//! - paths its string literals name ([`Effects::mentions`](crate::model::Effects)),
//!   which the policy checks against its guards;
//! - shell command lines given literally to the language's way of running one
//!   (`os.system("…")`, `execSync('…')`, `system "…"`, backquotes in perl and ruby,
//!   `do shell script "…"`): analyzed as the shell text they are;
//! - decoding followed by running (`exec(base64.b64decode(…))`,
//!   `system(pack("H*", …))`): the decode-to-exec hazard, as in a shell pipeline.
//!
//! Recognition is by name, not by parsing the language: a call spelled differently is
//! missed, and the command stays what it was (an executing argument the policy asks
//! about). Nothing here may make a command look safer than the opaque code it is.

use super::Outcome;
use crate::model::{HazardKind, Word};

/// The language family of an interpreter, for the names of its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Python,
    Js,
    Perl,
    Ruby,
    Php,
    Lua,
    R,
    Awk,
    AppleScript,
    Other,
}

fn family(program: &str) -> Family {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match base {
        "python" | "pypy" | "ipython" => Family::Python,
        "node" | "nodejs" | "deno" | "bun" => Family::Js,
        "perl" => Family::Perl,
        "ruby" | "irb" => Family::Ruby,
        "php" => Family::Php,
        "lua" | "luajit" => Family::Lua,
        "Rscript" | "R" => Family::R,
        "awk" | "gawk" | "mawk" | "nawk" => Family::Awk,
        "osascript" => Family::AppleScript,
        _ => Family::Other,
    }
}

/// Calls whose first argument, a string, is a shell command line.
fn shell_calls(f: Family) -> &'static [&'static str] {
    match f {
        Family::Python => &[
            "os.system",
            "os.popen",
            "subprocess.run",
            "subprocess.call",
            "subprocess.check_call",
            "subprocess.check_output",
            "subprocess.Popen",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
            "commands.getoutput",
        ],
        Family::Js => &["execSync", "child_process.exec", ".exec", "shelljs.exec"],
        Family::Perl | Family::Ruby => &["system", "exec", "qx", "%x", "spawn", "IO.popen"],
        Family::Php => &[
            "system",
            "exec",
            "shell_exec",
            "passthru",
            "popen",
            "proc_open",
        ],
        Family::Lua => &["os.execute", "io.popen"],
        Family::R => &["system", "system2"],
        Family::AppleScript => &["do shell script"],
        Family::Awk | Family::Other => &[],
    }
}

/// Calls that delete the path given as their first argument.
fn delete_calls(f: Family) -> &'static [&'static str] {
    match f {
        Family::Python => &[
            "shutil.rmtree",
            "os.remove",
            "os.unlink",
            "os.rmdir",
            "os.removedirs",
            "rmtree",
        ],
        Family::Js => &[
            "rmSync",
            "rmdirSync",
            "unlinkSync",
            "fs.rm",
            "fs.rmdir",
            "fs.unlink",
            "rimraf",
            "Deno.remove",
            "Deno.removeSync",
        ],
        Family::Perl => &["rmtree", "remove_tree", "unlink"],
        Family::Ruby => &[
            "FileUtils.rm_rf",
            "FileUtils.rm_r",
            "FileUtils.rm",
            "FileUtils.remove_dir",
            "FileUtils.remove_entry",
            "File.delete",
            "Dir.rmdir",
        ],
        Family::Php => &["unlink", "rmdir"],
        Family::Lua => &["os.remove"],
        Family::R => &["unlink", "file.remove"],
        Family::Awk | Family::AppleScript | Family::Other => &[],
    }
}

/// Calls that decode or transform text.
fn decoders(f: Family) -> &'static [&'static str] {
    match f {
        Family::Python => &[
            "b64decode",
            "b32decode",
            "b16decode",
            "a85decode",
            "b85decode",
            "decodebytes",
            "codecs.decode",
            "fromhex",
            "unhexlify",
            "decompress",
            "rot13",
            "rot_13",
            "[::-1]",
            "chr(",
        ],
        Family::Js => &[
            "atob(",
            "'base64'",
            "\"base64\"",
            "'hex'",
            "\"hex\"",
            "fromCharCode",
            "reverse()",
            "unescape(",
            "decodeURIComponent(",
        ],
        Family::Perl => &[
            "pack(",
            "pack ",
            "decode_base64",
            "MIME::Base64",
            "reverse",
            "chr(",
            "tr/",
            "y/",
        ],
        Family::Ruby => &[
            "unpack", "decode64", "Base64", ".reverse", ".pack(", ".tr(", "hex_to",
        ],
        Family::Php => &[
            "base64_decode",
            "hex2bin",
            "str_rot13",
            "gzinflate",
            "gzuncompress",
            "strrev",
            "chr(",
            "pack(",
        ],
        Family::Lua => &["string.char", "string.reverse", "from_hex", "mime.unb64"],
        Family::R => &["rawToChar", "base64", "intToUtf8", "rev("],
        Family::Awk => &["%c"],
        Family::AppleScript | Family::Other => &[],
    }
}

/// Calls that fetch from the network.
fn fetchers(f: Family) -> &'static [&'static str] {
    match f {
        Family::Python => &[
            "urlopen",
            "requests.get",
            "requests.post",
            "httpx.",
            "urlretrieve",
        ],
        Family::Js => &["fetch(", "http.get", "https.get", "axios"],
        Family::Perl => &["LWP::", "HTTP::Tiny", "get(\"http"],
        Family::Ruby => &["open-uri", "Net::HTTP", "URI.open", "URI.parse"],
        Family::Php => &[
            "file_get_contents('http",
            "file_get_contents(\"http",
            "curl_exec",
        ],
        Family::Lua => &["socket.http", "http.request"],
        Family::R => &["url(", "download.file", "readLines(\"http"],
        Family::Awk | Family::AppleScript | Family::Other => &[],
    }
}

/// Calls that run code (in the language or through a shell).
fn runners(f: Family) -> &'static [&'static str] {
    match f {
        Family::Python => &[
            "exec(",
            "eval(",
            "compile(",
            "os.system",
            "os.popen",
            "subprocess",
            "pty.spawn",
        ],
        Family::Js => &[
            "eval(",
            "Function(",
            "child_process",
            "execSync",
            "spawn",
            "vm.run",
        ],
        Family::Perl => &["eval", "system", "exec", "qx", "`"],
        Family::Ruby => &[
            "eval",
            "system",
            "exec",
            "`",
            "%x",
            "spawn",
            "instance_eval",
        ],
        Family::Php => &[
            "eval(",
            "system(",
            "exec(",
            "shell_exec",
            "passthru",
            "assert(",
            "popen",
        ],
        Family::Lua => &["os.execute", "load(", "loadstring", "io.popen", "dofile"],
        Family::R => &["system", "eval(", "source("],
        Family::Awk => &["system", "| \"", "|\""],
        Family::AppleScript | Family::Other => &[],
    }
}

/// Look through interpreter code run by `program`: paths its strings name become
/// mentions, literal shell commands it runs become shell code, and decoding followed
/// by running is recorded for the decode-to-exec hazard.
pub(crate) fn inline_code(o: &mut Outcome, program: &str, code: &Word) {
    let f = family(program);
    o.mentions_in_code(code);
    // Tokens of command lines inside strings (`os.system("cat /x")` names `/x`).
    let tokens: Vec<Word> = super::string_literals(&code.value)
        .iter()
        .flat_map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .map(Word::literal)
        .collect();
    o.push_mentions(&tokens, super::code_may_write(&code.value));
    if !code.literal {
        // Parts are only known at run time; what is visible still names paths, but a
        // command line found in it may not be the one that runs.
        if !shell_commands(f, &code.value).is_empty() {
            o.exec(program, "shell command", "a command line built at run time");
        }
    } else {
        for cmd in shell_commands(f, &code.value) {
            o.code(program, "shell command", &Word::literal(cmd));
        }
        // `shutil.rmtree('/home/dev')`: the path is deleted, which the critical-delete
        // guard judges.
        let deleted: Vec<Word> = literal_first_args(&code.value, delete_calls(f))
            .into_iter()
            .filter(|p| !p.contains(['$', '`']))
            .map(Word::literal)
            .collect();
        o.deletes(&deleted);
    }
    let text = code.value.as_str();
    let decodes = decoders(f).iter().any(|d| text.contains(d));
    let runs = runners(f).iter().any(|r| text.contains(r));
    let fetches = fetchers(f).iter().any(|d| text.contains(d));
    if fetches && runs {
        o.hazards.push((
            HazardKind::FetchToExec,
            format!("{program}'s code fetches text from the network and runs it"),
        ));
    }
    if decodes && runs {
        o.hazards.push((
            HazardKind::DecodeToExec,
            format!("{program}'s code decodes text and runs what it decoded"),
        ));
    }
}

/// Shell-like code for another shell (`pwsh -c`, `fish -c`): the words that look like
/// paths become mentions, which its command lines may do anything with.
pub(crate) fn shell_like_code(o: &mut Outcome, code: &Word) {
    o.mentions_in_code(code);
    let words: Vec<Word> = code
        .value
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '\'' | '"'))
        .filter(|w| !w.is_empty())
        .map(Word::literal)
        .collect();
    o.mentions(&words);
}

/// The literal command lines `code` passes to its language's shell-running calls.
fn shell_commands(f: Family, code: &str) -> Vec<String> {
    let mut out = literal_first_args(code, shell_calls(f));
    if matches!(f, Family::Perl | Family::Ruby | Family::Php) {
        // Backquotes run their text through the shell.
        let mut parts = code.split('`');
        parts.next();
        while let (Some(cmd), Some(_)) = (parts.next(), parts.next()) {
            if !cmd.trim().is_empty() {
                out.push(cmd.to_owned());
            }
        }
    }
    out
}

/// The string literals given as the first argument of the named calls
/// (`system("…")`, `system "…"`, `rmtree('…')`, `subprocess.run(["…"…])` is not one).
pub(super) fn literal_first_args(code: &str, calls: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for call in calls {
        let mut from = 0;
        while let Some(pos) = code[from..].find(call) {
            let at = from + pos;
            from = at + call.len();
            // A name inside a longer identifier (`mysystem`) is another call.
            if call.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let rest = code[from..].trim_start();
            // `system("…")`, `system "…"`, `qx(…)`, `%x(…)`, `subprocess.run(["…"…])`.
            let rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
            if let Some(lit) = leading_string(rest)
                && !out.contains(&lit)
            {
                out.push(lit);
            }
        }
    }
    out
}

/// The string literal at the start of `s` (`'…'` or `"…"`), unescaped.
fn leading_string(s: &str) -> Option<String> {
    let q = s.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let mut out = String::new();
    let mut chars = s[1..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                e => out.push(e),
            },
            c if c == q => return Some(out),
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(program: &str, code: &str) -> Outcome {
        let mut o = Outcome::read_only();
        inline_code(&mut o, program, &Word::literal(code));
        o
    }

    #[test]
    fn python_os_system_is_shell_code() {
        let o = run("python3", "import os;os.system(\"rm -rf /home/dev\")");
        assert_eq!(o.shell_code.len(), 1, "{o:?}");
        assert_eq!(o.shell_code[0].1.value, "rm -rf /home/dev");
    }

    #[test]
    fn paths_in_strings_are_mentions() {
        let o = run("python3", "print(open('/home/dev/.ssh/id_rsa').read())");
        assert_eq!(o.effects.mentions[0].value, "/home/dev/.ssh/id_rsa");
        let o = run("node", "require('fs').readFileSync('.env','utf8')");
        assert!(
            o.effects.mentions.iter().any(|w| w.value == ".env"),
            "{o:?}"
        );
    }

    #[test]
    fn decode_then_run() {
        let o = run(
            "python3",
            "import codecs,os;os.system(codecs.decode('ez -es ~','rot13'))",
        );
        assert!(!o.hazards.is_empty());
        let o = run("python3", "import base64;print(base64.b64decode('eA=='))");
        assert!(o.hazards.is_empty());
    }

    #[test]
    fn delete_calls_delete() {
        let o = run("python3", "import shutil;shutil.rmtree('/home/dev')");
        assert_eq!(o.effects.deletes[0].value, "/home/dev");
        let o = run("perl", "rmtree(\"/home/dev\")");
        assert_eq!(o.effects.deletes[0].value, "/home/dev");
    }

    #[test]
    fn perl_backquotes() {
        let o = run("perl", "print `cat /etc/passwd`");
        assert_eq!(o.shell_code[0].1.value, "cat /etc/passwd");
    }
}
