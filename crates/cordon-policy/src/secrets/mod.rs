//! Secret detection and redaction: one module that every surface uses, so the audit log,
//! trust labels and anything else that records or passes on text remove the same
//! secrets in the same way.
//!
//! Two families of detector run over the text:
//! - **shapes** (the `tokens` submodule): credentials recognisable on their own: private key blocks
//!   (PEM, OpenSSH, PGP, encrypted ones included), AWS access key ids and secret keys
//!   named as such, GCP API keys (a service account's `private_key` is a PEM block),
//!   Azure storage account keys and SAS signatures, GitHub, GitLab, Slack, Stripe,
//!   OpenAI, Anthropic, npm, PyPI and Hugging Face tokens, Slack webhooks, JWTs,
//!   passwords in URLs, `Authorization`-style headers and cookies;
//! - **names** (the `assign` submodule): values assigned to secret-looking names, with thresholds
//!   that depend on how sure the context is;
//! - **command lines** (the `cli` submodule): the options of common programs that carry a
//!   password or a `user:password` pair (`curl -u`, `docker login -p`, `sshpass -p`,
//!   `redis-cli -a`, `mysql -pPW`, …), read from shell words.
//!
//! Every detector is a `regex` (linear time) or a scan with a fixed bound per step, so
//! the whole pass is linear in the input. [`find`] returns typed [`Finding`]s with byte
//! ranges; [`redact`] replaces each with [`REDACTED`] and borrows its input when there
//! is nothing to remove. This is a net for common shapes, not a guarantee: a secret in
//! no known shape under an innocuous name passes through.

mod assign;
mod cli;
mod shape;
mod tokens;

use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// What a redacted secret is replaced with. The audit log's readers (and its tests)
/// expect exactly this marker; the kind is in the [`Finding`], not in the text.
pub const REDACTED: &str = "[REDACTED]";

/// The kind of a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SecretKind {
    /// A private key block (PEM, OpenSSH, PGP; encrypted or not).
    PrivateKey,
    /// An AWS access key id (`AKIA…`, `ASIA…`).
    AwsAccessKeyId,
    /// An AWS secret access key, named as one.
    AwsSecretAccessKey,
    /// A Google Cloud API key (`AIza…`).
    GcpApiKey,
    /// An Azure storage `AccountKey=` or `SharedAccessKey=`.
    AzureStorageKey,
    /// An Azure shared access signature (`sig=`).
    AzureSasSignature,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GitHubToken,
    /// A GitLab token (`glpat-` and its siblings).
    GitLabToken,
    /// A Slack token (`xoxb-`, `xoxp-`, …, `xapp-`).
    SlackToken,
    /// A Slack incoming webhook URL.
    SlackWebhook,
    /// A Stripe secret or restricted key, or a webhook secret.
    StripeKey,
    /// An OpenAI API key (`sk-…`, `sk-proj-…`).
    OpenAiKey,
    /// An Anthropic API key (`sk-ant-…`).
    AnthropicKey,
    /// An npm token (`npm_…`).
    NpmToken,
    /// A PyPI upload token (`pypi-…`).
    PyPiToken,
    /// A Hugging Face token (`hf_…`).
    HuggingFaceToken,
    /// A JSON Web Token.
    Jwt,
    /// The userinfo of a URL that carries a password (`scheme://user:pass@host`).
    UrlPassword,
    /// The credential of an `Authorization`, `X-Api-Key`-style header or a bearer token.
    AuthorizationHeader,
    /// A `Cookie` or `Set-Cookie` header's value.
    Cookie,
    /// A value assigned to a secret-looking name (`API_KEY=…`, `"password": "…"`,
    /// `--token …`).
    NamedSecret,
}

impl SecretKind {
    /// A stable lowercase name (`github-token`).
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::PrivateKey => "private-key",
            SecretKind::AwsAccessKeyId => "aws-access-key-id",
            SecretKind::AwsSecretAccessKey => "aws-secret-access-key",
            SecretKind::GcpApiKey => "gcp-api-key",
            SecretKind::AzureStorageKey => "azure-storage-key",
            SecretKind::AzureSasSignature => "azure-sas-signature",
            SecretKind::GitHubToken => "github-token",
            SecretKind::GitLabToken => "gitlab-token",
            SecretKind::SlackToken => "slack-token",
            SecretKind::SlackWebhook => "slack-webhook",
            SecretKind::StripeKey => "stripe-key",
            SecretKind::OpenAiKey => "openai-key",
            SecretKind::AnthropicKey => "anthropic-key",
            SecretKind::NpmToken => "npm-token",
            SecretKind::PyPiToken => "pypi-token",
            SecretKind::HuggingFaceToken => "huggingface-token",
            SecretKind::Jwt => "jwt",
            SecretKind::UrlPassword => "url-password",
            SecretKind::AuthorizationHeader => "authorization-header",
            SecretKind::Cookie => "cookie",
            SecretKind::NamedSecret => "named-secret",
        }
    }
}

impl fmt::Display for SecretKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What it is.
    pub kind: SecretKind,
    /// Where it is: a byte range of the text, on character boundaries.
    pub range: Range<usize>,
}

/// Every secret in `text`, in order, without overlaps (where two detectors overlap, the
/// earlier start wins and the ranges are joined, so nothing either found is left out).
pub fn find(text: &str) -> Vec<Finding> {
    let mut raw: Vec<(SecretKind, Range<usize>)> = Vec::new();
    // Computed once: both scans test it for their patterns' literals.
    let lower = text.to_ascii_lowercase();
    tokens::find(text, &lower, &mut raw);
    assign::find(text, &lower, &mut raw);
    cli::find(text, &lower, &mut raw);
    // A shaped kind says more than "named secret": prefer it for equal starts.
    raw.sort_by_key(|(kind, r)| {
        (
            r.start,
            *kind == SecretKind::NamedSecret,
            usize::MAX - r.end,
        )
    });
    let mut out: Vec<Finding> = Vec::with_capacity(raw.len());
    for (kind, range) in raw {
        if range.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if range.start < last.range.end => {
                last.range.end = last.range.end.max(range.end);
            }
            _ => out.push(Finding { kind, range }),
        }
    }
    out
}

/// `text` with every secret [`find`] reports replaced by [`REDACTED`]; borrowed when
/// there is none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let Some(mut out) = redact_once(text) else {
        return Cow::Borrowed(text);
    };
    // Cutting a match out joins what stood on either side, which can spell a secret the
    // text did not hold as such (`…auth7777glft-7777…`): redact again until nothing is
    // found, so that what comes out never holds a secret the detector would find; past
    // the bound, the whole text is withheld.
    for _ in 0..8 {
        match redact_once(&out) {
            Some(again) => out = again,
            None => return Cow::Owned(out),
        }
    }
    Cow::Owned(if find(&out).is_empty() {
        out
    } else {
        REDACTED.to_string()
    })
}

/// One pass of [`redact`]: `None` when nothing was found.
fn redact_once(text: &str) -> Option<String> {
    let found = find(text);
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in &found {
        out.push_str(&text[at..f.range.start]);
        out.push_str(REDACTED);
        at = f.range.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// A copy of a JSON value with secrets removed: the value of any object key that names
/// a secret (`"api_key"`, `"AWS_SECRET_ACCESS_KEY"`, `"password"`) becomes
/// [`REDACTED`] unless it is null, a boolean or a placeholder; every other string is
/// passed through [`redact`].
pub fn redact_json(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let secret = shape::is_secret_name(k, shape::Strength::Strong)
                        && match v {
                            Value::Null | Value::Bool(_) => false,
                            Value::String(s) => !shape::is_template_or_placeholder(s),
                            _ => true,
                        };
                    let v = if secret {
                        Value::String(REDACTED.into())
                    } else {
                        redact_json(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact_json).collect()),
        Value::String(s) => match redact(s) {
            Cow::Borrowed(_) => value.clone(),
            Cow::Owned(r) => Value::String(r),
        },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_adversarial;
