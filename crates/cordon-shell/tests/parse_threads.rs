//! The grammar's worker is joined once it has returned: a process that analyzes text is
//! left with the threads it had (`cordon exec` forks its helper only while it has one).

#[test]
fn analysis_leaves_no_thread_behind() {
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
    for _ in 0..20 {
        assert!(cordon_shell::analyze(long).parse_error.is_none());
    }
    assert_eq!(threads(), before);
}
