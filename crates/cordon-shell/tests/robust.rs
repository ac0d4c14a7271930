//! The analyzer never panics, never overflows the stack and never hangs, whatever the
//! input: arbitrary text, generated shell-ish token soups, and pathological nesting.
//! These run on the default 2 MiB test thread stack on purpose.

use std::time::{Duration, Instant};

use cordon_shell::{Class, analyze};
use proptest::prelude::*;

/// Generous bound for one analysis in an unoptimized build on a loaded machine.
const LIMIT: Duration = Duration::from_secs(20);

fn timed(text: &str) -> cordon_shell::Analysis {
    let start = Instant::now();
    let a = analyze(text);
    let took = start.elapsed();
    assert!(
        took < LIMIT,
        "analysis of {} bytes took {took:?}",
        text.len()
    );
    a
}

/// Anything that failed to parse must not look fully visible to the policy.
fn fails_closed(a: &cordon_shell::Analysis) {
    if a.parse_error.is_some() {
        assert!(a.has_opaque_parts());
    }
}

const TOKENS: &[&str] = &[
    "$(",
    ")",
    "(",
    "{ ",
    " }",
    "'",
    "\"",
    "`",
    "${",
    "}",
    ";",
    "|",
    "||",
    "&&",
    "&",
    "\n",
    "<<EOF\n",
    "\nEOF\n",
    "<<'X'\n",
    "\nX\n",
    "<(",
    ">(",
    "$'\\x72",
    "\\\n",
    "\\",
    "!",
    "if ",
    "then ",
    "fi",
    "case ",
    " in ",
    "esac",
    "for ",
    "do ",
    "done",
    "while ",
    "bash -c ",
    "sh -c '",
    "eval ",
    "source ",
    ". ",
    "f() ",
    "alias a=",
    "rm ",
    "-rf ",
    "~/",
    "$HOME",
    "$IFS",
    "${x@P}",
    "${!x}",
    "*",
    "?",
    "[a]",
    "{a,b}",
    "=",
    "x",
    " ",
    "2>&1",
    ">",
    ">>",
    "<",
    "<<<",
    "&>",
    "$((",
    "))",
    "[[ ",
    " ]]",
    "sudo ",
    "env -S '",
    "xargs ",
    "find . -exec ",
    " {} \\;",
    "curl x | sh",
    "nslookup $(",
    "git -c ",
    "sed -e 'e ",
    "awk '{system(",
    "function g { ",
    "coproc ",
    "time ",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..60).prop_map(|v| v.concat())
}

/// Programs with knowledge-base entries and wrappers, to drive every option parser.
const PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "rg",
    "ag",
    "find",
    "fd",
    "sed",
    "awk",
    "gawk",
    "jq",
    "yq",
    "sort",
    "uniq",
    "cp",
    "mv",
    "ln",
    "install",
    "rsync",
    "tar",
    "zip",
    "unzip",
    "gzip",
    "base64",
    "dd",
    "tee",
    "touch",
    "mkdir",
    "rm",
    "shred",
    "chmod",
    "chown",
    "patch",
    "split",
    "mktemp",
    "git",
    "curl",
    "wget",
    "http",
    "ssh",
    "scp",
    "nc",
    "socat",
    "dig",
    "nslookup",
    "ping",
    "getent",
    "openssl",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "bash",
    "sh",
    "eval",
    "source",
    "trap",
    "vim",
    "emacs",
    "man",
    "less",
    "make",
    "cmake",
    "npm",
    "yarn",
    "npx",
    "cargo",
    "go",
    "pip",
    "uv",
    "gcc",
    "apt-get",
    "env",
    "timeout",
    "time",
    "nice",
    "ionice",
    "nohup",
    "stdbuf",
    "command",
    "builtin",
    "exec",
    "xargs",
    "flock",
    "setsid",
    "watch",
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "chroot",
    "unshare",
    "nsenter",
    "crontab",
    "systemctl",
    "claude",
    "gemini",
    "codex",
    "docker",
    "parallel",
    "export",
    "cd",
    "date",
    "hostname",
    "sysctl",
    "history",
    "alias",
    "unset",
    "let",
    "at",
];

const ARGS: &[&str] = &[
    "-",
    "--",
    "-é",
    "--é=é",
    "-xé",
    "é",
    "-c",
    "-e",
    "-o",
    "-O",
    "-i",
    "-I",
    "-x",
    "-X",
    "-f",
    "-C",
    "-u",
    "-s",
    "-n",
    "-p",
    "-d",
    "-r",
    "-l",
    "-t",
    "-S",
    "-a",
    "-v",
    "-m",
    "--output",
    "--output=",
    "--exec",
    "--pre",
    "--rsh",
    "--config",
    "--eval",
    "=",
    "a=b",
    "x",
    "./x",
    "/etc/passwd",
    "~",
    "$X",
    "'a b'",
    "\"$(id)\"",
    "host:path",
    "https://h/x",
    "{}",
    ";",
    "+",
    ":::",
    "u+s",
    "4755",
    "s/a/b/e",
    "1e id",
    "w f",
    "BEGIN{system(1)}",
    "if=/x",
    "of=/y",
    "@f",
    "run",
    "test",
    "install",
    "clone",
    "commit",
    "status",
    "log",
    "-p",
    "status",
    "--user",
    "enable",
    "hosts",
    "s_client",
    "-connect",
    "EXEC:sh",
    "TCP:h:1",
    "+cmd",
    "bypassPermissions",
    "--permission-mode",
];

fn invocation() -> impl Strategy<Value = String> {
    (
        prop::sample::select(PROGRAMS),
        prop::collection::vec(prop::sample::select(ARGS), 0..8),
    )
        .prop_map(|(p, args)| format!("{p} {}", args.join(" ")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn every_program_entry_survives_odd_arguments(s in invocation()) {
        let a = timed(&s);
        fails_closed(&a);
    }

    #[test]
    fn wrapper_chains_survive_odd_arguments(parts in prop::collection::vec(invocation(), 1..4)) {
        let a = timed(&parts.join(" "));
        fails_closed(&a);
    }

    #[test]
    fn arbitrary_text_never_panics(s in ".{0,300}") {
        let a = timed(&s);
        fails_closed(&a);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let s = String::from_utf8_lossy(&bytes);
        let a = timed(&s);
        fails_closed(&a);
    }

    #[test]
    fn token_soup_never_panics(s in soup()) {
        let a = timed(&s);
        fails_closed(&a);
        for c in &a.commands {
            // An unknown program is never presented as read-only.
            if c.effects.class == Class::ReadOnly {
                prop_assert!(c.program.as_ref().is_none_or(|p| p.literal) || !c.dynamic.is_empty());
            }
        }
    }
}

#[test]
fn deep_command_substitution() {
    let text = format!("echo {}x{}", "$(".repeat(10_000), ")".repeat(10_000));
    let a = timed(&text);
    assert!(a.parse_error.is_some());
}

#[test]
fn deep_parentheses() {
    let text = format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000));
    let a = timed(&text);
    assert!(a.parse_error.is_some());
}

#[test]
fn deep_unclosed_parentheses() {
    let a = timed(&"((((".repeat(25_000));
    assert!(a.parse_error.is_some());
}

#[test]
fn deep_braces_and_keywords() {
    for (open, close) in [
        ("{ ", "; }"),
        ("if true; then ", "; fi"),
        ("while true; do ", "; done"),
        ("\"$(", ")\""),
        ("`", "`"),
        ("${x:-", "}"),
    ] {
        let text = format!("{}x{}", open.repeat(5_000), close.repeat(5_000));
        let a = timed(&text);
        assert!(a.parse_error.is_some() || !a.commands.is_empty(), "{open}");
    }
}

#[test]
fn nesting_just_under_the_limit_is_analyzed() {
    let text = format!("{}rm -rf x{}", "$(".repeat(30), ")".repeat(30));
    let a = timed(&text);
    assert!(a.parse_error.is_none(), "{:?}", a.parse_error);
    assert!(
        a.commands
            .iter()
            .any(|c| c.effects.deletes.iter().any(|w| w.value == "x")
                || c.dynamic.contains(&cordon_shell::Dynamic::TooDeep))
    );
}

/// Shell strings reset the parser's nesting count, so each level is checked anew; the
/// analysis depth limit must stop the chain.
#[test]
fn deep_shell_strings_via_heredocs() {
    let mut text = String::from("rm -rf innermost\n");
    for i in 0..40 {
        let inner = format!("{}x{}\n", "{ ".repeat(50), "; }".repeat(50));
        text = format!("bash <<E{i}\n{inner}{text}E{i}\n");
    }
    let a = timed(&text);
    assert!(
        a.parse_error.is_some()
            || a.commands
                .iter()
                .any(|c| c.dynamic.contains(&cordon_shell::Dynamic::TooDeep))
    );
}

#[test]
fn deep_eval_chain() {
    // `eval eval … rm -rf z`: each eval runs the rest as shell text one level deeper.
    let text = format!("{}rm -rf z", "eval ".repeat(40));
    let a = timed(&text);
    assert!(
        a.commands
            .iter()
            .any(|c| c.dynamic.contains(&cordon_shell::Dynamic::TooDeep))
    );
}

/// Functions calling each other twice per level would expand exponentially.
#[test]
fn function_call_blowup_is_bounded() {
    let mut text = String::from("f0() { rm -f a; }\n");
    for i in 1..40 {
        text.push_str(&format!("f{i}() {{ f{p}; f{p}; cd d{i}; }}\n", p = i - 1));
    }
    text.push_str("f39\n");
    let a = timed(&text);
    assert!(a.commands.len() < 100_000);
    assert!(
        a.commands
            .iter()
            .any(|c| c.effects.deletes.iter().any(|w| w.value == "a"))
    );
}

#[test]
fn long_chain_is_fully_analyzed() {
    let mut text = "echo ok && ".repeat(4_999);
    text.push_str("rm -rf /");
    let a = timed(&text);
    assert_eq!(a.commands.len(), 5_000);
    assert!(
        a.commands
            .last()
            .is_some_and(|c| c.effects.deletes.iter().any(|w| w.value == "/"))
    );
}

#[test]
fn huge_single_word_and_heredoc() {
    let word = "a".repeat(1 << 20);
    timed(&format!("echo {word}"));
    timed(&format!("cat <<EOF\n{word}\nEOF\n"));
    timed(&format!("echo '{word}"));
}

/// The worst case for stack use: nesting just under the parser limit at every level
/// of shell strings, down past the analysis depth limit. Double-quoted `bash -c`
/// strings hide their nesting from the enclosing level, so every level is parsed with
/// a fresh nesting budget.
#[test]
fn nesting_under_the_limit_at_every_shell_level() {
    fn dq_escape(s: &str) -> String {
        let mut out = String::with_capacity(s.len() * 2);
        for ch in s.chars() {
            if matches!(ch, '\\' | '"' | '$' | '`') {
                out.push('\\');
            }
            out.push(ch);
        }
        out
    }
    for (open, close) in [
        ("if true; then ", "; fi"),
        ("{ ", "; }"),
        ("while true; do ", "; done"),
        ("( ", " )"),
        ("case x in x) ", ";; esac"),
    ] {
        let mut text = String::from("rm -rf innermost");
        for _ in 0..16 {
            text = format!(
                "{}bash -c \"{}\"{}",
                open.repeat(60),
                dq_escape(&text),
                close.repeat(60)
            );
        }
        let a = timed(&text);
        // The outer levels are analyzed; the innermost ones exceed the budget and are
        // refused, which the policy must treat as a parse failure.
        assert!(
            a.commands
                .iter()
                .any(|c| c.program.as_ref().is_some_and(|p| p.value == "bash")),
            "{open}: {:?}",
            a.parse_error
        );
        assert!(a.parse_error.is_some(), "{open}");
    }
}

/// brush-parser 0.4.0 panics (an `unwrap` in its tokenizer) on this input; the
/// analyzer must turn that into a parse error.
#[test]
fn regress_parser_panic_is_a_parse_error() {
    let a = timed("sed -e 'e '$(sh -c 'sed -e 'e <<'X'\n)\nX\n");
    assert!(a.parse_error.is_some());
}

/// `env -S STRING` followed by an option that takes a value but has none (`--chdir`,
/// `-C`, `--unset` last) put the program's start past the end of the words, and the
/// split string's arguments were sliced from there: a panic. The string is analyzed
/// as the command it is.
#[test]
fn env_split_string_then_an_option_missing_its_value_is_analyzed() {
    for text in [
        "env -S 'rm -rf x' --chdir",
        "env -S 'rm -rf x' -C",
        "env '-Srm -rf x' --unset",
    ] {
        let a = timed(text);
        let rm = a
            .commands
            .iter()
            .find(|c| c.program.as_ref().is_some_and(|p| p.value == "rm"));
        assert!(
            rm.is_some_and(|c| c.effects.deletes.iter().any(|w| w.value == "x")),
            "{text}: {a:?}"
        );
    }
}

/// A script that grows and is run after every append would make analysis quadratic.
#[test]
fn growing_script_runs_are_bounded() {
    let line = format!("echo '{}' >> s.sh; bash s.sh\n", "x".repeat(1_000));
    let text = format!("echo ls > s.sh\n{}", line.repeat(1_000));
    let a = timed(&text);
    assert!(a.commands.iter().any(|c| {
        c.dynamic
            .iter()
            .any(|d| matches!(d, cordon_shell::Dynamic::Opaque(_)))
    }));
}

#[test]
fn a_malformed_heredoc_is_refused_before_the_parser() {
    // brush-parser 0.4.0 allocates without bound on these (24 GB seen for `<<$(  `).
    for text in [
        "<<$(  ",
        "cat <<\"$(\t ",
        "<< $($(  ",
        "x <<-`  ",
        "\"$(x=1 << >(#${bash -cEOF<",
        " ${catls$(;ls$'\\x72m'=<<$( <<<||eval&&||#)src;fi>>",
        "\n$(ifrmif <<  -rf<~EOFx=1if>(;(#",
    ] {
        let a = timed(text);
        assert!(a.parse_error.is_some(), "{text:?}");
        fails_closed(&a);
    }
    // Ordinary here-documents and shifts by a number still parse.
    for text in [
        "cat <<EOF\nhi\nEOF",
        "cat <<-'EOF'\nhi\nEOF",
        "cat <<\\EOF\nhi\nEOF",
        "echo $((1<<4))",
        "cat <<<hello",
    ] {
        assert!(timed(text).parse_error.is_none(), "{text:?}");
    }
}

// ---- evaluation: bounded on any input, never more literal than the text is --------------

/// Pieces of the constructs the analysis evaluates.
const EVAL_TOKENS: &[&str] = &[
    "{",
    "}",
    ",",
    "..",
    "1",
    "a",
    "~",
    "/",
    ".ssh",
    "$x",
    "$y",
    "${x",
    "${!x",
    "${#x",
    ":-",
    ":=",
    "-",
    "=",
    "+",
    ":?",
    "#",
    "##",
    "%",
    "%%",
    "/",
    "//",
    "^^",
    ",,",
    ":1:2",
    "@P",
    "@Q",
    "@E",
    "@A",
    "@U",
    "[@]",
    "[*]",
    "[1]",
    "[-1]",
    "}",
    "x=",
    "y=",
    "a=(",
    ")",
    " ",
    "; ",
    "\n",
    "'",
    "\"",
    "\\",
    "*",
    "?",
    "[",
    "]",
    "$IFS",
    "IFS=, ",
    "for i in a b; do ",
    "; done",
    "while read x; do ",
    "if true; then ",
    "; fi",
    " && ",
    " || ",
    " | ",
    "(",
    "f() { ",
    "; }",
    "f",
    "read -r x <<< ",
    "printf -v x '%s' ",
    "export ",
    "declare -n ",
    "declare -a ",
    "local ",
    "unset ",
    "eval ",
    "source ",
    "trap ",
    "shopt -s lastpipe",
    "$(echo ",
    "$(printf ",
    "cat ",
    "rm -rf ",
    "/???/c?t ",
    "$HOME",
    "\"$HOME\"",
    "$'\\x72'",
];

fn eval_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(EVAL_TOKENS), 0..50).prop_map(|v| v.concat())
}

/// A word of literal characters, quotes and references to a variable the text never
/// assigns (`$U`), after `x` and `arr` were assigned literals.
fn word_with_unknowns() -> impl Strategy<Value = (String, bool)> {
    let piece = prop::sample::select(
        &[
            ("a", false),
            ("/", false),
            ("${x}", false),
            ("\"$x\"", false),
            ("${x:-b}", false),
            ("${arr[1]}", false),
            ("{c,d}", false),
            ("$U", true),
            ("\"$U\"", true),
            ("${U}", true),
            ("${x:+$U}", true),
            ("$(id)", true),
        ][..],
    );
    prop::collection::vec(piece, 1..6).prop_map(|v| {
        let unknown = v.iter().any(|(_, u)| *u);
        (v.iter().map(|(p, _)| *p).collect::<String>(), unknown)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 800, ..ProptestConfig::default() })]

    #[test]
    fn evaluation_soup_never_panics(s in eval_soup()) {
        let a = timed(&s);
        fails_closed(&a);
    }

    /// A word that refers to a value the text does not fix never yields a literal
    /// argument: evaluation only ever removes uncertainty the text itself removes.
    #[test]
    fn unknown_parts_stay_unknown((w, unknown) in word_with_unknowns()) {
        let text = format!("x=v; arr=(p q); cat {w}");
        let a = timed(&text);
        let cat = a.commands.iter().find(|c| c.program.as_ref().is_some_and(|p| p.value == "cat"));
        let cat = cat.expect("cat runs");
        if unknown {
            prop_assert!(
                cat.args.iter().any(|w| !w.literal) || !cat.dynamic.is_empty(),
                "{text}: {:?}", cat.args
            );
        } else {
            prop_assert!(cat.args.iter().all(|w| w.literal), "{text}: {:?}", cat.args);
        }
    }

    /// Assignments in code that may not run (a branch, a loop, a function, a subshell
    /// seen from outside) never make a later use literal.
    #[test]
    fn conditional_assignments_stay_unknown(
        wrap in prop::sample::select(&[
            "if c; then {}; fi",
            "c && {}",
            "c || {}",
            "c && d || {}",
            "for i in 1 2; do {}; done",
            "while c; do {}; done",
            "case $1 in a) {};; esac",
            "f() {{ {}; }}; f",
            "trap '{}' EXIT",
        ][..]),
        assign in prop::sample::select(&["K=b", "read K", "printf -v K b", "K+=b", "declare K=b"][..]),
    ) {
        let inner = wrap.replace("{}", assign).replace("{{", "{").replace("}}", "}");
        let text = format!("K=a; {inner}; cat $K");
        let a = timed(&text);
        let cat = a.commands.iter().rev().find(|c| c.program.as_ref().is_some_and(|p| p.value == "cat"));
        let cat = cat.expect("cat runs");
        prop_assert!(cat.args.iter().any(|w| !w.literal), "{text}: {:?}", cat.args);
    }
}

/// Analysis time of `text` repeated until `size` bytes.
fn time_at(line: &str, size: usize) -> Duration {
    let text = format!("{line}\n").repeat(size / (line.len() + 1) + 1);
    let start = Instant::now();
    let a = analyze(&text);
    let took = start.elapsed();
    fails_closed(&a);
    took
}

/// Doubling the input must not much more than double the time: the evaluation budgets
/// are proportional to the text.
fn linear(line: &str) {
    let small = time_at(line, 64 << 10);
    let large = time_at(line, 256 << 10);
    assert!(large < LIMIT, "{line}: {large:?}");
    // 4× the input; allow generous noise on a loaded machine.
    assert!(
        large < small * 12 + Duration::from_millis(200),
        "{line}: {small:?} for 64 KiB, {large:?} for 256 KiB"
    );
}

#[test]
fn evaluation_worst_cases_scale_linearly() {
    for line in [
        "echo {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}",
        "echo {a,{b,{c,{d,{e,{f,{g,{h,{i,{j,{k,{l,{m,{n,{o,{p,q}}}}}}}}}}}}}}}}",
        "v=$v$v; echo \"$v\" ${#v} ${v//a/b} ${v%%/*}",
        "for a in 1 2 3 4; do for b in 1 2 3 4; do for c in 1 2 3 4; do cat $a$b$c; done; done; done",
        "k=a; while read x; do cat $k; k=$x; done < f",
        "/???/??? ~/.s?h/id_* /etc/*",
        "cat \"$(echo ~/x)\" \"$(printf '%s' y)\"",
        "x=$(printf '%s' \"$x$x\"); echo ${x@Q} ${x@P}",
    ] {
        linear(line);
    }
}

#[test]
fn pathological_words_are_bounded() {
    for text in [
        // Unclosed braces: each `{` would scan to the end of the word.
        "echo ".to_owned() + &"{".repeat(200_000),
        "echo ".to_owned() + &"{a,".repeat(50_000),
        // A brace expansion far past the cap.
        "echo ".to_owned() + &"{a,b}".repeat(5_000),
        "echo {1..99999999}".to_owned(),
        // A value doubled until the cap, then used many times.
        "v=x; ".to_owned() + &"v=$v$v; ".repeat(40) + &"echo $v ".repeat(5_000),
        // Pattern operators on the longest value kept.
        format!("v={}; ", "a".repeat(4_000)) + &"echo ${v//a*a/b} ${v##*a} ".repeat(2_000),
        // Indirection chains.
        (0..5_000)
            .map(|i| format!("v{}=v{}; ", i + 1, i))
            .collect::<String>()
            + "echo ${!v5000}",
        // A long literal for list.
        format!("for i in {}; do cat $i; done", "x ".repeat(100_000)),
    ] {
        let a = timed(&text);
        fails_closed(&a);
    }
}

#[test]
fn globs_intersect_guards_without_blowup() {
    use cordon_shell::pattern::Pattern;
    let g = Pattern::parse(&"*a".repeat(200));
    let p = Pattern::parse(&"*b".repeat(200));
    let start = Instant::now();
    let _ = g.could_match(&p);
    assert!(start.elapsed() < LIMIT);
}

/// Brute force: is there a name of at most 4 characters over a small alphabet that the
/// glob matches (file-name rules) and the guard matches ignoring case?
fn witness(g: &cordon_shell::pattern::Pattern, p: &cordon_shell::pattern::Pattern) -> bool {
    let alphabet = ['a', 'B', '.', '-'];
    let mut names = vec![String::new()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for n in &names {
            for c in alphabet {
                let mut m = n.clone();
                m.push(c);
                next.push(m);
            }
        }
        names.extend(next.iter().cloned());
        names = names
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
    }
    names.iter().filter(|n| !n.is_empty()).any(|n| {
        g.matches_name(n)
            && (p.matches(n)
                || p.matches(&n.to_ascii_lowercase())
                || p.matches(&n.to_ascii_uppercase()))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// `could_match` never misses a name both patterns match (it may only err towards
    /// matching).
    #[test]
    fn intersection_never_misses(
        g in prop::collection::vec(prop::sample::select(&["a", "B", ".", "-", "*", "?", "[aB]", "[!a]"][..]), 1..4),
        p in prop::collection::vec(prop::sample::select(&["a", "b", ".", "-", "*", "?"][..]), 1..4),
    ) {
        use cordon_shell::pattern::Pattern;
        let (g, p) = (Pattern::parse(&g.concat()), Pattern::parse(&p.concat()));
        if witness(&g, &p) {
            prop_assert!(g.could_match(&p), "{g:?} {p:?}");
        }
    }
}
