//! The action policy: an explicit TOML file that says what actions may do.
//!
//! ```toml
//! workspace = "/srv/proj"
//! [paths]                       # absolute; `DIR/**` covers everything beneath DIR
//! read = ["/srv/proj/**"]
//! create = ["/srv/proj/out/**"]
//! overwrite = ["/srv/proj/out/**"]
//! delete = []
//! [executables]
//! allow = ["python3", "/usr/bin/jq"]   # a bare name matches a bare argv[0] only
//! code_flags = "deny"           # deny | ask: `python -c`, `node -e`, `bash -c`, `perl -e`…
//! [network]
//! allow = ["https://api.example.com", "http://localhost:8080"]   # origins, effective ports
//! redirects = "none"            # none | same-origin
//! [secrets]                     # credential -> origins it may be sent to
//! API_TOKEN = ["https://api.example.com"]
//! [side_effects]
//! approve = ["external-write", "destructive"]
//! [limits]
//! timeout_seconds = 60
//! memory_bytes = 1073741824
//! ```

use cordon_policy::net::Origin;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How interpreter flags that run code given on the command line are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CodeFlags {
    /// Refused: the argv would run arbitrary code.
    #[default]
    Deny,
    /// A human must approve the exact code.
    Ask,
}

/// Which redirects a client may follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Redirects {
    /// None: a request that follows redirects is refused.
    #[default]
    None,
    /// Only to the same origin (the egress allowlist holds that at run time).
    SameOrigin,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PathsToml {
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    create: Vec<String>,
    #[serde(default)]
    overwrite: Vec<String>,
    #[serde(default)]
    delete: Vec<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ExecToml {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    code_flags: CodeFlags,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NetToml {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    redirects: Redirects,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SideToml {
    #[serde(default)]
    approve: Vec<String>,
}

/// Resource limits for a run of an accepted action.
#[derive(Debug, Clone, Copy, Deserialize, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ActionLimits {
    /// Wall-clock limit.
    pub timeout_seconds: Option<u64>,
    /// Address-space limit.
    pub memory_bytes: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyToml {
    workspace: PathBuf,
    #[serde(default)]
    paths: PathsToml,
    #[serde(default)]
    executables: ExecToml,
    #[serde(default)]
    network: NetToml,
    #[serde(default)]
    secrets: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    side_effects: SideToml,
    #[serde(default)]
    limits: ActionLimits,
}

/// A path pattern: one path, or everything beneath a directory (`DIR/**`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathPattern {
    Exact(PathBuf),
    Beneath(PathBuf),
}

impl PathPattern {
    fn parse(s: &str) -> Result<PathPattern, String> {
        let (base, beneath) = match s.strip_suffix("/**") {
            Some(b) => (b, true),
            None => (s, false),
        };
        let p = Path::new(base);
        if !p.is_absolute() || base.contains('*') {
            return Err(format!(
                "path pattern {s:?} must be absolute, with `/**` only at its end"
            ));
        }
        let p = cordon_policy::paths::clean(p);
        Ok(if beneath {
            PathPattern::Beneath(p)
        } else {
            PathPattern::Exact(p)
        })
    }

    pub(crate) fn matches(&self, path: &Path) -> bool {
        match self {
            PathPattern::Exact(p) => p == path,
            PathPattern::Beneath(d) => path != d.as_path() && path.starts_with(d),
        }
    }
}

/// The compiled action policy.
#[derive(Debug, Clone)]
pub struct ActionPolicy {
    /// The directory actions work in.
    pub workspace: PathBuf,
    pub(crate) read: Vec<PathPattern>,
    pub(crate) create: Vec<PathPattern>,
    pub(crate) overwrite: Vec<PathPattern>,
    pub(crate) delete: Vec<PathPattern>,
    pub(crate) executables: Vec<String>,
    /// How code-running interpreter flags are treated.
    pub code_flags: CodeFlags,
    pub(crate) origins: Vec<Origin>,
    /// Which redirects may be followed.
    pub redirects: Redirects,
    pub(crate) secrets: BTreeMap<String, Vec<Origin>>,
    pub(crate) approve: Vec<String>,
    /// Limits for runs.
    pub limits: ActionLimits,
}

/// Why a policy file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError(pub String);

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid action policy: {}", self.0)
    }
}

impl std::error::Error for PolicyError {}

impl ActionPolicy {
    /// Parse the TOML text of a policy.
    pub fn from_toml(text: &str) -> Result<ActionPolicy, PolicyError> {
        let t: PolicyToml = toml::from_str(text).map_err(|e| PolicyError(e.to_string()))?;
        if !t.workspace.is_absolute() {
            return Err(PolicyError("workspace must be an absolute path".into()));
        }
        let pats = |v: &[String]| {
            v.iter()
                .map(|s| PathPattern::parse(s))
                .collect::<Result<Vec<_>, _>>()
                .map_err(PolicyError)
        };
        let origin = |s: &String| {
            Origin::parse_url(s).map_err(|e| PolicyError(format!("origin {s:?}: {e:?}")))
        };
        let mut secrets = BTreeMap::new();
        for (name, dests) in &t.secrets {
            secrets.insert(
                name.clone(),
                dests.iter().map(origin).collect::<Result<Vec<_>, _>>()?,
            );
        }
        for a in &t.side_effects.approve {
            if !["none", "external-read", "external-write", "destructive"].contains(&a.as_str()) {
                return Err(PolicyError(format!(
                    "unknown side effect {a:?} in side_effects.approve"
                )));
            }
        }
        Ok(ActionPolicy {
            workspace: cordon_policy::paths::clean(&t.workspace),
            read: pats(&t.paths.read)?,
            create: pats(&t.paths.create)?,
            overwrite: pats(&t.paths.overwrite)?,
            delete: pats(&t.paths.delete)?,
            executables: t.executables.allow,
            code_flags: t.executables.code_flags,
            origins: t
                .network
                .allow
                .iter()
                .map(origin)
                .collect::<Result<_, _>>()?,
            redirects: t.network.redirects,
            secrets,
            approve: t.side_effects.approve,
            limits: t.limits,
        })
    }
}
