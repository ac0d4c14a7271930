//! Relative paths a script names that are credential files by their NAME, whatever the
//! folder they are resolved against (`.env`, `config/master.key`, `terraform.tfstate`,
//! `.aws/credentials` in a project): a script runs in the project, so a relative path is
//! the project's file, and the shell's read guard knows these names. The same table
//! (`cordon_policy::guards`, `cordon_policy::secret_files`) judges both.

use std::ffi::OsStr;

/// Is `s` a relative path (no leading `/` or `~`, no `..`, no blanks) one of whose
/// components is a secret file name, or that is (or lies under) a credential path of
/// the home folder in its relative form (`.aws/credentials`)?
pub(crate) fn relative_secret(s: &str) -> bool {
    if s.is_empty()
        || s.len() > 4096
        || s.starts_with(['/', '~'])
        || s.chars().any(char::is_whitespace)
        || s.contains("://")
        || s.contains(['*', '?', '[', '$', '`', '{'])
    {
        return false;
    }
    let comps: Vec<&OsStr> = s
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(OsStr::new)
        .collect();
    if comps.is_empty() || comps.iter().any(|c| *c == "..") {
        return false;
    }
    comps
        .iter()
        .any(|c| cordon_policy::guards::is_secret_file_name(c))
        || cordon_policy::secret_files::credential_anywhere(&comps).is_some()
}

#[cfg(test)]
mod tests {
    use super::relative_secret;

    #[test]
    fn relative_credential_names_whatever_the_folder() {
        for p in [
            ".env",
            "./.env.staging",
            "deploy/.envrc",
            "infra/prod.tfstate",
            "config/master.key",
            ".aws/credentials",
            "certs/server.pem",
        ] {
            assert!(relative_secret(p), "{p}");
        }
        for p in [
            ".env.example",
            "README.md",
            "data/input.csv",
            "../x/.env",
            "/etc/passwd",
            "~/.env",
            "a .env",
            "https://x/.env",
        ] {
            assert!(!relative_secret(p), "{p}");
        }
    }
}
