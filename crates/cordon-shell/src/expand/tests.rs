//! Tests of word expansion.

use super::*;

fn env_with(vars: &[(&str, Val)]) -> Env {
    let mut e = Env::default();
    for (n, v) in vars {
        e.set(n, v.clone());
    }
    e
}

fn s(v: &str) -> Val {
    Val::Str(v.into())
}

/// Expand with the given variables; fields as (value, literal).
fn ex(vars: &[(&str, Val)], raw: &str) -> Vec<(String, bool)> {
    let mut e = env_with(vars);
    let mut budget = 1 << 20;
    let mut x = Expander::new(&mut e, &mut budget);
    x.word(raw, Mode::Command)
        .fields
        .into_iter()
        .map(|f| {
            let lit = f.literal();
            (f.value, lit)
        })
        .collect()
}

fn vals(vars: &[(&str, Val)], raw: &str) -> Vec<String> {
    ex(vars, raw)
        .into_iter()
        .map(|(v, lit)| {
            assert!(lit, "{raw}: {v} should be literal");
            v
        })
        .collect()
}

#[test]
fn quotes_and_escapes() {
    assert_eq!(vals(&[], r#"'a b'"c\"d"e\ f"#), ["a bc\"de f"]);
    assert_eq!(vals(&[], r"$'\x72m'"), ["rm"]);
    assert_eq!(vals(&[], r"$'\162\155'"), ["rm"]);
    assert_eq!(vals(&[], "$\"a b\""), ["a b"]);
    assert_eq!(vals(&[], "a\\\nb"), ["ab"]);
    assert_eq!(vals(&[], "''"), [""]);
    assert!(!ex(&[], "$never_assigned")[0].1, "inherited: unknown");
}

#[test]
fn home_forms() {
    for w in [
        "~/x",
        "$HOME/x",
        "${HOME}/x",
        "\"$HOME\"/x",
        "\"$HOME/x\"",
        "${HOME:?}/x",
    ] {
        assert_eq!(vals(&[], w), ["~/x"], "{w}");
    }
    assert!(!ex(&[], "$HOMEX/y")[0].1);
    assert!(!ex(&[], "~root/x")[0].1);
    assert!(!ex(&[], "x$HOME")[0].1, "home in the middle");
    assert_eq!(vals(&[("HOME", s("/tmp"))], "~/x"), ["/tmp/x"]);
}

#[test]
fn braces() {
    assert_eq!(vals(&[], "{rm,-rf,~}"), ["rm", "-rf", "~"]);
    assert_eq!(vals(&[], "a{1..3}"), ["a1", "a2", "a3"]);
    assert_eq!(vals(&[], "{01..3}"), ["01", "02", "03"]);
    assert_eq!(vals(&[], "{a..e..2}"), ["a", "c", "e"]);
    assert_eq!(vals(&[], "{3..1}"), ["3", "2", "1"]);
    assert_eq!(vals(&[], "~/{.ssh,.aws}"), ["~/.ssh", "~/.aws"]);
    assert_eq!(vals(&[], "x{a,b{c,d}}y"), ["xay", "xbcy", "xbdy"]);
    assert_eq!(vals(&[], "{a}{b,c}"), ["{a}b", "{a}c"]);
    assert_eq!(vals(&[], "'{a,b}'"), ["{a,b}"]);
    assert_eq!(vals(&[], "{a,'b,c'}"), ["a", "b,c"]);
    assert_eq!(vals(&[], "{}"), ["{}"]);
    assert_eq!(vals(&[], "x{,}y"), ["xy", "xy"]);
    assert!(vals(&[], "{,}").is_empty());
    // Too many words: opaque.
    let big = ex(&[], "{1..1000}");
    assert_eq!(big.len(), 1);
    assert!(!big[0].1);
    let wide = ex(&[], &"{a,b}".repeat(9));
    assert_eq!(wide.len(), 1);
    assert!(!wide[0].1);
    assert_eq!(ex(&[], &"{a,b}".repeat(8)).len(), 256);
}

#[test]
fn variables_and_splitting() {
    let v = [
        ("K", s("\0/.ssh/id_rsa")),
        ("D", s(".vscode")),
        ("C", s("rm -rf  /home/dev")),
        ("E", s("")),
    ];
    assert_eq!(vals(&v, "\"$K\""), ["~/.ssh/id_rsa"]);
    assert_eq!(vals(&v, "$D/x"), [".vscode/x"]);
    assert_eq!(vals(&v, "$C"), ["rm", "-rf", "/home/dev"]);
    assert_eq!(vals(&v, "\"$C\""), ["rm -rf  /home/dev"]);
    assert!(vals(&v, "$E").is_empty());
    assert_eq!(vals(&v, "\"$E\""), [""]);
    assert_eq!(vals(&v, "cat${IFS}~/.netrc"), ["cat", "~/.netrc"]);
    assert_eq!(vals(&[("IFS", s(","))], "a${IFS}b"), ["a", "b"]);
    assert_eq!(
        vals(&[("IFS", s(",")), ("X", s(",a,,b,"))], "$X"),
        ["", "a", "", "b"]
    );
    assert!(!ex(&v, "${!V}x")[0].1, "unknown V is not literal");
}

#[test]
fn parameter_operators() {
    let v = [
        ("X", s("path/to/file.tar.gz")),
        ("N", s("D")),
        ("D", s(".vscode")),
        ("E", s("")),
        ("A", Val::Arr(vec![(0, "x".into()), (1, "y z".into())])),
    ];
    assert_eq!(vals(&v, "${X#*/}"), ["to/file.tar.gz"]);
    assert_eq!(vals(&v, "${X##*/}"), ["file.tar.gz"]);
    assert_eq!(vals(&v, "${X%.*}"), ["path/to/file.tar"]);
    assert_eq!(vals(&v, "${X%%.*}"), ["path/to/file"]);
    assert_eq!(vals(&v, "${X/to/from}"), ["path/from/file.tar.gz"]);
    assert_eq!(vals(&v, "${X//[at]/_}"), ["p__h/_o/file.__r.gz"]);
    assert_eq!(vals(&v, "${X:0:4}"), ["path"]);
    assert_eq!(vals(&v, "${X: -2}"), ["gz"]);
    assert_eq!(vals(&v, "${#X}"), ["19"]);
    assert_eq!(vals(&v, "${!N}"), [".vscode"]);
    assert_eq!(vals(&v, "${E:-~/.ssh}"), ["~/.ssh"]);
    assert_eq!(vals(&v, "${E-x}"), Vec::<String>::new());
    assert!(!ex(&v, "${U-x}")[0].1, "U is unknown, not unset");
    assert_eq!(vals(&v, "${D:+set}"), ["set"]);
    assert_eq!(vals(&v, "${D^^}"), [".VSCODE"]);
    assert_eq!(vals(&v, "${D@U}"), [".VSCODE"]);
    assert_eq!(vals(&v, "${D@Q}"), ["'.vscode'"]);
    assert_eq!(vals(&v, "${A[1]}"), ["y", "z"]);
    assert_eq!(vals(&v, "\"${A[1]}\""), ["y z"]);
    assert_eq!(vals(&v, "\"${A[@]}\""), ["x", "y z"]);
    assert_eq!(vals(&v, "\"${A[*]}\""), ["x y z"]);
    assert_eq!(vals(&v, "${#A[@]}"), ["2"]);
    assert_eq!(vals(&v, "${A[-1]}"), ["y", "z"]);
    assert_eq!(vals(&v, "${!A[@]}"), ["0", "1"]);
    assert_eq!(vals(&v, "$A"), ["x"]);
    let e = [(
        "A",
        Val::Arr(vec![(0, "x".into()), (1, String::new()), (2, "y".into())]),
    )];
    assert_eq!(vals(&e, "${A[@]}"), ["x", "y"]);
    assert_eq!(vals(&e, "\"${A[@]}\""), ["x", "", "y"]);
    assert_eq!(vals(&e, "\"<${A[@]}>\""), ["<x", "", "y>"]);
}

#[test]
fn assignment_operators_assign() {
    let mut e = Env::default();
    e.set("E", Val::Unset);
    let mut budget = 1 << 20;
    let mut x = Expander::new(&mut e, &mut budget);
    let f = x.word("${E:=~/.aws}", Mode::Command);
    assert_eq!(f.fields[0].value, "~/.aws");
    assert_eq!(e.get("E"), s("\0/.aws"));
}

#[test]
fn prompt_expansion() {
    let v = [("P", s("$D/x")), ("D", s(".vscode")), ("Q", s("$(id)"))];
    assert_eq!(vals(&v, "${P@P}"), [".vscode/x"]);
    let mut e = env_with(&v);
    let mut budget = 1 << 20;
    let mut x = Expander::new(&mut e, &mut budget);
    let out = x.word("${Q@P}", Mode::Command);
    assert!(!out.fields[0].literal());
    assert_eq!(out.substs.len(), 1, "the command substitution is analyzed");
    let out = x.word("${Z@P}", Mode::Command);
    assert!(
        out.fields[0]
            .dynamic
            .iter()
            .any(|d| matches!(d, Dynamic::Opaque(_)))
    );
}

#[test]
fn globs_are_patterns() {
    let g = |raw: &str| -> Option<String> {
        let mut e = Env::default();
        let mut budget = 1 << 20;
        let mut x = Expander::new(&mut e, &mut budget);
        x.word(raw, Mode::Command).fields[0]
            .dynamic
            .iter()
            .find_map(|d| match d {
                Dynamic::Glob(p) => Some(p.clone()),
                _ => None,
            })
    };
    assert_eq!(g("~/.s?h/id_*").as_deref(), Some("~/.s?h/id_*"));
    assert_eq!(g("'*'x*").as_deref(), Some("\\*x*"));
    assert_eq!(g("'*'"), None);
    assert_eq!(g("a[b"), None);
    assert_eq!(g("a[b]").as_deref(), Some("a[b]"));
    assert_eq!(g("\"$HOME\"/.en?").as_deref(), Some("~/.en?"));
}

#[test]
fn printf_formats() {
    let a = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(printf("%s/%s", &a(&["a", "b"])).as_deref(), Some("a/b"));
    assert_eq!(printf("\\x63at", &[]).as_deref(), Some("cat"));
    assert_eq!(printf("\\143\\141\\164", &[]).as_deref(), Some("cat"));
    assert_eq!(printf("%s,", &a(&["a", "b"])).as_deref(), Some("a,b,"));
    assert_eq!(printf("%b", &a(&["\\x41"])).as_deref(), Some("A"));
    assert_eq!(printf("%5s", &a(&["a"])), None);
}

#[test]
fn heredoc_bodies() {
    let mut e = env_with(&[("K", s("\0/.ssh/id_rsa"))]);
    let mut budget = 1 << 20;
    let mut x = Expander::new(&mut e, &mut budget);
    let out = x.heredoc("cat $K 'q' \\$K\n");
    assert_eq!(out.fields[0].value, "cat $HOME/.ssh/id_rsa 'q' $K\n");
    assert!(!out.fields[0].literal());
    let out = x.heredoc("echo 'a'\n");
    assert!(out.fields[0].literal());
}
