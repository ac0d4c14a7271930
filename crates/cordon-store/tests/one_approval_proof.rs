//! `cordon_policy::ApprovalProof` is what lets the sandbox run a command a human or a
//! lease approved. The store's `Grant`, which only its approval flow makes, must stay the
//! one implementation: Rust cannot seal a trait to a crate above the one defining it, so
//! this test reads every source file of the workspace for another.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// Every `impl … ApprovalProof … for` outside comments, by file, as one line of text
/// each (an impl may span lines: the text up to its `{` is joined).
fn implementations(source: &str) -> Vec<String> {
    let code: Vec<&str> = source
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect();
    let joined = code.join(" ");
    let mut found = Vec::new();
    // A renamed import (`use …::ApprovalProof as P;`) would hide an `impl P for` below.
    if let Some(at) = joined.find("ApprovalProof as ") {
        found.push(joined[at..].chars().take(40).collect());
    }
    let mut rest = joined.as_str();
    while let Some(at) = rest.find("impl") {
        let head = &rest[at..];
        let end = head.find(['{', ';']).unwrap_or(head.len());
        let item = &head[..end];
        if item.contains("ApprovalProof") && item.contains(" for ") {
            found.push(item.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        rest = &head[4..];
    }
    found
}

#[test]
fn the_store_grant_is_the_only_approval_proof() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(crates, &mut files);
    assert!(files.len() > 100, "the workspace's sources were not found");
    let this = Path::new(file!()).file_name().unwrap();
    let mut all = Vec::new();
    for f in files.iter().filter(|f| f.file_name() != Some(this)) {
        for item in implementations(&std::fs::read_to_string(f).unwrap()) {
            all.push(format!("{}: {item}", f.display()));
        }
    }
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(
        all[0].contains("cordon-store/src/approval.rs")
            && all[0].ends_with("impl cordon_policy::ApprovalProof for Grant"),
        "{all:#?}"
    );
}

#[test]
fn an_implementation_is_found_however_it_is_spelled() {
    let spellings = [
        "impl ApprovalProof for Forged {}",
        "impl cordon_policy::ApprovalProof\n    for Forged\n{",
        "impl<T> cordon_policy::judgement::ApprovalProof for Wrap<T> where T: Sized {",
    ];
    for s in spellings {
        assert_eq!(implementations(s).len(), 1, "{s}");
    }
    assert_eq!(
        implementations("use cordon_policy::ApprovalProof as P;\nimpl P for Forged {}").len(),
        1
    );
    assert!(implementations("// impl ApprovalProof for Forged {}").is_empty());
}
