//! Tests of reading tool calls.

use super::*;
use serde_json::json;

fn action(v: Value) -> Result<Action, RequestError> {
    Request::from_value(v).and_then(|r| r.action())
}

#[test]
fn adapters_map_to_actions() {
    let read = |p: &str| Ok(Action::Read { path: p.into() });
    assert_eq!(
        action(json!({"tool":"read_file","input":{"path":"a"}})),
        read("a")
    );
    assert_eq!(
        action(json!({"tool":"Read","input":{"file_path":"/a"}})),
        read("/a")
    );
    assert_eq!(
        action(json!({"tool":"read_file","input":{"absolute_path":"/a","offset":3}})),
        read("/a")
    );
    let w = |p: &str| {
        Ok(Action::Write {
            paths: vec![p.into()],
        })
    };
    assert_eq!(
        action(json!({"tool":"Write","input":{"file_path":"x","content":""}})),
        w("x")
    );
    assert_eq!(
        action(json!({"tool":"write_file","input":{"path":"x"}})),
        w("x")
    );
    assert_eq!(
        action(json!({"tool":"Edit","input":{"file_path":"x","old_string":"a","new_string":"b"}})),
        w("x")
    );
    assert_eq!(
        action(json!({"tool":"MultiEdit","input":{"file_path":"x","edits":[]}})),
        w("x")
    );
    assert_eq!(
        action(json!({"tool":"NotebookEdit","input":{"notebook_path":"n.ipynb","new_source":""}})),
        w("n.ipynb")
    );
    assert_eq!(
        action(
            json!({"tool":"replace","input":{"file_path":"x","old_string":"a","new_string":"b"}})
        ),
        w("x")
    );
    assert_eq!(
        action(json!({"tool":"edit_file","input":{"path":"x"}})),
        w("x")
    );
    assert_eq!(
        action(json!({"tool":"delete_file","input":{"path":"x"}})),
        Ok(Action::Delete {
            paths: vec!["x".into()]
        })
    );
    let list = |p: &str| Ok(Action::List { path: p.into() });
    let search = |p: &str, g: &[&str]| {
        Ok(Action::Search {
            path: p.into(),
            globs: g.iter().map(|s| s.to_string()).collect(),
        })
    };
    assert_eq!(
        action(json!({"tool":"list_dir","input":{"path":"d"}})),
        list("d")
    );
    assert_eq!(
        action(json!({"tool":"LS","input":{"path":"/d"}})),
        list("/d")
    );
    assert_eq!(
        action(json!({"tool":"list_directory","input":{"path":"/d"}})),
        list("/d")
    );
    assert_eq!(
        action(json!({"tool":"Glob","input":{"pattern":"*.rs"}})),
        search(".", &["*.rs"])
    );
    assert_eq!(
        action(json!({"tool":"glob","input":{"pattern":"*.rs","path":"src"}})),
        search("src", &["*.rs"])
    );
    assert_eq!(
        action(json!({"tool":"Grep","input":{"pattern":"x","path":"src","-n":true}})),
        search("src", &[])
    );
    assert_eq!(
        action(json!({"tool":"search_file_content","input":{"pattern":"x"}})),
        search(".", &[])
    );
    // A filter selects at any depth; an exclusion selects nothing; pieces are globs too.
    assert_eq!(
        action(json!({"tool":"Grep","input":{"pattern":"x","glob":"*.{ts,tsx} !*.md /abs/*.c"}})),
        search(
            ".",
            &["**/*.{ts,tsx} !*.md /abs/*.c", "**/*.{ts,tsx}", "/abs/*.c"]
        )
    );
    let sh = |c: &str| {
        Ok(Action::Shell {
            command: c.into(),
            workdir: None,
        })
    };
    assert_eq!(
        action(json!({"tool":"bash","input":{"command":"ls"}})),
        sh("ls")
    );
    assert_eq!(
        action(json!({"tool":"Bash","input":{"command":"ls","description":"d"}})),
        sh("ls")
    );
    assert_eq!(
        action(json!({"tool":"run_shell_command","input":{"command":"ls"}})),
        sh("ls")
    );
    assert_eq!(
        action(json!({"tool":"shell","input":{"command":["bash","-lc","echo hi; ls"]}})),
        sh("bash -lc 'echo hi; ls'")
    );
    assert_eq!(
        action(json!({"tool":"web_fetch","input":{"url":"https://x.com"}})),
        Ok(Action::Fetch {
            urls: vec!["https://x.com".into()],
            method: "GET".into(),
            unparsed: false
        })
    );
    assert_eq!(
        action(
            json!({"tool":"web_fetch","input":{"prompt":"summarize https://a.com/x and http://b.org."}})
        ),
        Ok(Action::Fetch {
            urls: vec!["https://a.com/x".into(), "http://b.org".into()],
            method: "GET".into(),
            unparsed: false
        })
    );
    assert_eq!(
        action(json!({"tool":"mcp__github__create_issue","input":{"title":"t"}})),
        Ok(Action::Mcp {
            server: "github".into(),
            tool: "create_issue".into()
        })
    );
    assert_eq!(
        action(json!({"tool":"mcp","input":{"server":"s","tool":"t","arguments":{}}})),
        Ok(Action::Mcp {
            server: "s".into(),
            tool: "t".into()
        })
    );
    assert_eq!(
        action(json!({"tool":"frobnicate","input":{}})),
        Ok(Action::Unknown {
            tool: "frobnicate".into()
        })
    );
}

#[test]
fn current_gemini_and_codex_shapes() {
    let list = |p: &str| Ok(Action::List { path: p.into() });
    let search = |p: &str, g: &[&str]| {
        Ok(Action::Search {
            path: p.into(),
            globs: g.iter().map(|s| s.to_string()).collect(),
        })
    };
    assert_eq!(
        action(json!({"tool":"read_file","input":{"file_path":"/a","start_line":3,"end_line":9}})),
        Ok(Action::Read { path: "/a".into() })
    );
    assert_eq!(
        action(json!({"tool":"list_directory","input":{"dir_path":"/d"}})),
        list("/d")
    );
    assert_eq!(
        action(json!({"tool":"glob","input":{"pattern":"*.rs","dir_path":"src"}})),
        search("src", &["*.rs"])
    );
    assert_eq!(
        action(json!({"tool":"grep_search","input":{"pattern":"x","include_pattern":"*.rs"}})),
        search(".", &["**/*.rs"])
    );
    assert_eq!(
        action(
            json!({"tool":"read_many_files","input":{"include":["src/**/*.rs","*.md","/etc/*.conf","~/.ssh/id_rsa"]}})
        ),
        Ok(Action::ReadMany {
            files: vec!["~/.ssh/id_rsa".into()],
            dirs: vec!["src".into(), ".".into(), "/etc".into()],
        })
    );
    assert!(action(json!({"tool":"read_many_files","input":{"include":[]}})).is_err());
    assert!(action(json!({"tool":"read_many_files","input":{"include":"x"}})).is_err());
    assert_eq!(
        action(
            json!({"tool":"run_shell_command","input":{"command":"ls","dir_path":"sub","is_background":false}})
        ),
        Ok(Action::Shell {
            command: "ls".into(),
            workdir: Some("sub".into())
        })
    );
    assert!(
        action(json!({"tool":"run_shell_command","input":{"command":"ls","dir_path":"a","directory":"b"}}))
            .is_err()
    );
    assert_eq!(
        action(json!({"tool":"google_web_search","input":{"query":"q"}})),
        Ok(Action::WebSearch { query: "q".into() })
    );
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch";
    assert_eq!(
        action(json!({"tool":"apply_patch","input":{"command":patch}})),
        Ok(Action::Patch {
            writes: vec!["a.txt".into()],
            deletes: vec![]
        })
    );
}

#[test]
fn patches_name_every_path() {
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.rs\n*** Move to: ../evil/b.rs\n@@\n-a\n+b\n*** Delete File: c\n*** End Patch";
    assert_eq!(
        action(json!({"tool":"apply_patch","input":{"input":patch}})),
        Ok(Action::Patch {
            writes: vec!["a.txt".into(), "b.rs".into(), "../evil/b.rs".into()],
            deletes: vec!["c".into()]
        })
    );
    assert_eq!(
        action(json!({"tool":"shell","input":{"command":["apply_patch", patch]}}))
            .map(|a| matches!(a, Action::Patch { .. })),
        Ok(true)
    );
    assert!(action(json!({"tool":"apply_patch","input":{"input":"no header"}})).is_err());
}

#[test]
fn bad_requests_are_errors() {
    for bad in [
        json!([]),
        json!({"input":{}}),
        json!({"tool":"", "input":{}}),
        json!({"tool":5, "input":{}}),
        json!({"tool":"Read","input":{"file_path":""}}),
        json!({"tool":"Read","input":{"file_path":5}}),
        json!({"tool":"Read","input":{"file_path":"a\u{0}b"}}),
        json!({"tool":"Read","input":{"file_path":"a","bogus":1}}),
        json!({"tool":"Read","input":[]}),
        json!({"tool":"Read","input":{"file_path":"a"},"extra":1}),
        json!({"tool":"Read","input":{"file_path":"a"},"cwd":"relative"}),
        json!({"tool":"Bash","input":{"command":"   "}}),
        json!({"tool":"mcp__bad","input":{}}),
        json!({"tool":"shell","input":{"command":[]}}),
        json!({"tool":"shell","input":{"command":[1]}}),
        json!({"tool":"write_file","input":{"path":"a","file_path":"b"}}),
    ] {
        assert!(
            Request::from_value(bad.clone()).is_err(),
            "{bad} should be rejected"
        );
    }
    assert!(Request::from_json("{not json").is_err());
    assert!(Request::from_json(&" ".repeat(MAX_REQUEST_BYTES + 1)).is_err());
}

#[test]
fn quoting_round_trips_simple_words() {
    let q = quote_argv(&[
        "echo".into(),
        "it's".into(),
        "a b".into(),
        "".into(),
        "x".into(),
    ]);
    assert_eq!(q, r"echo 'it'\''s' 'a b' '' x");
}
