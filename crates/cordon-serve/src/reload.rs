//! The policy the service decides with, reloaded when a config file it came from changes
//! or the remembered rules in the approval store do.
//!
//! The files watched are every file a load would read, whether or not it exists now: the
//! managed file, the `--config` files, the user file and the project file. Their stat
//! (device, inode, size, modification and change times) is compared at most once per
//! interval, on the request path, and the store's remembered rules are read again then
//! (an "always allow" saved while the service runs applies from the next look; a rule
//! forgotten stops applying). A load that fails keeps the last good policy and says so
//! on stderr once per change. It must never leave the service without a policy, and
//! never decide with a half-loaded one: a new gate replaces the old one whole.

use cordon_gate::{Gate, GateOptions};
use cordon_policy::{LoadOptions, Policy, RealFs};
use cordon_store::Store;
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
    rules: Rules,
}

/// The remembered rules the current policy was loaded with, and where they come from.
struct Rules {
    /// The approval store; `None`: the policy has no remembered rules to follow.
    store: Option<PathBuf>,
    /// A connection kept between looks, with the file (device, inode) it was opened on.
    conn: Option<((u64, u64), Store)>,
    /// The rules the current policy holds.
    current: Vec<String>,
    /// The last look failed (said once, until a look succeeds).
    failing: bool,
}

impl Rules {
    /// Read the store's rules; the new list when it differs from the current one. A
    /// store that cannot be read changes nothing (and says so, once).
    fn look(&mut self) -> Option<Vec<String>> {
        let path = self.store.as_ref()?;
        // The file's identity: a store replaced on disk is opened afresh; its other stat
        // fields change with every write and say nothing about the rules.
        let now = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
        let rules = match now {
            // No store, no remembered rules (and none created by looking).
            None => {
                self.conn = None;
                Ok(Vec::new())
            }
            Some(now) => {
                if self.conn.as_ref().is_none_or(|(s, _)| *s != now) {
                    self.conn = None;
                    match Store::open(path) {
                        Ok(c) => self.conn = Some((now, c)),
                        Err(e) => return self.failed(&e.to_string()),
                    }
                }
                match &self.conn {
                    Some((_, c)) => c
                        .rules()
                        .map(|r| r.into_iter().map(|r| r.rule).collect())
                        .map_err(|e| e.to_string()),
                    None => Err("the approval store is not open".to_string()),
                }
            }
        };
        match rules {
            Ok(rules) => {
                self.failing = false;
                (rules != self.current).then_some(rules)
            }
            Err(e) => self.failed(&e),
        }
    }

    fn failed(&mut self, why: &str) -> Option<Vec<String>> {
        self.conn = None;
        if !self.failing {
            self.failing = true;
            eprintln!(
                "cordon serve: the remembered rules cannot be read again ({}); the ones loaded before keep applying",
                cordon_policy::terminal::sanitize_for_terminal(why)
            );
        }
        None
    }
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
    /// service does not start without a policy). With `rules_from`, the remembered rules
    /// in `load` are followed in that approval store.
    pub fn new(
        load: LoadOptions,
        gate_options: GateOptions,
        interval: Duration,
        rules_from: Option<PathBuf>,
    ) -> Result<PolicyHolder, cordon_policy::ConfigError> {
        let files = watched(&load);
        let stamps = files.into_iter().map(|f| (f.clone(), stamp(&f))).collect();
        let policy = Policy::load(&load, &RealFs)?;
        let rules = Rules {
            store: rules_from,
            conn: None,
            current: load.remembered_rules.clone(),
            failing: false,
        };
        Ok(PolicyHolder {
            current: RwLock::new(Arc::new(Gate::new(policy, gate_options.clone()))),
            load,
            gate_options,
            interval,
            watch: Mutex::new(Watch {
                checked: Instant::now(),
                files: stamps,
                rules,
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
        if let Some(rules) = watch.rules.look() {
            watch.rules.current = rules;
            changed = true;
        }
        if !changed {
            return;
        }
        let old = self.current();
        let load = LoadOptions {
            remembered_rules: watch.rules.current.clone(),
            ..self.load.clone()
        };
        match Policy::load(&load, &RealFs) {
            Ok(policy) if policy.version() == old.policy().version() => {}
            Ok(policy) => {
                eprintln!(
                    "cordon serve: config or remembered rules changed; policy {} now decides (was {})",
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
