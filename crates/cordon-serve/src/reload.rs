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

use cordon_gate::StoreLocation;
use cordon_gate::{Gate, GateOptions};
use cordon_policy::{LoadOptions, Policy, RealFs};
use cordon_store::{Store, StoreAt, StoreOptions};
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

/// The remembered rules: where they come from, the list last read there, and the list
/// the current gate was loaded with.
struct Rules {
    /// The store holding them; `None`: the policy has no remembered rules to follow.
    store: Option<Arc<StoreAt>>,
    /// A connection kept between looks (opened again when the path names another file).
    conn: Option<Store>,
    /// For a shared store: the thread reading its rules off the request path.
    reader: Option<crate::shared_rules::RulesReader>,
    /// The rules last read from the store.
    seen: Vec<String>,
    /// The rules the current gate holds.
    loaded: Vec<String>,
    /// The last look failed (said once, until a look succeeds).
    failing: bool,
}

/// How long a look waits for a store another process holds locked: it runs on a
/// request's path, and the next look comes an interval later.
const STORE_BUSY_TIMEOUT: Duration = Duration::from_millis(100);

impl Rules {
    /// Read the store's rules; whether they differ from those last read. A store that
    /// cannot be read changes nothing (and says so, once); no store is no rules.
    fn look(&mut self) -> bool {
        let Some(at) = &self.store else {
            return false;
        };
        let file = match &**at {
            StoreAt::File(path) => Some(path.clone()),
            _ => None,
        };
        let read = match file {
            Some(path) => self.read_file(&path),
            // A shared store is read by its own thread: take its newest answer, if any.
            None => match self.reader.as_ref().and_then(|r| r.take()) {
                Some(read) => read,
                None => return false,
            },
        };
        self.settle(read)
    }

    /// Read the rules of the SQLite file at `path` (none while it does not exist).
    fn read_file(&mut self, path: &std::path::Path) -> Result<Vec<String>, String> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.conn = None;
                Ok(Vec::new())
            }
            Err(e) => Err(format!("{}: {e}", path.display())),
            Ok(_) => {
                let conn = match self.conn.take().filter(Store::is_current) {
                    Some(c) => Ok(c),
                    None => Store::open_with(
                        path,
                        &StoreOptions {
                            busy_timeout: STORE_BUSY_TIMEOUT,
                        },
                    ),
                };
                conn.and_then(|c| {
                    let rules = c.rules()?;
                    self.conn = Some(c);
                    Ok(rules.into_iter().map(|r| r.rule).collect())
                })
                .map_err(|e| e.to_string())
            }
        }
    }

    /// Take in one read: whether the rules differ from those last read. A failure
    /// changes nothing (and is said once, until a read succeeds).
    fn settle(&mut self, read: Result<Vec<String>, String>) -> bool {
        match read {
            Ok(rules) => {
                self.failing = false;
                let changed = rules != self.seen;
                self.seen = rules;
                changed
            }
            Err(why) => {
                self.conn = None;
                if !self.failing {
                    self.failing = true;
                    eprintln!(
                        "cordon serve: the remembered rules cannot be read again ({}); the ones loaded before keep applying",
                        cordon_policy::terminal::sanitize_for_terminal(&why)
                    );
                }
                false
            }
        }
    }

    /// The rules the current gate holds that the store still has, when the store lost
    /// some (forgotten since the gate was loaded); `None` when it lost none.
    fn still_remembered(&self) -> Option<Vec<String>> {
        let kept: Vec<String> = self
            .loaded
            .iter()
            .filter(|r| self.seen.contains(r))
            .cloned()
            .collect();
        (kept.len() < self.loaded.len()).then_some(kept)
    }
}

/// The current gate and what it was loaded from.
pub struct PolicyHolder {
    load: LoadOptions,
    gate_options: GateOptions,
    interval: Duration,
    current: RwLock<Arc<Gate>>,
    watch: Mutex<Watch>,
    /// Where the stores are (each gate keeps its shared state there).
    location: Option<StoreLocation>,
}

impl PolicyHolder {
    /// Load the policy `load` describes (an error here is the caller's to report: the
    /// service does not start without a policy). With `location`, each gate keeps its
    /// shared state there; with `follow_rules`, the remembered rules in `load` are
    /// followed in that store (the local file in `gate_options` without a location).
    pub fn new(
        load: LoadOptions,
        gate_options: GateOptions,
        interval: Duration,
        location: Option<StoreLocation>,
        follow_rules: bool,
    ) -> Result<PolicyHolder, cordon_policy::ConfigError> {
        let rules_from = follow_rules
            .then(|| match &location {
                Some(l) => Some(Arc::clone(&l.shared)),
                None => gate_options
                    .store
                    .clone()
                    .map(|p| Arc::new(StoreAt::File(p))),
            })
            .flatten();
        let files = watched(&load);
        let stamps = files.into_iter().map(|f| (f.clone(), stamp(&f))).collect();
        let policy = Policy::load(&load, &RealFs)?;
        let reader = match rules_from.as_deref() {
            Some(StoreAt::File(_)) | None => None,
            Some(_) => rules_from
                .as_ref()
                .map(|at| crate::shared_rules::RulesReader::start(Arc::clone(at), interval)),
        };
        let rules = Rules {
            reader,
            store: rules_from,
            conn: None,
            seen: load.remembered_rules.clone(),
            loaded: load.remembered_rules.clone(),
            failing: false,
        };
        let first = with_location(Gate::new(policy, gate_options.clone()), location.as_ref());
        Ok(PolicyHolder {
            current: RwLock::new(Arc::new(first)),
            location,
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
        if watch.rules.look() {
            changed = true;
        }
        if !changed {
            return;
        }
        let old = self.current();
        let clean = |e: &cordon_policy::ConfigError| {
            cordon_policy::terminal::sanitize_for_terminal(&e.to_string())
        };
        let error = match self.load_with(&watch.rules.seen) {
            Ok(policy) => {
                watch.rules.loaded = watch.rules.seen.clone();
                self.install(&old, policy);
                return;
            }
            Err(e) => e,
        };
        // A rule forgotten since the last load must not go on allowing because something
        // else fails to load (a rule added with it, a config file being edited): load
        // without the forgotten rules and without the new ones.
        if let Some(kept) = watch.rules.still_remembered() {
            match self.load_with(&kept) {
                Ok(policy) => {
                    eprintln!(
                        "cordon serve: the policy does not load with the changed config or remembered rules ({}); the rules forgotten since the last load no longer apply, the rest keeps deciding as before",
                        clean(&error)
                    );
                    watch.rules.loaded = kept;
                    self.install(&old, policy);
                }
                Err(_) => eprintln!(
                    "cordon serve: the policy does not load with the changed config or remembered rules ({}); the last good policy {} keeps deciding until it is fixed, including the remembered rules forgotten since it loaded",
                    clean(&error),
                    old.policy().version()
                ),
            }
            return;
        }
        eprintln!(
            "cordon serve: the policy does not load with the changed config or remembered rules ({}); the last good policy {} keeps deciding until it is fixed",
            clean(&error),
            old.policy().version()
        );
    }

    fn load_with(&self, rules: &[String]) -> Result<Policy, cordon_policy::ConfigError> {
        let load = LoadOptions {
            remembered_rules: rules.to_vec(),
            ..self.load.clone()
        };
        Policy::load(&load, &RealFs)
    }

    /// Decide with `policy` from now on (unless it is the one `old` holds).
    fn install(&self, old: &Gate, policy: Policy) {
        if policy.version() == old.policy().version() {
            return;
        }
        eprintln!(
            "cordon serve: config or remembered rules changed; policy {} now decides (was {})",
            policy.version(),
            old.policy().version()
        );
        let gate = Arc::new(with_location(
            Gate::new(policy, self.gate_options.clone()),
            self.location.as_ref(),
        ));
        match self.current.write() {
            Ok(mut g) => *g = gate,
            Err(p) => *p.into_inner() = gate,
        }
    }
}

fn with_location(gate: Gate, location: Option<&StoreLocation>) -> Gate {
    match location {
        Some(l) => gate.with_location(l),
        None => gate,
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
