//! Pathological nesting, blow-ups and long inputs stay bounded and fail closed.

use super::*;

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

/// Substitutions as deep as the parse estimate allows (each may be read three times by
/// the word grammar, `parse/nesting.rs`) are analyzed; deeper ones are refused (ask).
#[test]
fn nesting_just_under_the_limit_is_analyzed() {
    let deeper = format!("{}rm -rf x{}", "$(".repeat(30), ")".repeat(30));
    assert!(timed(&deeper).parse_error.is_some());
    let text = format!("{}rm -rf x{}", "$(".repeat(9), ")".repeat(9));
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
    // Subshells and `case`s this deep never reach the parser: it may read each
    // subshell's inside twice, and a `case` counts two levels (itself and its item), so
    // the estimate refuses them first (`parse/nesting.rs`).
    for (open, close, why) in [
        ("( ", " )", "again and again"),
        ("case x in x) ", ";; esac", "levels deep"),
    ] {
        let a = timed(&format!("{}rm -rf x{}", open.repeat(60), close.repeat(60)));
        let e = a.parse_error.expect("refused");
        assert!(e.contains(why), "{open}: {e}");
    }
    for (open, close) in [
        ("if true; then ", "; fi"),
        ("{ ", "; }"),
        ("while true; do ", "; done"),
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
