//! A thread that analyzes text keeps one worker for the grammar, however many parses it
//! makes (`parse/deadline.rs`): no thread per parse, none piling up.

#[test]
fn analysis_keeps_one_worker_per_thread() {
    let threads = || {
        let path = std::path::Path::new("/proc/self/status");
        let status = cordon_fs::read_regular_text(path, 1 << 16).expect("status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .expect("a thread count")
    };
    let before = threads();
    let long = "cd /work/project && cargo test --workspace --no-fail-fast 2>&1 | tail -20";
    for _ in 0..50 {
        assert!(cordon_shell::analyze(long).parse_error.is_none());
    }
    assert_eq!(threads(), before + 1);
    // Short text is parsed on the calling thread.
    let other = std::thread::spawn(move || {
        let _ = cordon_shell::analyze("ls -la");
        threads()
    });
    assert_eq!(
        other.join().expect("joined"),
        before + 2,
        "the other thread, no worker"
    );
}
