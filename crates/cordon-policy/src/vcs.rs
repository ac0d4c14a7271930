//! What other version-control tools read from a repository and obey: configuration that
//! runs hooks or extensions, and pointers that send the tool to another repository or
//! server (where it would present the user's credentials).
//!
//! A contained run may change these only through a human's review: [`judge_vcs_metadata`]
//! holds them, wherever the repository is (a repository nested in a subdirectory is as
//! live as the top one). It never refuses: each is ordinary for its tool to write, and a
//! human can tell a `hg clone`'s `[paths]` from a planted `[hooks]`. What these tools keep
//! as data (Mercurial's store, Jujutsu's operation log, Pijul's pristine) is not touched.
//! git's own files are judged by [`crate::gitallow`].

use crate::gitallow::name_is;
use crate::planted::{Leave, LeftKind};
use std::ffi::OsStr;

/// Whether the entry at `comps` (the normal components of its host path) that a run left
/// as `kind` is metadata of a version-control tool that runs programs or redirects the
/// tool, and so waits for review; `None` when this module has nothing to say about it.
pub fn judge_vcs_metadata(comps: &[&OsStr], kind: LeftKind) -> Option<Leave> {
    let (&name, dirs) = comps.split_last()?;
    let parent = dirs.last().copied();
    let ends = |n: &str| name.as_encoded_bytes().ends_with(n.as_bytes());
    let below = |dir: &str| {
        dirs.iter()
            .rposition(|c| name_is(c, dir))
            .map(|i| &dirs[i + 1..])
    };
    let hold = |why: &str| Some(Leave::Hold(why.to_owned()));

    // Work-tree files that git and git-lfs read as a list of where to fetch from.
    if kind != LeftKind::Dir && name_is(name, crate::gitallow::GITMODULES) {
        return hold(
            "git reads .gitmodules for the URL, branch and update command of each submodule",
        );
    }
    if kind != LeftKind::Dir && name_is(name, ".lfsconfig") {
        return hold(
            "git-lfs reads .lfsconfig for the server it sends the user's credentials and \
             objects to",
        );
    }
    // Mercurial and Sapling: `hgrc` (and Sapling's `config`) set `[hooks]`, `[extensions]`
    // (Python modules by path), merge tools and `[paths]`; `sharedpath` points the store
    // at another repository. `.hgsub` names subrepositories and their sources, which may
    // be git or Subversion checkouts.
    if kind != LeftKind::Dir && name_is(name, ".hgsub") {
        return hold("Mercurial reads .hgsub for the sources of subrepositories it checks out");
    }
    if let Some(p) = parent
        && (name_is(p, ".hg") || name_is(p, ".sl"))
        && ["hgrc", "hgrc-not-shared", "sharedpath", "config"]
            .iter()
            .any(|n| name_is(name, n))
    {
        return hold(
            "Mercurial reads it as the repository's configuration, whose hooks and \
             extensions run and whose paths say where to pull and push",
        );
    }
    if kind == LeftKind::Symlink && dirs.iter().any(|c| name_is(c, ".hg") || name_is(c, ".sl")) {
        return hold("a symlink in a Mercurial repository can send it elsewhere");
    }
    // Jujutsu: `.jj/repo/config.toml` (and the workspace's) may set `fix.tools`, merge and
    // diff tools, aliases and signing programs; newer versions keep that file in the
    // user's config directory under an id kept in `config-id`. A secondary workspace's
    // `.jj/repo` is a file naming another repository, and `store/git_target` names the git
    // directory jj works on.
    if let Some(inside) = below(".jj") {
        let repo_pointer = inside.is_empty() && name_is(name, "repo") && kind != LeftKind::Dir;
        if repo_pointer
            || kind == LeftKind::Symlink
            || (kind == LeftKind::File
                && (ends(".toml") || name_is(name, "config-id") || name_is(name, "git_target")))
        {
            return hold(
                "Jujutsu reads it as repository configuration, whose tools run, or as the \
                 place of the repository it works on",
            );
        }
    }
    // Bazaar and Breezy: `branch.conf` and other `.conf` files set push, pull and bound
    // locations (and options plugins act on); `branch/location` makes a lightweight
    // checkout of another branch.
    if below(".bzr").is_some()
        && kind != LeftKind::Dir
        && (ends(".conf") || name_is(name, "location") || kind == LeftKind::Symlink)
    {
        return hold(
            "Bazaar reads it as branch configuration or as the location of the branch it \
             works on",
        );
    }
    // Darcs: `_darcs/prefs/` holds `defaults` (options of every command, `--posthook`
    // and `--prehook` commands included), the `test` and `predist` commands, and the
    // repositories it pulls from.
    if below("_darcs").is_some_and(|inside| inside.first().is_some_and(|c| name_is(c, "prefs")))
        && kind != LeftKind::Dir
    {
        return hold("Darcs reads its prefs for commands it runs and repositories it pulls from");
    }
    // Pijul: `.pijul/config` holds hooks and remotes, and approvals of the shared hooks in
    // `pijul.toml` are kept beside it; the pristine and the changes are data.
    if let Some(inside) = below(".pijul")
        && kind != LeftKind::Dir
        && !inside
            .first()
            .is_some_and(|c| name_is(c, "pristine") || name_is(c, "changes"))
    {
        return hold(
            "Pijul reads it as repository configuration, whose hooks run, or as an \
             approval of the repository's hooks",
        );
    }
    // Fossil: a checkout's `.fslckout` (`_FOSSIL_` on older versions) names the
    // repository file, and a repository file (`*.fossil` by convention) holds its own
    // settings: hooks, `ssh-command`, diff and merge commands, TH1 scripts.
    if kind != LeftKind::Dir
        && (name_is(name, ".fslckout") || name_is(name, "_FOSSIL_") || ends(".fossil"))
    {
        return hold(
            "Fossil reads it as the repository a checkout works on, whose settings hold \
             hooks and commands",
        );
    }
    // CVS: `CVS/Root` names the server, and with `:ext:` or `:fork:` how to start it.
    if kind != LeftKind::Dir && name_is(name, "Root") && parent.is_some_and(|p| name_is(p, "CVS")) {
        return hold("CVS reads CVS/Root for the server it connects to and how to reach it");
    }
    // The `repo` tool (Android, Chromium): its launcher runs the Python code it finds in
    // `.repo/repo/`, and the manifests name every project's remote and the hooks to run.
    if let Some(inside) = below(".repo")
        && kind != LeftKind::Dir
        && (inside.first().is_some_and(|c| {
            name_is(c, "repo") || name_is(c, "manifests") || name_is(c, "local_manifests")
        }) || (inside.is_empty() && name_is(name, "manifest.xml")))
    {
        return hold(
            "the repo tool runs the code in .repo/repo and fetches what its manifests name",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Component, Path};

    fn judge(p: &str, kind: LeftKind) -> Option<Leave> {
        let comps: Vec<&OsStr> = Path::new(p)
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s),
                _ => None,
            })
            .collect();
        judge_vcs_metadata(&comps, kind)
    }

    #[test]
    fn configuration_and_pointers_of_other_tools_are_held() {
        use LeftKind::*;
        for (p, k) in [
            ("/w/.gitmodules", File),
            ("/w/sub/.gitmodules", File),
            ("/w/.lfsconfig", File),
            ("/w/.hg/hgrc", File),
            ("/w/deep/er/.hg/hgrc", File),
            ("/w/.hg/hgrc-not-shared", File),
            ("/w/.hg/sharedpath", File),
            ("/w/.hg/patches/.hg/hgrc", File),
            ("/w/.hg/store/data/x", Symlink),
            ("/w/.sl/config", File),
            ("/w/.hgsub", File),
            ("/w/.jj/repo/config.toml", File),
            ("/w/.jj/workspace-config.toml", File),
            ("/w/.jj/repo/config-id", File),
            ("/w/.jj/repo", File),
            ("/w/.jj/repo", Symlink),
            ("/w/.jj/repo/store/git_target", File),
            ("/w/.bzr/branch/branch.conf", File),
            ("/w/.bzr/branch/location", File),
            ("/w/_darcs/prefs/defaults", File),
            ("/w/_darcs/prefs/prefs", File),
            ("/w/.pijul/config", File),
            ("/w/.pijul/hooks-approved", File),
            ("/w/.fslckout", File),
            ("/w/_FOSSIL_", File),
            ("/w/proj.fossil", File),
            ("/w/mod/CVS/Root", File),
            ("/w/.repo/repo/main.py", File),
            ("/w/.repo/manifests/default.xml", File),
            ("/w/.repo/local_manifests/x.xml", File),
            ("/w/.repo/manifest.xml", File),
        ] {
            assert!(
                matches!(judge(p, k), Some(Leave::Hold(_))),
                "{p} must be held"
            );
        }
    }

    #[test]
    fn their_data_and_ordinary_files_pass() {
        use LeftKind::*;
        for (p, k) in [
            ("/w/.hg", Dir),
            ("/w/.hg/store/00changelog.i", File),
            ("/w/.hg/dirstate", File),
            ("/w/.hg/bookmarks", File),
            ("/w/.hg/store/data/hgrc.i", File),
            ("/w/.hgignore", File),
            ("/w/.hgtags", File),
            ("/w/.hgsubstate", File),
            ("/w/.jj", Dir),
            ("/w/.jj/repo", Dir),
            ("/w/.jj/repo/op_store/operations/ab", File),
            ("/w/.jj/working_copy/checkout", File),
            ("/w/.bzr/repository/packs/x.pack", File),
            ("/w/_darcs/patches/x", File),
            ("/w/_darcs/prefs", Dir),
            ("/w/.pijul/pristine/db", File),
            ("/w/.pijul/changes/AB/CD.change", File),
            ("/w/pijul.toml", File),
            ("/w/.fossil-settings/ignore-glob", File),
            ("/w/mod/CVS/Entries", File),
            ("/w/.repo/projects/x.git/objects/ab", File),
            ("/w/src/config.toml", File),
            ("/w/Root", File),
            ("/w/src/repo", File),
            ("/w/.gitattributes", File),
        ] {
            assert_eq!(judge(p, k), None, "{p}");
        }
    }
}
