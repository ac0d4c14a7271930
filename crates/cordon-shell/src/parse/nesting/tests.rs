//! The estimate and the depth check, against every shape found and real text.

use super::super::{MAX_NESTING, estimate_only, parse};
use super::*;

/// `text` is refused before the parser, saying `why`, at once.
fn refused_quickly(text: &str, why: &str) {
    let t = std::time::Instant::now();
    let e = parse(text, MAX_NESTING, &mut { BUDGET }).expect_err("refused");
    assert!(e.contains(why), "{text}: {e}");
    assert!(t.elapsed().as_secs() < 2, "{text}: {:?}", t.elapsed());
}

/// A shape's name, and its text of `n` levels.
type Shape = (&'static str, fn(usize) -> String);

/// Every shape brush-parser 0.4.0 was seen to backtrack over exponentially, as text
/// of `n` levels (or pieces). The first two were found by fuzzing
/// (`fuzz/regressions/shell/timeout-open-*`), the others by reading its grammars.
const SHAPES: &[Shape] = &[
    ("unclosed parentheses", |n| format!("{}a,", "(( ".repeat(n))),
    ("unclosed substitutions", |n| {
        format!("{}a,", "$(".repeat(n))
    }),
    ("open subscripts", |n| {
        format!("echo U[{}", "${Y[}".repeat(n))
    }),
    ("nested subscripts", |n| {
        format!("x[{}0{}]=1", "${a[".repeat(n), "]}".repeat(n))
    }),
    ("subscripts between pieces", |n| {
        format!("x[{}", "$1b[".repeat(n))
    }),
    ("parentheses around a semicolon", |n| {
        format!("{}a;{}", "(".repeat(n), ")".repeat(n))
    }),
    ("subshells around a semicolon", |n| {
        format!("{}a;{}", "( ".repeat(n), " )".repeat(n))
    }),
    ("case items without ;;", |n| {
        format!("{}:{}", "case x in a) ".repeat(n), ";esac".repeat(n))
    }),
    ("case behind coproc", |n| {
        format!("{}:{}", "coproc case x in a) ".repeat(n), ";esac".repeat(n))
    }),
    ("case behind time -p", |n| {
        format!(
            "{}:{}",
            "time -p case x in a) ".repeat(n),
            ";esac".repeat(n)
        )
    }),
    ("case behind function", |n| {
        format!(
            "{}:{}",
            "function f case x in a) ".repeat(n),
            ";esac".repeat(n)
        )
    }),
    ("case in a named coproc's group", |n| {
        format!(
            "{}:{}",
            "coproc c { case x in a) ".repeat(n),
            ";esac;}".repeat(n)
        )
    }),
    ("expansions whose operator fails late", |n| {
        format!("echo x[{}0{}]", "${a:".repeat(n), "::}".repeat(n))
    }),
    ("substrings with one part too many", |n| {
        format!("a=1 x[{}0{}]", "${a:".repeat(n), ":0:0}".repeat(n))
    }),
    (
        "substitutions around a quote the word grammar reads open",
        |n| format!("x[$({}@('\"){})]=1", "$(".repeat(n), ")".repeat(n)),
    ),
    ("extglobs around a quote the word grammar reads open", |n| {
        format!("x[$({}'\"{})]=1", "@(".repeat(n), ")".repeat(n))
    }),
    (
        "quotes paired one way by the tokenizer and another by the grammar",
        |n| {
            format!(
                "x[$(\\$'\\'' a '{}\"{} ')]=1",
                "$(\")\"".repeat(n),
                ")".repeat(n)
            )
        },
    ),
    ("quotes paired otherwise after $$", |n| {
        format!(
            "x[$($$'\\'' a '{}\"{} ')]=1",
            "$(\")\"".repeat(n),
            ")".repeat(n)
        )
    }),
    ("esac as a pattern", |n| {
        format!("{}:{}", "case x in esac) ".repeat(n), ";esac".repeat(n))
    }),
];

/// Each shape is refused once its estimate passes the budget, and the largest one
/// under the budget still parses (or fails) quickly.
#[test]
fn every_backtracking_shape_is_refused_before_it_costs() {
    for (name, shape) in SHAPES {
        let mut n = 1;
        while estimate_only(&shape(n)).is_some() {
            n += 1;
            assert!(n < 60, "{name}: never over the budget");
        }
        // Refused by the estimate, or by the tokenizer when the text is left open.
        refused_quickly(&shape(n), "");
        refused_quickly(&shape(n + 8), "");
        let t = std::time::Instant::now();
        let text = shape(n - 1);
        let _ = parse(&text, MAX_NESTING, &mut { BUDGET });
        assert!(
            t.elapsed().as_secs() < 2,
            "{name} at {}: {:?}",
            n - 1,
            t.elapsed()
        );
    }
}

/// The inputs fuzzing and the grammar probe left in `fuzz/`, each refused at once.
#[test]
fn the_recorded_inputs_are_refused() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/regressions/shell");
    for name in [
        "timeout-open-parentheses",
        "timeout-open-subscripts",
        "timeout-open-subscripts-eight",
        "timeout-nested-closed-subscripts",
        "timeout-unclosed-subscripts-between-pieces",
        "timeout-nested-parentheses-semicolon",
        "timeout-nested-case-without-double-semicolon",
    ] {
        let path = std::path::PathBuf::from(format!("{dir}/{name}"));
        let text = cordon_fs::read_regular(&path, 1 << 20).expect("reproducer");
        let text = String::from_utf8_lossy(&text);
        refused_quickly(&text, "");
    }
}

/// Real nesting parses: closed subscripts, substitutions, groups, keywords, a dozen
/// nested subshells, here-documents holding other languages.
#[test]
fn real_nesting_is_not_refused() {
    for text in [
        "echo \"${a[0]}${a[1]}${a[2]}${a[3]}${a[4]}${a[5]}\"".to_owned(),
        "echo ${a[${i}]} ${a[${b[${c[0]}]}]} ${!a[@]} ${#a[*]} ${a[@]:1:2}".to_owned(),
        "x[${a[0]}${a[1]}${a[2]}]=${b[$j]}; echo ${x[@]}".to_owned(),
        "echo '${a[}' \"${b[}\"".to_owned(),
        "echo $(( (1 + (2 * (3))) ))".to_owned(),
        "( ( ( ( ( ( ( ( true ) ) ) ) ) ) ) )".to_owned(),
        format!("{}a;{}", "( ".repeat(12), " )".repeat(12)),
        format!("{}x{}", "$(".repeat(8), ")".repeat(8)),
        format!("{}:{}", "if a; then ".repeat(40), "; fi".repeat(40)),
        format!("{}:{}", "case x in a) ".repeat(10), ";; esac".repeat(10)),
        "v=$v/x; echo ${#v}\n".repeat(200),
        "(a); ".repeat(10_000),
        format!(
            "python3 - <<'PY'\n{}PY\necho done\n",
            "print([x[i][j] for (i, j) in ((a, b), (c, [d[e[f[0]]]]))])\n".repeat(300)
        ),
        // Keywords and brackets in comments are not code.
        "# for each file (or if none is left [\n".repeat(100) + "echo hi\n",
    ] {
        assert!(estimate_only(&text).is_some(), "{text}");
        assert!(parse(&text, MAX_NESTING, &mut { BUDGET }).is_ok(), "{text}");
    }
}

/// The project's own shell scripts, real code with here-documents of Python and TOML,
/// measure far below the budget.
#[test]
fn the_projects_scripts_are_far_below_the_budget() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut seen = 0;
    for dir in ["scripts", "bench", ".ci"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(text) = cordon_fs::read_regular_text(&entry.path(), 1 << 20) else {
                continue;
            };
            if !text.starts_with("#!/bin/sh")
                && !text.starts_with("#!/usr/bin/env bash")
                && !text.starts_with("#!/bin/bash")
            {
                continue;
            }
            // A few use syntax brush-parser 0.4.0 cannot read at all.
            if !crate::raw_parse(&text) {
                continue;
            }
            seen += 1;
            let cost = estimate_only(&text).expect("measured");
            assert!(cost < BUDGET / 8, "{}: {cost}", entry.path().display());
        }
    }
    assert!(seen >= 10, "only {seen} scripts found");
}

/// What the tokenizer reads as a here-document's body is text, read once; after a
/// `<<` it reads as a shift, the next lines are code and are estimated.
#[test]
fn a_here_document_is_text_and_a_shift_is_not_one() {
    let costly = format!("{}a;{}", "(".repeat(30), ")".repeat(30));
    let body = format!("cat <<EOF\n{costly}\nEOF\n");
    assert!(estimate_only(&body).is_some());
    assert!(parse(&body, MAX_NESTING, &mut { BUDGET }).is_ok());
    for head in ["echo $((1<<EOF))", "(( x<<EOF ))", "echo $[1<<EOF]"] {
        let text = format!("{head}\n{costly}\nEOF\n");
        assert!(estimate_only(&text).is_none(), "{head}");
    }
}

/// Text the parser's tokenizer reads otherwise than a reading of characters would
/// (an escaped quote in `$'…'`, a quote inside an extglob or backquotes, a `#` that is
/// no comment, `case` as an argument, a here-document's delimiter with a backslash):
/// what follows is still estimated, as the tokenizer reads it.
#[test]
fn what_the_tokenizer_reads_as_code_is_estimated() {
    let costly = format!("{}a;{}", "(".repeat(30), ")".repeat(30));
    for text in [
        format!("echo $'\\''; {costly}"),
        format!("echo @(') ; {costly}"),
        format!("echo `'` ; {costly}"),
        format!("echo ${{a:- #}} ; {costly}"),
        format!("echo $( #) ; {costly}"),
        format!("echo @(a|#b) ; {costly}"),
        format!("echo case; {costly}"),
        format!("case x in a) {costly} ;; esac"),
        format!("cat <<E\\\\F\nbody\nE\\F\n{costly}\nEF\n"),
        format!("echo `cat <<EOF`\n{costly}\necho `\nEOF`\n"),
        format!("( cat <<EOF\n'\nEOF\n)\n{costly}\n"),
        format!("cat << ; case x in a) {costly} ;; esac"),
    ] {
        refused_quickly(&text, "");
    }
}

/// Keywords as arguments and here-documents in subshells are not structure.
#[test]
fn words_and_bodies_are_not_structure() {
    for text in [
        "echo waiting for the build\n".repeat(40) + "make\n",
        format!(
            "(cd /tmp && python3 - <<'PY'\n{}PY\n)\n",
            "print(\",\".join(str(x[0][1]) for x in [[(i, j)] for (i, j) in enumerate(rows)]))\n"
                .repeat(200)
        ),
        format!(
            "( cat > README <<'EOF'\n{}EOF\n)\n",
            "if this, then for that (or while (so)\n".repeat(200)
        ),
    ] {
        assert!(estimate_only(&text).is_some(), "{text}");
        assert!(parse(&text, MAX_NESTING, &mut { BUDGET }).is_ok(), "{text}");
    }
}

/// Every parse of one analysis spends one allowance: a costly text run again and
/// again (`bash -c` of a variable, a function called many times) gains no time.
#[test]
fn nested_parses_share_one_allowance() {
    let costly = format!("{}:{}", "case x in a) ".repeat(14), ";esac".repeat(14));
    assert!(estimate_only(&costly).is_some(), "one run is allowed");
    let calls: String = (1..=50).map(|i| format!("cd /d{i}; f\n")).collect();
    for text in [
        format!("x='{costly}'\n{}", "bash -c \"$x\"\n".repeat(200)),
        format!("f() {{ bash -c '{costly}'; }}\n{calls}"),
    ] {
        let t = std::time::Instant::now();
        let a = crate::analyze(&text);
        assert!(a.parse_error.is_some_and(|e| e.contains("again and again")));
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }
}

/// Comments and blanks add nothing the parser reads, so they buy no readings: a
/// costly word after thousands of comment lines is refused as it is alone.
#[test]
fn comments_buy_no_readings() {
    let costly = format!("x[$({}'\"{})]=1\n", "@(".repeat(16), ")".repeat(16));
    assert!(estimate_only(&costly).is_none());
    let padded = "# a comment line that the tokenizer drops entirely\n".repeat(6000) + &costly;
    refused_quickly(&padded, "again and again");
}

/// Pieces of long text share one allowance: cutting costly text into pieces of 8 KiB
/// gives it no more time.
#[test]
fn pieces_share_one_allowance() {
    let line = format!("x[{}\n", "$1b[".repeat(16));
    let piece = line.repeat(super::super::CHUNK / line.len() + 1);
    let text = piece.repeat(16);
    let t = std::time::Instant::now();
    assert!(parse(&text, MAX_NESTING, &mut { BUDGET }).is_err());
    assert!(crate::analyze(&text).parse_error.is_some());
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
}

#[test]
fn nesting_is_measured() {
    assert!(exceeds_nesting("echo $(echo $(echo hi))", 64).is_none());
    let deep = format!("{}x{}", "$(".repeat(100), ")".repeat(100));
    assert!(exceeds_nesting(&deep, 64).is_some());
    let flat = "(a); ".repeat(10_000);
    assert!(exceeds_nesting(&flat, 64).is_none());
    let ifs = "if true; then ".repeat(70) + &"fi; ".repeat(70);
    assert!(exceeds_nesting(&ifs, 64).is_none());
    assert!(
        estimate_only(&ifs).is_none(),
        "the grammar's depth is the tokens'"
    );
    let cases = "case x in a) echo;; esac; ".repeat(1000);
    assert!(exceeds_nesting(&cases, 64).is_none());
    assert!(estimate_only(&cases).is_some());
    // Each byte of a token counts once, times the factors of what holds it.
    assert_eq!(estimate_only("echo hi"), Some(6));
    assert_eq!(estimate_only("(a)"), Some(1 + (1 + 1) * 2));
    // Inside a word a substitution counts three times, an expansion twice.
    assert_eq!(estimate_only("$(a)"), Some(1 + (1 + 1) * 3 + 1));
    assert_eq!(estimate_only("${a}"), Some(1 + (1 + 1) * 2 + 1));
    assert_eq!(estimate_only("x[1]=2"), Some(1 + (1 + 1) * 2 + 1 + 2));
}
