#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! A directory source is walked relative to directory descriptors: a directory of the
//! package swapped for a symlink to a host directory while the walk runs never brings
//! the host's files into the inspection (the walk fails or sees the package's own).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use cordon_skill::{InspectOptions, inspect};
use rustix::fs::{CWD, RenameFlags, renameat_with};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn a_directory_swapped_for_a_link_mid_walk_pulls_nothing_in() {
    let tmp = tempfile::tempdir().unwrap();
    let host = tmp.path().join("host");
    std::fs::create_dir(&host).unwrap();
    std::fs::write(host.join("id_rsa"), "PRIVATE KEY\n").unwrap();
    let pkg = dir_pkg(&tmp.path().join("pkg"), SKILL, RUN);
    // Many entries before `sub` in the walk give the swapper time to act.
    std::fs::create_dir(pkg.join("docs")).unwrap();
    for i in 0..200 {
        std::fs::write(pkg.join(format!("docs/{i:03}.txt")), "x").unwrap();
    }
    std::fs::create_dir(pkg.join("sub")).unwrap();
    std::fs::write(pkg.join("sub/inner.txt"), "inner").unwrap();
    // The swap partner lives outside the package, so the walk meets exactly one `sub`.
    let spare = tmp.path().join("spare");
    std::os::unix::fs::symlink(&host, &spare).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let (a, b) = (pkg.join("sub"), spare.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).is_err() {
                    return;
                }
                n += 1;
            }
            // Leave the package as it was.
            if n % 2 == 1 {
                let _ = renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE);
            }
        })
    };
    let mut walked = 0;
    let started = std::time::Instant::now();
    while walked < 150 && started.elapsed() < std::time::Duration::from_secs(8) {
        walked += 1;
        let Ok(r) = inspect(&pkg, &InspectOptions::default()) else {
            continue;
        };
        assert!(
            r.files.iter().all(|f| !f.path.contains("id_rsa")),
            "a host file was pulled into the package: {:?}",
            r.files.iter().map(|f| &f.path).collect::<Vec<_>>()
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(walked > 20, "the walk ran {walked} times");
}
