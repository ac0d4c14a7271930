//! Property: text whose parse fails is never allowed, whatever else it contains, and the
//! policy never panics on shell-ish noise.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::{Decision, FakeFs, LoadOptions, Policy, Request};
use proptest::prelude::*;

fn token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "ls",
        "cat",
        "echo",
        "rm",
        "-rf",
        "/",
        "~",
        "src",
        "README.md",
        " ",
        " ",
        " ",
        ";",
        "&&",
        "||",
        "|",
        "&",
        "\n",
        "(",
        ")",
        "{",
        "}",
        "$(",
        "`",
        "'",
        "\"",
        "$X",
        "${",
        "<(",
        ">(",
        ">",
        ">>",
        "<",
        "<<",
        "EOF",
        "<<<",
        "2>&1",
        "if",
        "then",
        "fi",
        "for",
        "do",
        "done",
        "case",
        "esac",
        "\\",
        "$'\\x72m'",
        "*",
        "?",
        "[",
        "]",
        "#",
        "=",
        "x=1",
        "eval",
        "bash -c",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn unparsable_text_is_never_allowed(tokens in prop::collection::vec(token(), 1..24)) {
        let text: String = tokens.concat();
        let fs = FakeFs::new().dir("/w/proj/src").file("/w/proj/README.md");
        let opts = LoadOptions {
            workspace: "/w/proj".into(),
            home: "/home/u".into(),
            skip_default_files: true,
            // The most permissive setup a user could choose: only parsing stands in the way.
            mode: Some(cordon_policy::Mode::Bypass),
            ..Default::default()
        };
        let policy = Policy::load(&opts, &fs).unwrap();
        if text.trim().is_empty() {
            return Ok(());
        }
        let v = policy.decide(&Request::shell(text.clone(), None), &fs);
        if cordon_shell::analyze(&text).parse_error.is_some() {
            prop_assert_ne!(v.decision, Decision::Allow, "{:?} does not parse but was allowed", text);
        }
    }
}
