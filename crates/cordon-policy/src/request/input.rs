//! Typed access to a tool call's input object, with one clear error per bad field.

use super::{RequestError, check_text, err};
use serde_json::{Map, Value};

pub(super) struct Input<'a> {
    pub(super) tool: &'a str,
    pub(super) map: &'a Map<String, Value>,
}

impl Input<'_> {
    pub(super) fn only(&self, allowed: &[&str]) -> Result<(), RequestError> {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) {
                return err(format!(
                    "unknown field `{k}` for tool `{}`: expected {}",
                    self.tool,
                    allowed.join(", ")
                ));
            }
        }
        Ok(())
    }

    pub(super) fn opt_string(&self, k: &str) -> Result<Option<String>, RequestError> {
        match self.map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                check_text(k, s)?;
                Ok(Some(s.clone()))
            }
            Some(_) => err(format!("`{k}` of tool `{}` must be a string", self.tool)),
        }
    }

    pub(super) fn string(&self, k: &str) -> Result<String, RequestError> {
        self.opt_string(k)?
            .ok_or_else(|| RequestError(format!("tool `{}` needs `{k}`", self.tool)))
    }

    pub(super) fn one_string(&self, keys: &[&str]) -> Result<String, RequestError> {
        let mut found = None;
        for k in keys {
            if let Some(v) = self.opt_string(k)? {
                if found.is_some() {
                    return err(format!(
                        "tool `{}` names more than one of {}",
                        self.tool,
                        keys.join(", ")
                    ));
                }
                found = Some(v);
            }
        }
        found.ok_or_else(|| {
            RequestError(format!(
                "tool `{}` needs one of {}",
                self.tool,
                keys.join(", ")
            ))
        })
    }

    pub(super) fn opt_path(&self, k: &str) -> Result<Option<String>, RequestError> {
        match self.opt_string(k)? {
            Some(p) if p.is_empty() => err(format!("`{k}` of tool `{}` is empty", self.tool)),
            other => Ok(other),
        }
    }

    /// At most one of `keys`, a non-empty path; `.` when none is given.
    pub(super) fn opt_one_path(&self, keys: &[&str]) -> Result<String, RequestError> {
        if keys
            .iter()
            .all(|k| matches!(self.map.get(*k), None | Some(Value::Null)))
        {
            return Ok(".".into());
        }
        self.one_path(keys)
    }

    /// An array of strings.
    pub(super) fn strings(&self, k: &str) -> Result<Vec<String>, RequestError> {
        let bad = || {
            RequestError(format!(
                "`{k}` of tool `{}` must be an array of strings",
                self.tool
            ))
        };
        let Some(Value::Array(items)) = self.map.get(k) else {
            return Err(bad());
        };
        items
            .iter()
            .map(|v| match v {
                Value::String(s) => check_text(k, s).map(|_| s.clone()),
                _ => Err(bad()),
            })
            .collect()
    }

    pub(super) fn path(&self, k: &str) -> Result<String, RequestError> {
        self.opt_path(k)?
            .ok_or_else(|| RequestError(format!("tool `{}` needs `{k}`", self.tool)))
    }

    pub(super) fn one_path(&self, keys: &[&str]) -> Result<String, RequestError> {
        let p = self.one_string(keys)?;
        if p.is_empty() {
            return err(format!("the path of tool `{}` is empty", self.tool));
        }
        Ok(p)
    }

    pub(super) fn command(&self, k: &str) -> Result<String, RequestError> {
        let c = self.string(k)?;
        if c.trim().is_empty() {
            return err(format!("`{k}` of tool `{}` is empty", self.tool));
        }
        Ok(c)
    }
}
