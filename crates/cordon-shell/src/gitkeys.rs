//! git configuration keys that run code or move where git reads from: the one table,
//! used by the shell analysis (`git -c`, `git config`, `GIT_CONFIG_*`) and by the policy
//! (a repository's `.git/config`, a contained run's changes to it).
//!
//! The keys follow git-config(1): every key documented as naming a command, a program, a
//! hook directory, an included file, a URL rewrite or another repository. Sections that
//! exist only to configure external programs count in full, so a key added to them in a
//! later git counts too.

/// What setting a git config key does.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GitKey {
    /// The value is a command git runs through the shell (`core.pager`, `alias.x=!cmd`,
    /// `diff.external`): the shell text.
    Code(String),
    /// The key makes git run a program, and its value is not a shell command
    /// (`credential.helper=store`, `diff.tool`, `filter.x.required`).
    Runs,
    /// The key changes where git reads its settings, hooks or objects from
    /// (`core.hooksPath`, `include.path`, `url.X.insteadOf`).
    Redirects,
    /// An ordinary setting (`user.name`, `color.ui`).
    Plain,
}

impl GitKey {
    /// Whether the key is anything but an ordinary setting.
    pub fn is_risky(&self) -> bool {
        *self != GitKey::Plain
    }
}

/// Classify config key `name` (as git spells it: section and key in any case, the
/// subsection as written) set to `value` (`None` for a key without `=`, a boolean true).
pub fn classify(name: &str, value: Option<&str>) -> GitKey {
    let lower = name.to_ascii_lowercase();
    let Some((section, rest)) = lower.split_once('.') else {
        return GitKey::Plain;
    };
    let (sub, key) = match rest.rsplit_once('.') {
        Some((sub, key)) => (Some(sub), key),
        None => (None, rest),
    };
    let v = value.unwrap_or("").trim();
    let boolean = matches!(
        v.to_ascii_lowercase().as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0"
    );
    let code = || {
        if v.is_empty() {
            GitKey::Runs
        } else {
            GitKey::Code(v.to_owned())
        }
    };
    // A value that runs through the shell only when it starts with `!`.
    let bang = || match v.strip_prefix('!') {
        Some(c) if !c.trim().is_empty() => GitKey::Code(c.trim().to_owned()),
        _ => GitKey::Runs,
    };
    match (section, sub, key) {
        ("alias", _, _) => match v.strip_prefix('!') {
            Some(c) if !c.trim().is_empty() => GitKey::Code(c.trim().to_owned()),
            _ => GitKey::Plain,
        },
        ("core", None, "fsmonitor") if boolean => GitKey::Plain,
        (
            "core",
            None,
            "pager"
            | "editor"
            | "askpass"
            | "sshcommand"
            | "gitproxy"
            | "fsmonitor"
            | "alternaterefscommand",
        ) => code(),
        ("core", None, "virtualfilesystem") => GitKey::Runs,
        ("core", None, "hookspath" | "worktree" | "attributesfile" | "excludesfile") => {
            GitKey::Redirects
        }
        ("sequence", None, "editor") | ("interactive", None, "difffilter") => code(),
        ("pager", _, _) if boolean => GitKey::Plain,
        ("pager", _, _) => code(),
        ("diff", None, "external") => code(),
        ("diff", Some(_), "command" | "textconv") => code(),
        ("diff" | "merge", None, "tool" | "guitool") => GitKey::Runs,
        ("merge", Some(_), "driver") => code(),
        ("filter", Some(_), "clean" | "smudge" | "process") => code(),
        ("credential", _, "helper") => bang(),
        ("difftool" | "mergetool" | "guitool" | "browser" | "man", Some(_), "cmd") => code(),
        ("gpg", _, "program") => code(),
        ("uploadpack", None, "packobjectshook") => code(),
        ("tar", Some(_), "command") => code(),
        ("imap", None, "tunnel") => code(),
        ("sendemail", _, "sendmailcmd" | "tocmd" | "cccmd" | "headercmd") => code(),
        ("sendemail", _, "smtpserver") if v.starts_with('/') => code(),
        // Sections that only configure external programs or code-running transports.
        ("filter" | "credential" | "difftool" | "mergetool" | "sendemail" | "imap", _, _)
        | ("guitool" | "browser" | "man" | "instaweb" | "hook" | "tar", _, _)
        | ("uploadpack" | "svn" | "svn-remote" | "git-p4" | "gpg", _, _) => GitKey::Runs,
        ("trailer", Some(_), "command" | "cmd") => code(),
        ("remote", Some(_), "uploadpack" | "receivepack") => code(),
        ("remote", Some(_), "vcs" | "proxy") => GitKey::Runs,
        ("submodule", Some(_), "update") => bang(),
        ("web", None, "browser") => GitKey::Runs,
        ("include" | "includeif", _, _) => GitKey::Redirects,
        ("lfs", Some(s), _) if s.starts_with("customtransfer.") => GitKey::Runs,
        ("lfs", None, "standalonetransferagent") => GitKey::Runs,
        ("protocol", _, "allow") if v == "never" => GitKey::Plain,
        ("protocol", _, "allow") => GitKey::Runs,
        // A rewritten URL can name the `ext::` transport, which runs a command.
        ("url", Some(_), "insteadof" | "pushinsteadof") => GitKey::Redirects,
        ("init", None, "templatedir") | ("bundle", _, _) => GitKey::Redirects,
        _ => GitKey::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        use GitKey::*;
        for (name, value, want) in [
            ("user.name", Some("T"), Plain),
            ("core.fsmonitor", Some("false"), Plain),
            ("core.fsmonitor", Some("touch x"), Code("touch x".into())),
            ("alias.st", Some("status"), Plain),
            ("alias.x", Some("!rm -rf y"), Code("rm -rf y".into())),
            ("core.hooksPath", Some(".h"), Redirects),
            ("credential.helper", Some("store"), Runs),
            ("credential.https://x.useHttpPath", Some("true"), Runs),
            ("filter.lfs.required", Some("true"), Runs),
            ("Include.Path", Some("x"), Redirects),
            ("url.ext::sh.insteadOf", Some("https://"), Redirects),
            ("protocol.ext.allow", Some("always"), Runs),
            ("protocol.ext.allow", Some("never"), Plain),
            ("remote.origin.url", Some("https://x"), Plain),
            ("init.templateDir", Some("/t"), Redirects),
        ] {
            assert_eq!(classify(name, value), want, "{name}={value:?}");
        }
    }
}
