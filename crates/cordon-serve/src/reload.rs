//! The policy the service decides with, reloaded when a config file it came from changes.
//!
//! The files watched are every file a load would read, whether or not it exists now: the
//! managed file, the `--config` files, the user file and the project file. Their stat
//! (device, inode, size, modification and change times) is compared at most once per
//! interval, on the request path; a load that fails keeps the last good policy and says
//! so on stderr once per change. It must never leave the service without a policy, and
//! never decide with a half-loaded one: a new gate replaces the old one whole.

use cordon_gate::{Gate, GateOptions};
use cordon_policy::{LoadOptions, Policy, RealFs};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// The stat of one watched file; `None` while it does not exist.
type Stamp = Option<(u64, u64, u64, i64, i64, i64, i64)>;

fn stamp(path: &std::path::Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

struct Watch {
    checked: Instant,
    files: Vec<(PathBuf, Stamp)>,
}

/// The current gate and what it was loaded from.
pub struct PolicyHolder {
    load: LoadOptions,
    gate_options: GateOptions,
    interval: Duration,
    current: RwLock<Arc<Gate>>,
    watch: Mutex<Watch>,
}

impl PolicyHolder {
    /// Load the policy `load` describes (an error here is the caller's to report: the
    /// service does not start without a policy).
    pub fn new(
        load: LoadOptions,
        gate_options: GateOptions,
        interval: Duration,
    ) -> Result<PolicyHolder, cordon_policy::ConfigError> {
        let files = watched(&load);
        let stamps = files.into_iter().map(|f| (f.clone(), stamp(&f))).collect();
        let policy = Policy::load(&load, &RealFs)?;
        Ok(PolicyHolder {
            current: RwLock::new(Arc::new(Gate::new(policy, gate_options.clone()))),
            load,
            gate_options,
            interval,
            watch: Mutex::new(Watch {
                checked: Instant::now(),
                files: stamps,
            }),
        })
    }

    /// The gate to decide with now (reloaded first if a watched file changed and the
    /// interval has passed since the last look).
    pub fn gate(&self) -> Arc<Gate> {
        self.check();
        self.current()
    }

    fn current(&self) -> Arc<Gate> {
        match self.current.read() {
            Ok(g) => Arc::clone(&g),
            // A writer never panics while holding the lock (it only swaps an Arc), but if
            // one did, the gate inside is still a whole one.
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }

    /// The files watched, in load order.
    pub fn watched(&self) -> Vec<PathBuf> {
        watched(&self.load)
    }

    /// Look at the watched files now if the interval has passed; reload on a change.
    /// Another thread already looking is not waited for.
    pub fn check(&self) {
        let Ok(mut watch) = self.watch.try_lock() else {
            return;
        };
        if watch.checked.elapsed() < self.interval {
            return;
        }
        watch.checked = Instant::now();
        let mut changed = false;
        for (path, old) in watch.files.iter_mut() {
            let now = stamp(path);
            if now != *old {
                *old = now;
                changed = true;
            }
        }
        if !changed {
            return;
        }
        let old = self.current();
        match Policy::load(&self.load, &RealFs) {
            Ok(policy) if policy.version() == old.policy().version() => {}
            Ok(policy) => {
                eprintln!(
                    "cordon serve: config changed; policy {} now decides (was {})",
                    policy.version(),
                    old.policy().version()
                );
                let gate = Arc::new(Gate::new(policy, self.gate_options.clone()));
                match self.current.write() {
                    Ok(mut g) => *g = gate,
                    Err(p) => *p.into_inner() = gate,
                }
            }
            Err(e) => eprintln!(
                "cordon serve: the changed config does not load ({}); the last good policy {} keeps deciding until it is fixed",
                cordon_policy::terminal::sanitize_for_terminal(&e.to_string()),
                old.policy().version()
            ),
        }
    }
}

/// Every file a load with `load` reads, existing or not.
fn watched(load: &LoadOptions) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if !load.skip_default_files {
        files.push(
            load.managed
                .clone()
                .unwrap_or_else(|| PathBuf::from(cordon_policy::config::MANAGED_CONFIG)),
        );
    }
    files.extend(load.config_files.iter().cloned());
    if !load.skip_default_files {
        files.push(cordon_policy::config::user_file(load, &load.home));
        files.push(load.workspace.join(".cordon/policy.toml"));
    }
    files
}
