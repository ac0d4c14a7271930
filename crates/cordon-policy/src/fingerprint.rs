//! The approval fingerprint of a call, as one pure function of what a pending approval
//! records and a human is shown: the request (tool, input, cwd) and the verdict (the
//! workspace and policy version it was judged under, the session history that made it
//! ask, the files it runs).
//!
//! The asking side computes it over the JSON it records ([`Policy::fingerprint`] and
//! the gate's session- and runs-bound fingerprint both call [`approval_fingerprint`]),
//! and the answering side computes it again over the JSON it shows the human, never
//! taking the asking machine's word for it: a lease is granted for the call the human
//! read.
//!
//! [`Policy::fingerprint`]: crate::Policy::fingerprint

use crate::request::Request;
use serde_json::{Map, Value};
use std::path::PathBuf;

/// Why a recorded request and verdict have no fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FingerprintError(pub String);

impl std::fmt::Display for FingerprintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FingerprintError {}

/// The fingerprint an approval of `request` (its canonical JSON: `tool`, `input`, `cwd`)
/// judged as `verdict` is bound to. The verdict must carry the `workspace` and the
/// `grant_version` of the policy that judged it; when its `source.step` is `session`
/// the fingerprint is also bound to its `reason` (what the session did that made it
/// ask), and when it has `runs` (the files the call runs, as they were when it asked)
/// to their paths and states.
pub fn approval_fingerprint(request: &Value, verdict: &Value) -> Result<String, FingerprintError> {
    let fail = |why: &str| Err(FingerprintError(why.to_string()));
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return fail("the request names no tool");
    };
    let input = match request.get("input") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return fail("the request's input is not an object"),
    };
    let cwd = match request.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(PathBuf::from(c)),
        Some(_) => return fail("the request's cwd is not a string"),
    };
    let Some(workspace) = verdict.get("workspace").and_then(Value::as_str) else {
        return fail("the verdict names no workspace");
    };
    let Some(grant_version) = verdict.get("grant_version").and_then(Value::as_str) else {
        return fail("the verdict names no policy version (it was recorded by an older cordon)");
    };
    let req = Request {
        tool: tool.to_string(),
        input,
        cwd,
        session: None,
        agent: None,
        operation_id: None,
    };
    let workspace = PathBuf::from(workspace);
    let mut h = blake3::Hasher::new();
    let mut field = |name: &str, value: &[u8]| {
        h.update(name.as_bytes());
        h.update(&(value.len() as u64).to_le_bytes());
        h.update(value);
    };
    field("kind", format!("{:?}", req.kind()).as_bytes());
    field("tool", req.tool.as_bytes());
    // serde_json's map is ordered by key, so this serialization is canonical (the same
    // bytes as the object's `to_string`, which stored leases were bound with); a map of
    // JSON values always serializes.
    field("input", &serde_json::to_vec(&req.input).unwrap_or_default());
    let cwd = req
        .cwd
        .as_deref()
        .map(crate::paths::clean)
        .unwrap_or_else(|| workspace.clone());
    field("cwd", cwd.as_os_str().as_encoded_bytes());
    field("workspace", workspace.as_os_str().as_encoded_bytes());
    field("policy", grant_version.as_bytes());
    let mut fingerprint = h.finalize().to_hex().to_string();

    if verdict.pointer("/source/step").and_then(Value::as_str) == Some("session") {
        let Some(reason) = verdict.get("reason").and_then(Value::as_str) else {
            return fail("the session-bound verdict has no reason");
        };
        let mut h = blake3::Hasher::new();
        h.update(b"session-bound\0");
        h.update(fingerprint.as_bytes());
        h.update(b"\0");
        h.update(reason.as_bytes());
        fingerprint = h.finalize().to_hex().to_string();
    }
    if let Some(digest) = runs_digest(verdict.get("runs").unwrap_or(&Value::Null))? {
        let mut h = blake3::Hasher::new();
        h.update(b"runs-bound\0");
        h.update(fingerprint.as_bytes());
        h.update(b"\0");
        h.update(digest.as_bytes());
        fingerprint = h.finalize().to_hex().to_string();
    }
    Ok(fingerprint)
}

/// The digest of the files a call runs (`{"files": [{"path", "state", "written",
/// "head"}…], "notes": […]}`, all of what a human is shown of them) folded into its
/// fingerprint; `None` when nothing is bound.
pub fn runs_digest(runs: &Value) -> Result<Option<String>, FingerprintError> {
    let bad = || FingerprintError("the verdict's runs are malformed".into());
    if runs.is_null() {
        return Ok(None);
    }
    let list = |key: &str| match runs.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(_) => Err(bad()),
    };
    let (files, notes) = (list("files")?, list("notes")?);
    if files.is_empty() && notes.is_empty() {
        return Ok(None);
    }
    let mut h = blake3::Hasher::new();
    h.update(b"cordon-runs-v2\0");
    for f in &files {
        let path = f.get("path").and_then(Value::as_str).ok_or_else(bad)?;
        let state = f.get("state").and_then(Value::as_str).ok_or_else(bad)?;
        // What a human is shown of the file (whether the session wrote it, its first
        // lines) is bound too: a record whose shown lines are not the file's own gets a
        // lease no run of the real file matches.
        let written = match f.get("written") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(bad()),
        };
        let head = match f.get("head") {
            None | Some(Value::Null) => None,
            Some(Value::String(t)) => Some(t.as_str()),
            Some(_) => return Err(bad()),
        };
        h.update(path.as_bytes());
        h.update(b"\0");
        h.update(state.as_bytes());
        h.update(b"\0");
        h.update(if written { b"w" } else { b"-" });
        match head {
            Some(t) => {
                h.update(b"h");
                h.update(&(t.len() as u64).to_le_bytes());
                h.update(t.as_bytes());
            }
            None => {
                h.update(b"n");
            }
        }
    }
    for n in &notes {
        h.update(n.as_str().ok_or_else(bad)?.as_bytes());
        h.update(b"\0");
    }
    Ok(Some(h.finalize().to_hex().to_string()))
}

/// The fingerprint an approval of `request` with its input replaced by `input` (a
/// human's edit) is bound to: the edited call itself, under the workspace and policy
/// version of `verdict`, not bound to the session's history or to files (the edited call
/// is judged again when it runs).
pub fn edited_fingerprint(
    request: &Value,
    input: &Map<String, Value>,
    verdict: &Value,
) -> Result<String, FingerprintError> {
    let mut request = request.clone();
    let Some(obj) = request.as_object_mut() else {
        return Err(FingerprintError("the request is not an object".into()));
    };
    obj.insert("input".into(), Value::Object(input.clone()));
    let mut bound = Map::new();
    for k in ["workspace", "grant_version"] {
        if let Some(v) = verdict.get(k) {
            bound.insert(k.to_string(), v.clone());
        }
    }
    approval_fingerprint(&request, &Value::Object(bound))
}
