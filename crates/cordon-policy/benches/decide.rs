//! `decide` throughput: file-tool requests against 200 rules (facts already resolved, and
//! with resolution through an in-memory file system), and `web_fetch`.
//!
//! Run: `cargo bench -p cordon-policy --bench decide -- --warm-up-time 1 --measurement-time 3`
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::{FakeFs, LoadOptions, Policy, Request};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn config_with_200_rules() -> String {
    let mut allow = Vec::new();
    let mut ask = Vec::new();
    let mut deny = Vec::new();
    for i in 0..60 {
        allow.push(format!("\"Read(./pkg{i}/**)\""));
        deny.push(format!("\"Read(./secret{i}/**)\""));
    }
    for i in 0..30 {
        ask.push(format!("\"Edit(./gen{i}/**)\""));
        allow.push(format!("\"Bash(tool{i} run:*)\""));
    }
    for i in 0..10 {
        deny.push(format!("\"WebFetch(domain:bad{i}.example)\""));
        allow.push(format!("\"mcp__srv{i}__*\""));
    }
    assert_eq!(allow.len() + ask.len() + deny.len(), 200);
    format!(
        "[permissions]\nallow = [{}]\nask = [{}]\ndeny = [{}]\n[network]\nallow = [\"docs.rs\", \"*.github.com\"]\n",
        allow.join(", "),
        ask.join(", "),
        deny.join(", ")
    )
}

fn bench(c: &mut Criterion) {
    let fs = FakeFs::new()
        .dir("/w/proj/src/deep/er")
        .file("/w/proj/src/deep/er/main.rs")
        .file("/home/u/.ssh/id_rsa")
        .file_with(
            "/home/u/.config/cordon/policy.toml",
            1,
            config_with_200_rules().as_bytes(),
        );
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/none".into()),
        ..Default::default()
    };
    let policy = Policy::load(&opts, &fs).expect("config loads");
    assert_eq!(policy.rules().len(), 200);

    let read = Request::from_json(r#"{"tool":"Read","input":{"file_path":"src/deep/er/main.rs"}}"#)
        .unwrap();
    let write =
        Request::from_json(r#"{"tool":"Write","input":{"file_path":"/tmp/out.txt","content":""}}"#)
            .unwrap();
    let secret =
        Request::from_json(r#"{"tool":"Read","input":{"file_path":"~/.ssh/id_rsa"}}"#).unwrap();
    let fetch = Request::from_json(
        r#"{"tool":"WebFetch","input":{"url":"https://api.github.com/repos/x","prompt":"p"}}"#,
    )
    .unwrap();

    let mut g = c.benchmark_group("decide");
    g.throughput(Throughput::Elements(1));
    for (name, req) in [
        ("read_inside", &read),
        ("write_outside", &write),
        ("read_secret", &secret),
        ("web_fetch", &fetch),
    ] {
        let ops = policy.operations(req, &fs);
        g.bench_function(format!("judge/{name}"), |b| {
            b.iter(|| black_box(policy.judge(black_box(&ops))))
        });
        g.bench_function(format!("decide/{name}"), |b| {
            b.iter(|| black_box(policy.decide(black_box(req), &fs)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
