//! Where the records go: the collector's OTLP/HTTP logs endpoint, its headers and
//! protocol, from the managed file, the standard `OTEL_EXPORTER_OTLP_*` variables and
//! the user's file, in that order of precedence, field by field. A project's files are
//! never read: a repository must not be able to redirect (or silence) its own audit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The managed export file.
pub const MANAGED_EXPORT_CONFIG: &str = "/etc/cordon/export.toml";

/// Default bound of the export queue, in records (see [`ExportConfig::max_backlog`]).
pub const DEFAULT_MAX_BACKLOG: u64 = 100_000;

/// The export settings in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportConfig {
    /// The URL records are POSTed to (`…/v1/logs`).
    pub endpoint: String,
    /// Extra request headers (an API key, an authorization).
    pub headers: Vec<(String, String)>,
    /// How long one request may take.
    pub timeout: Duration,
    /// The queue's bound: at most this many records wait for the collector; when more
    /// do, the oldest are skipped and a record saying which is appended to the log.
    pub max_backlog: u64,
}

/// Where [`ExportConfig::load`] reads from.
pub struct ConfigSources<'a> {
    /// The managed file (outranks everything).
    pub managed: Option<PathBuf>,
    /// The user's file (outranked by the environment).
    pub user: Option<PathBuf>,
    /// The environment (`OTEL_EXPORTER_OTLP_*`, `OTEL_SDK_DISABLED`).
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl ConfigSources<'static> {
    /// `/etc/cordon/export.toml`, `$XDG_CONFIG_HOME/cordon/export.toml` (else
    /// `~/.config/cordon/export.toml`) and this process's environment.
    pub fn system() -> ConfigSources<'static> {
        let abs = |v: Option<std::ffi::OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
        let user = abs(std::env::var_os("XDG_CONFIG_HOME"))
            .or_else(|| abs(std::env::var_os("HOME")).map(|h| h.join(".config")))
            .map(|d| d.join("cordon").join("export.toml"));
        ConfigSources {
            managed: Some(PathBuf::from(MANAGED_EXPORT_CONFIG)),
            user,
            env: &|k| std::env::var(k).ok().filter(|v| !v.is_empty()),
        }
    }
}

/// The `[otlp]` table of an export file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOtlp {
    /// Base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/logs` is added).
    endpoint: Option<String>,
    /// Full URL, as `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`.
    logs_endpoint: Option<String>,
    headers: Option<std::collections::BTreeMap<String, String>>,
    protocol: Option<String>,
    timeout_ms: Option<u64>,
    max_backlog: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    otlp: Option<FileOtlp>,
}

/// One layer's settings, each optional.
#[derive(Debug, Default)]
struct Layer {
    endpoint: Option<String>,
    headers: Option<Vec<(String, String)>>,
    protocol: Option<String>,
    timeout: Option<Duration>,
    max_backlog: Option<u64>,
}

/// `base` + `v1/logs`, as the OTLP exporter specification builds a signal's URL.
fn logs_url(base: &str) -> String {
    if base.ends_with('/') {
        format!("{base}v1/logs")
    } else {
        format!("{base}/v1/logs")
    }
}

/// The most an export configuration file may hold.
const MAX_CONFIG: u64 = 1024 * 1024;

fn read_file(path: &Path) -> Result<Layer, ExportConfigError> {
    // Never a FIFO (which would block), never more than MAX_CONFIG bytes.
    let text = match cordon_fs::read_regular_text(path, MAX_CONFIG).map_err(std::io::Error::from) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Layer::default()),
        Err(source) => {
            return Err(ExportConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let file: File = toml::from_str(&text).map_err(|source| ExportConfigError::Parse {
        path: path.to_path_buf(),
        source,
    })?;
    let Some(o) = file.otlp else {
        return Ok(Layer::default());
    };
    Ok(Layer {
        endpoint: o.logs_endpoint.or(o.endpoint.as_deref().map(logs_url)),
        headers: o.headers.map(|h| h.into_iter().collect()),
        protocol: o.protocol,
        timeout: o.timeout_ms.map(Duration::from_millis),
        max_backlog: o.max_backlog,
    })
}

/// `%XX` decoded (the headers variable's values are URL-encoded).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `k=v,k2=v2` as the OTLP exporter specification defines the headers variables.
fn parse_headers(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let k = percent_decode(k.trim());
            (!k.is_empty()).then(|| (k, percent_decode(v.trim())))
        })
        .collect()
}

fn env_layer(env: &dyn Fn(&str) -> Option<String>) -> Layer {
    let pick = |signal: &str, generic: &str| env(signal).or_else(|| env(generic));
    Layer {
        endpoint: env("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
            .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT").map(|b| logs_url(&b))),
        headers: pick(
            "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        )
        .map(|h| parse_headers(&h)),
        protocol: pick(
            "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ),
        timeout: pick(
            "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
        )
        .and_then(|t| t.trim().parse().ok())
        .map(Duration::from_millis),
        max_backlog: None,
    }
}

impl ExportConfig {
    /// The settings in force, or `None` when no endpoint is configured (or
    /// `OTEL_SDK_DISABLED=true`). An unreadable file, a protocol other than
    /// `http/protobuf`, or an endpoint that is not `http://` or `https://` is an error.
    pub fn load(sources: &ConfigSources<'_>) -> Result<Option<ExportConfig>, ExportConfigError> {
        if (sources.env)("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        {
            return Ok(None);
        }
        let managed = match &sources.managed {
            Some(p) => read_file(p)?,
            None => Layer::default(),
        };
        let user = match &sources.user {
            Some(p) => read_file(p)?,
            None => Layer::default(),
        };
        let env = env_layer(sources.env);
        let layers = [managed, env, user];
        let Some(endpoint) = layers.iter().find_map(|l| l.endpoint.clone()) else {
            return Ok(None);
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(ExportConfigError::Endpoint(endpoint));
        }
        let protocol = layers.iter().find_map(|l| l.protocol.clone());
        if let Some(p) = protocol.filter(|p| p.trim() != "http/protobuf") {
            return Err(ExportConfigError::Protocol(p));
        }
        Ok(Some(ExportConfig {
            endpoint,
            headers: layers
                .iter()
                .find_map(|l| l.headers.clone())
                .unwrap_or_default(),
            timeout: layers
                .iter()
                .find_map(|l| l.timeout)
                .unwrap_or(Duration::from_secs(10)),
            max_backlog: layers
                .iter()
                .find_map(|l| l.max_backlog)
                .unwrap_or(DEFAULT_MAX_BACKLOG)
                .max(1),
        }))
    }
}

/// Why the export settings cannot be used ([`ExportConfig::load`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum ExportConfigError {
    /// A settings file exists but cannot be read.
    Read {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A settings file is not valid TOML of the expected shape.
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: toml::de::Error,
    },
    /// The endpoint is not an `http://` or `https://` URL.
    Endpoint(String),
    /// A protocol other than `http/protobuf`.
    Protocol(String),
}

impl std::fmt::Display for ExportConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportConfigError::Read { path, source } => write!(f, "{}: {source}", path.display()),
            ExportConfigError::Parse { path, source } => {
                write!(f, "{}: {source}", path.display())
            }
            ExportConfigError::Endpoint(endpoint) => write!(
                f,
                "the OTLP endpoint {endpoint:?} is not an http:// or https:// URL"
            ),
            ExportConfigError::Protocol(p) => write!(
                f,
                "OTLP protocol {p:?} is not supported: cordon exports over http/protobuf"
            ),
        }
    }
}

impl std::error::Error for ExportConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ExportConfigError::Read { source, .. } => Some(source),
            ExportConfigError::Parse { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::unwrap_used)] // fixtures are built with std::fs
mod tests {
    use super::*;

    fn load(
        managed: Option<&str>,
        user: Option<&str>,
        env: &[(&str, &str)],
    ) -> Result<Option<ExportConfig>, ExportConfigError> {
        let t = tempfile::tempdir().unwrap();
        let write = |name: &str, text: Option<&str>| {
            text.map(|text| {
                let p = t.path().join(name);
                std::fs::write(&p, text).unwrap();
                p
            })
        };
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = move |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        ExportConfig::load(&ConfigSources {
            managed: write("managed.toml", managed),
            user: write("user.toml", user),
            env: &lookup,
        })
    }

    #[test]
    fn the_standard_variables_build_the_logs_url_and_headers() {
        let c = load(
            None,
            None,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%3Db, x = y "),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint, "http://c:4318/v1/logs");
        assert_eq!(
            c.headers,
            [("api-key".into(), "a=b".into()), ("x".into(), "y".into())]
        );
        let c = load(
            None,
            None,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"),
                ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://l:1/custom"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint, "http://l:1/custom", "the signal's own wins");
    }

    #[test]
    fn managed_outranks_the_environment_which_outranks_the_user() {
        let user = "[otlp]\nendpoint = \"http://user:1\"\nmax_backlog = 5\n";
        let managed = "[otlp]\nlogs_endpoint = \"https://managed/v1/logs\"\n";
        let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:1")];
        assert_eq!(
            load(None, Some(user), &[]).unwrap().unwrap().endpoint,
            "http://user:1/v1/logs"
        );
        let c = load(None, Some(user), &env).unwrap().unwrap();
        assert_eq!(
            (c.endpoint.as_str(), c.max_backlog),
            ("http://env:1/v1/logs", 5)
        );
        assert_eq!(
            load(Some(managed), Some(user), &env)
                .unwrap()
                .unwrap()
                .endpoint,
            "https://managed/v1/logs"
        );
    }

    #[test]
    fn nothing_configured_disabled_or_unsupported() {
        assert_eq!(load(None, None, &[]).unwrap(), None);
        let env = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:1"),
            ("OTEL_SDK_DISABLED", "true"),
        ];
        assert_eq!(load(None, None, &env).unwrap(), None);
        let grpc = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:1"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ];
        let e = load(None, None, &grpc).unwrap_err();
        assert!(matches!(e, ExportConfigError::Protocol(_)), "{e}");
        assert!(e.to_string().contains("http/protobuf"));
        let e = load(Some("[otlp]\nendpoint = \"ftp://x\"\n"), None, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the OTLP endpoint \"ftp://x/v1/logs\" is not an http:// or https:// URL"
        );
        let e = load(Some("[otlp]\nbogus = 1\n"), None, &[]).unwrap_err();
        assert!(matches!(e, ExportConfigError::Parse { .. }), "{e}");
    }
}
