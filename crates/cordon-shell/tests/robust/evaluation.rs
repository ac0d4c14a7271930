//! Evaluation: bounded on any input, never more literal than the text is.

use super::*;

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
