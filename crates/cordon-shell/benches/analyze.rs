//! Parse + analysis time of real-world agent commands, and scaling on generated input
//! of 1 KB to 1 MB, next to the raw brush-parser parse time of the same text.
//!
//! `cargo bench -p cordon-shell --bench analyze -- --warm-up-time 1 --measurement-time 3`
//!
//! Criterion reports each benchmark; at the end a summary table is printed from a
//! separate, simpler timing loop (median of repeated runs) so the numbers can be quoted.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};

/// Commands of the kind agents send, each at most 200 bytes.
const COMMANDS: [&str; 30] = [
    "ls -la",
    "git status --short",
    "git log --oneline -10",
    "git diff -- src/lib.rs",
    "cat README.md | head -50",
    "ls src && grep -rn TODO src",
    "rg -n 'fn analyze' crates --type rust",
    "find . -name '*.rs' -not -path './target/*' | xargs wc -l",
    "cargo test -p cordon-shell 2>&1 | tail -20",
    "cargo build --release",
    "npm run test -- --watch=false",
    "python3 -m pytest tests/ -x -q",
    "cd crates/cordon && cargo clippy --all-targets -- -D warnings",
    "mkdir -p build && cd build && cmake .. && make -j4",
    "sed -i 's/foo/bar/g' src/main.rs",
    "echo \"$(date): done\" >> log.txt",
    "for f in *.md; do wc -l \"$f\"; done",
    "if [ -f Cargo.lock ]; then cat Cargo.lock | grep -c name; fi",
    "curl -fsSL https://example.com/install.sh | sh",
    "docker ps --format '{{.Names}}'",
    "jq '.dependencies | keys' package.json",
    "tar -czf backup.tgz src/ && ls -lh backup.tgz",
    "git add -A && git commit -m 'fix: handle empty input'",
    "export PATH=$HOME/.cargo/bin:$PATH && rustc --version",
    "awk -F: '{print $1}' /etc/passwd | sort | uniq",
    "timeout 30 npm install --no-audit",
    "bash -c 'cd /tmp && ls -la'",
    "find . -type f -name '*.log' -mtime +7 -delete",
    "python3 - <<'EOF'\nimport json\nprint(json.dumps({'a': 1}))\nEOF",
    "diff <(sort a.txt) <(sort b.txt) > changes.diff",
];

/// Realistic script text of at least `size` bytes.
fn generated(size: usize) -> String {
    let mut s = String::with_capacity(size + 256);
    let mut i = 0;
    while s.len() < size {
        let cmd = COMMANDS[i % COMMANDS.len()];
        s.push_str(cmd);
        s.push('\n');
        i += 1;
    }
    s
}

/// The worst case of each evaluation, as one line repeated: the text bash evaluates
/// deterministically that costs the analysis most per byte.
const WORST: [(&str, &str); 9] = [
    // 256 words from 40 bytes: the largest brace expansion evaluated.
    (
        "brace-wide",
        "echo {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}",
    ),
    // Braces nested 16 deep.
    (
        "brace-deep",
        "echo {a,{b,{c,{d,{e,{f,{g,{h,{i,{j,{k,{l,{m,{n,{o,{p,q}}}}}}}}}}}}}}}}",
    ),
    // Each value built from the last: values grow to the 4 KiB cap.
    ("var-chain", "v=$v/seg; w=${v}x; echo \"$w\" ${#v}"),
    // Indirection and operators over a grown value.
    (
        "var-ops",
        "n=v; x=${!n}; echo ${x%/*} ${x##*/} ${x//s/S} ${x:1:5}",
    ),
    // A for list of 32 items: every iteration analyzed.
    (
        "loop-items",
        "for f in a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6; do cat \"$f\"; done",
    ),
    // Loops nested 4 deep over 4 items: 256 body analyses per line.
    (
        "loop-nested",
        "for a in 1 2 3 4; do for b in 1 2 3 4; do for c in 1 2 3 4; do for d in 1 2 3 4; do cat $a$b$c$d; done; done; done; done",
    ),
    // A loop that reads what it assigns: analyzed twice.
    (
        "loop-reassign",
        "k=a; while read x; do cat $k; k=$x; done < f",
    ),
    // A glob command name analyzed as each program it can name.
    ("glob-program", "/???/??? ~/.s?h/id_* /etc/*"),
    // Command substitutions evaluated by parsing their body again.
    ("subst-echo", "cat \"$(echo ~/x)\" \"$(printf '%s' y)\""),
];

/// `line` repeated (newline-separated) to at least `size` bytes.
fn repeated(line: &str, size: usize) -> String {
    let mut s = String::with_capacity(size + line.len() + 1);
    while s.len() < size {
        s.push_str(line);
        s.push('\n');
    }
    s
}

const SIZES: [(usize, &str); 4] = [
    (1 << 10, "1KB"),
    (10 << 10, "10KB"),
    (100 << 10, "100KB"),
    (1 << 20, "1MB"),
];

fn criterion_benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("commands");
    g.throughput(Throughput::Elements(COMMANDS.len() as u64));
    g.bench_function("analyze_30", |b| {
        b.iter(|| {
            for cmd in COMMANDS {
                black_box(cordon_shell::analyze(black_box(cmd)));
            }
        });
    });
    g.bench_function("raw_parse_30", |b| {
        b.iter(|| {
            for cmd in COMMANDS {
                black_box(cordon_shell::raw_parse(black_box(cmd)));
            }
        });
    });
    g.finish();

    let mut g = c.benchmark_group("scaling");
    g.sample_size(10);
    for (size, label) in SIZES {
        let text = generated(size);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new("analyze", label), &text, |b, t| {
            b.iter(|| black_box(cordon_shell::analyze(black_box(t))));
        });
        g.bench_with_input(BenchmarkId::new("raw_parse", label), &text, |b, t| {
            b.iter(|| black_box(cordon_shell::raw_parse(black_box(t))));
        });
    }
    g.finish();

    let mut g = c.benchmark_group("worst");
    g.sample_size(10);
    for (name, line) in WORST {
        let text = repeated(line, 100 << 10);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new("analyze", name), &text, |b, t| {
            b.iter(|| black_box(cordon_shell::analyze(black_box(t))));
        });
        g.bench_with_input(BenchmarkId::new("raw_parse", name), &text, |b, t| {
            b.iter(|| black_box(cordon_shell::raw_parse(black_box(t))));
        });
    }
    g.finish();
}

/// Median duration of `f` over repeated runs lasting about `budget` in total.
fn median(budget: Duration, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    f();
    let once = start.elapsed().max(Duration::from_nanos(1));
    let runs = (budget.as_nanos() / once.as_nanos()).clamp(5, 2_000) as usize;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn summary() {
    println!("\n## cordon-shell analyze: summary (median of repeated runs)\n");
    let mut per_cmd: Vec<(Duration, Duration, &str)> = COMMANDS
        .iter()
        .map(|cmd| {
            let a = median(Duration::from_millis(40), || {
                black_box(cordon_shell::analyze(black_box(cmd)));
            });
            let p = median(Duration::from_millis(40), || {
                black_box(cordon_shell::raw_parse(black_box(cmd)));
            });
            (a, p, *cmd)
        })
        .collect();
    per_cmd.sort();
    let pick = |q: f64| per_cmd[((per_cmd.len() - 1) as f64 * q).round() as usize];
    println!("| 30 real-world commands (≤ 200 B) | analyze µs | raw parse µs |");
    println!("|---|---:|---:|");
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("max", 1.0)] {
        let (a, p, _) = pick(q);
        println!("| {name} | {:.1} | {:.1} |", us(a), us(p));
    }
    let slowest = pick(1.0).2.replace('\n', "\\n");
    println!("\nslowest command: `{slowest}`\n");

    println!("| input | bytes | analyze ms | raw parse ms | analyze/raw | analyze µs per KB |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (size, label) in SIZES {
        let text = generated(size);
        let budget = Duration::from_millis(if size >= 1 << 20 { 3_000 } else { 600 });
        let a = median(budget, || {
            black_box(cordon_shell::analyze(black_box(&text)));
        });
        let p = median(budget, || {
            black_box(cordon_shell::raw_parse(black_box(&text)));
        });
        let kb = text.len() as f64 / 1024.0;
        println!(
            "| {label} | {} | {:.3} | {:.3} | {:.2} | {:.1} |",
            text.len(),
            us(a) / 1e3,
            us(p) / 1e3,
            a.as_secs_f64() / p.as_secs_f64(),
            us(a) / kb
        );
    }

    println!("\n| worst case of an evaluation | size | analyze ms | raw parse ms | analyze/raw |");
    println!("|---|---:|---:|---:|---:|");
    for (name, line) in WORST {
        for (size, label) in SIZES {
            let text = repeated(line, size);
            let budget = Duration::from_millis(if size >= 1 << 20 { 2_000 } else { 300 });
            let a = median(budget, || {
                black_box(cordon_shell::analyze(black_box(&text)));
            });
            let p = median(budget, || {
                black_box(cordon_shell::raw_parse(black_box(&text)));
            });
            println!(
                "| {name} | {label} | {:.3} | {:.3} | {:.2} |",
                us(a) / 1e3,
                us(p) / 1e3,
                a.as_secs_f64() / p.as_secs_f64(),
            );
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
    // `cargo test --benches` runs this binary in test mode: skip the timing table.
    if !std::env::args().any(|a| a == "--test" || a == "--list") {
        summary();
    }
}
