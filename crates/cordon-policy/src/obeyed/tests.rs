use super::*;
use crate::planted::LeftKind;
use std::collections::BTreeSet;
use std::ffi::OsStr;

const ROOT: &str = "/w";
const HOME: &str = "/home/u";

fn obeyed_in(path: &str, root: &str) -> Option<Obeyed> {
    host_obeyed(Path::new(path), Path::new(root), Path::new(HOME))
}

fn class_of(path: &str, root: &str) -> Option<&'static str> {
    obeyed_in(path, root).map(|o| o.class)
}

/// Paths an entry's pattern spells: `**` as two components and, when there is one, as
/// none; `*` as `x`.
fn samples(pattern: &str) -> Vec<String> {
    let spell = |deep: &str| {
        pattern
            .split('/')
            .filter_map(|c| match c {
                "**" if deep.is_empty() => None,
                "**" => Some(deep.to_string()),
                c => Some(c.replace('*', "x")),
            })
            .collect::<Vec<_>>()
            .join("/")
    };
    let mut out = vec![spell("deep/er")];
    if pattern.split('/').any(|c| c == "**") {
        out.push(spell(""));
    }
    out
}

#[test]
fn the_table_is_well_formed() {
    let mut seen = BTreeSet::new();
    let mut names = BTreeSet::new();
    for class in CLASSES {
        assert!(names.insert(class.name), "class {} twice", class.name);
        assert!(!class.entries.is_empty(), "{} is empty", class.name);
        for e in class.entries {
            let p = e.pattern;
            let comps: Vec<&str> = p.split('/').collect();
            assert!(
                comps
                    .iter()
                    .all(|c| !c.is_empty() && *c != "." && *c != ".."),
                "{p}: empty, . or .. component"
            );
            assert!(
                comps.iter().all(|c| *c == "**" || !c.contains("**")),
                "{p}: ** must be a whole component"
            );
            assert!(
                comps.iter().filter(|c| **c == "**").count() <= 1,
                "{p}: at most one ** keeps matching linear"
            );
            assert!(
                !(e.at == Where::Anywhere && comps[0] == "**"),
                "{p}: an Anywhere entry starts at any depth already"
            );
            assert!(
                seen.insert((p.to_ascii_lowercase(), format!("{:?}", e.at))),
                "{p} listed twice"
            );
        }
    }
}

#[test]
fn every_entry_is_matched_where_it_belongs_and_names_its_class() {
    // Every failure at once: an entry added to the table is checked here with no other
    // change, and a clash with an earlier class shows all its cases.
    let mut wrong = Vec::new();
    let mut expect = |p: &str, root: &str, e: &Entry, class: &str| {
        if class_of(p, root) != Some(class) {
            wrong.push(format!(
                "{p} in {root} ({}): {:?}",
                e.pattern,
                obeyed_in(p, root)
            ));
        }
    };
    for class in CLASSES {
        for e in class.entries {
            for s in samples(e.pattern) {
                let upper = s.to_ascii_uppercase();
                match e.at {
                    Where::Anywhere => {
                        expect(&format!("{ROOT}/{s}"), ROOT, e, class.name);
                        expect(&format!("{ROOT}/sub/dir/{s}"), ROOT, e, class.name);
                        expect(&format!("{ROOT}/{upper}"), ROOT, e, class.name);
                    }
                    Where::Root => {
                        expect(&format!("{ROOT}/{s}"), ROOT, e, class.name);
                        expect(&format!("{ROOT}/{upper}"), ROOT, e, class.name);
                        let deeper = format!("{ROOT}/sub/{s}");
                        let hit = obeyed_in(&deeper, ROOT).map(|o| o.pattern);
                        assert_ne!(hit, Some(e.pattern), "{deeper} is not at the root");
                    }
                    Where::Home => {
                        // HOME as the writable root, and HOME's path in a root above it.
                        expect(&format!("{HOME}/{s}"), HOME, e, class.name);
                        expect(&format!("{HOME}/{upper}"), HOME, e, class.name);
                        expect(&format!("{HOME}/{s}"), "/", e, class.name);
                        let elsewhere = format!("{ROOT}/{s}");
                        let hit = obeyed_in(&elsewhere, ROOT).map(|o| o.pattern);
                        assert_ne!(hit, Some(e.pattern), "{elsewhere} is not under HOME");
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The files the reviews found merged, one line each: (path, writable root, class).
#[test]
fn what_the_reviews_found_is_obeyed() {
    const EDITOR: &str = "editor and IDE configuration and tasks";
    const DEVBOX: &str = "dev-container and cloud-workspace definitions";
    const TOOLCHAIN: &str = "version-manager and toolchain selection";
    const SHELL: &str = "shell-prompt and directory-environment configuration";
    const BUILD: &str = "build-tool and package-manager configuration and tool wrappers";
    const HOOKS: &str = "git hook managers";
    const AGENT: &str = "agents' MCP servers and settings";
    const INSTR: &str = "instructions for agents";
    const CI: &str = "CI definitions";
    const REPL: &str = "start-up files of interpreters and REPLs";
    const USER: &str = "per-user tool configuration under HOME";
    for (path, root, class) in [
        ("/w/.devcontainer.json", ROOT, DEVBOX),
        ("/w/.devcontainer/devcontainer.json", ROOT, DEVBOX),
        ("/w/proj.code-workspace", ROOT, EDITOR),
        ("/w/.zed/settings.json", ROOT, EDITOR),
        ("/w/.zed/tasks.json", ROOT, EDITOR),
        ("/w/.vscode/tasks.json", ROOT, EDITOR),
        ("/w/.idea/workspace.xml", ROOT, EDITOR),
        ("/w/.nvim.lua", ROOT, EDITOR),
        ("/w/.exrc", ROOT, EDITOR),
        ("/w/.dir-locals.el", ROOT, EDITOR),
        ("/w/.kiro/settings/mcp.json", ROOT, AGENT),
        ("/w/.roo/mcp.json", ROOT, AGENT),
        ("/w/.continue/config.json", ROOT, AGENT),
        ("/w/.mcp.json", ROOT, AGENT),
        ("/w/.claude/settings.json", ROOT, AGENT),
        ("/w/.aider.conf.yml", ROOT, AGENT),
        ("/w/.mise.toml", ROOT, TOOLCHAIN),
        ("/w/mise.toml", ROOT, TOOLCHAIN),
        ("/w/.mise/config.toml", ROOT, TOOLCHAIN),
        ("/w/.tool-versions", ROOT, TOOLCHAIN),
        ("/w/rust-toolchain", ROOT, TOOLCHAIN),
        ("/w/rust-toolchain.toml", ROOT, TOOLCHAIN),
        ("/w/.envrc", ROOT, SHELL),
        ("/w/.env", ROOT, SHELL),
        ("/w/.pre-commit-config.yaml", ROOT, HOOKS),
        ("/w/.husky/pre-commit", ROOT, HOOKS),
        ("/w/lefthook.yml", ROOT, HOOKS),
        ("/w/.overcommit.yml", ROOT, HOOKS),
        ("/w/pre_commit/__init__.py", ROOT, HOOKS),
        ("/w/pre_commit/__main__.py", ROOT, HOOKS),
        ("/w/node_modules/husky/lib/bin.js", ROOT, HOOKS),
        ("/w/.github/workflows/ci.yml", ROOT, CI),
        ("/w/.gitlab-ci.yml", ROOT, CI),
        ("/w/Jenkinsfile", ROOT, CI),
        ("/w/.circleci/config.yml", ROOT, CI),
        ("/w/CLAUDE.md", ROOT, INSTR),
        ("/w/CLAUDE.local.md", ROOT, INSTR),
        ("/w/AGENTS.md", ROOT, INSTR),
        ("/w/GEMINI.md", ROOT, INSTR),
        ("/w/.cursorrules", ROOT, INSTR),
        ("/w/.windsurfrules", ROOT, INSTR),
        ("/w/.clinerules", ROOT, INSTR),
        ("/w/.github/copilot-instructions.md", ROOT, INSTR),
        ("/w/.amazonq/rules/style.md", ROOT, INSTR),
        ("/w/.junie/guidelines.md", ROOT, INSTR),
        ("/w/.claude/CLAUDE.md", ROOT, INSTR),
        ("/w/packages/api/AGENTS.md", ROOT, INSTR),
        ("/w/gradlew", ROOT, BUILD),
        ("/w/gradle/wrapper/gradle-wrapper.jar", ROOT, BUILD),
        ("/w/mvnw", ROOT, BUILD),
        ("/w/.mvn/wrapper/maven-wrapper.properties", ROOT, BUILD),
        ("/w/.mvn/extensions.xml", ROOT, BUILD),
        ("/w/tools/bazel", ROOT, BUILD),
        ("/w/.yarnrc.yml", ROOT, BUILD),
        ("/w/.yarn/releases/yarn-4.1.0.cjs", ROOT, BUILD),
        ("/w/.pnpmfile.cjs", ROOT, BUILD),
        ("/w/.cargo/config.toml", ROOT, BUILD),
        ("/w/.npmrc", ROOT, BUILD),
        ("/w/packages/web/.npmrc", ROOT, BUILD),
        ("/w/.bunfig.toml", ROOT, BUILD),
        ("/w/bunfig.toml", ROOT, BUILD),
        ("/w/.venv/pip.conf", ROOT, BUILD),
        ("/w/.venv/pyvenv.cfg", ROOT, REPL),
        ("/w/.venv/lib/python3.12/site-packages/evil.pth", ROOT, REPL),
        (
            "/w/.tox/py312/lib/python3.12/site-packages/sitecustomize.py",
            ROOT,
            REPL,
        ),
        ("/w/.pdbrc", ROOT, REPL),
        ("/w/.Rprofile", ROOT, REPL),
        ("/w/.Renviron", ROOT, REPL),
        ("/w/.irbrc", ROOT, REPL),
        ("/w/.lldbinit", ROOT, REPL),
        (
            "/home/u/.ipython/profile_default/startup/00-x.py",
            HOME,
            REPL,
        ),
        ("/home/u/.claude.json", HOME, AGENT),
        ("/home/u/.config/starship.toml", HOME, SHELL),
        ("/home/u/.config/mise/config.toml", HOME, TOOLCHAIN),
        ("/home/u/.local/share/direnv/allow/abc", HOME, SHELL),
        ("/home/u/.wgetrc", HOME, USER),
        ("/home/u/.curlrc", HOME, USER),
        ("/home/u/.mailcap", HOME, USER),
        ("/home/u/.terraformrc", HOME, USER),
        ("/home/u/.lesskey", HOME, USER),
        ("/home/u/.bazelrc", HOME, BUILD),
        ("/home/u/.condarc", HOME, USER),
        ("/home/u/.Renviron", HOME, REPL),
        ("/home/u/.config/containers/containers.conf", HOME, USER),
        ("/home/u/.hgrc", HOME, USER),
        ("/home/u/bin/git", HOME, USER),
        ("/home/u/.docker/cli-plugins/docker-compose", HOME, USER),
        // A HOME location holds whatever writable root it is reached through.
        ("/home/u/.wgetrc", "/home", USER),
    ] {
        assert_eq!(class_of(path, root), Some(class), "{path} in {root}");
    }
}

#[test]
fn ordinary_project_files_are_not_obeyed() {
    for (path, root) in [
        ("/w/src/main.rs", ROOT),
        ("/w/README.md", ROOT),
        ("/w/docs/workflows.md", ROOT),
        ("/w/docs/CLAUDE.txt", ROOT),
        ("/w/.github", ROOT),
        ("/w/.github/ISSUE_TEMPLATE/bug.md", ROOT),
        ("/w/.github/CODEOWNERS", ROOT),
        ("/w/.config", ROOT),
        ("/w/package.json", ROOT),
        ("/w/package-lock.json", ROOT),
        ("/w/Cargo.toml", ROOT),
        ("/w/Cargo.lock", ROOT),
        ("/w/pyproject.toml", ROOT),
        ("/w/setup.py", ROOT),
        ("/w/Makefile", ROOT),
        ("/w/.gitignore", ROOT),
        ("/w/.editorconfig", ROOT),
        ("/w/.env.example", ROOT),
        ("/w/build/x.o", ROOT),
        ("/w/target/debug/app", ROOT),
        ("/w/tests/test_x.py", ROOT),
        ("/w/tools/bazelisk.md", ROOT),
        ("/w/src/global.json", ROOT),
        ("/w/src/mill", ROOT),
        ("/w/sub/pre_commit/__init__.py", ROOT),
        ("/w/pip.conf", ROOT),
        // What packages ship is not where host tools look.
        ("/w/node_modules/left-pad/index.js", ROOT),
        ("/w/node_modules/left-pad/.travis.yml", ROOT),
        ("/w/node_modules/left-pad/.github/workflows/ci.yml", ROOT),
        ("/w/node_modules/left-pad/AGENTS.md", ROOT),
        (
            "/w/.venv/lib/python3.12/site-packages/pkg/.pre-commit-config.yaml",
            ROOT,
        ),
        (
            "/w/.venv/lib/python3.12/site-packages/pkg/lib/python3/site-packages/x.pth",
            ROOT,
        ),
        ("/home/u/notes.txt", HOME),
        ("/home/u/src/proj/main.rs", HOME),
        // Outside the writable root, or a name that only starts like it.
        ("/elsewhere/.vscode/tasks.json", ROOT),
        ("/w_evil/.mcp.json", ROOT),
        // HOME is matched by components: /home/user2 is not under /home/u.
        ("/home/user2/.wgetrc", "/home"),
    ] {
        assert_eq!(obeyed_in(path, root), None, "{path} in {root}");
    }
}

#[test]
fn a_relative_home_matches_nothing_of_home() {
    let hit = host_obeyed(Path::new("/w/.wgetrc"), Path::new("/w"), Path::new(""));
    assert_eq!(hit, None);
}

#[test]
fn the_reason_names_the_class_and_the_pattern() {
    let hit = obeyed_in("/w/.zed/tasks.json", ROOT).map(|o| o.reason());
    let reason = hit.unwrap_or_default();
    assert!(reason.contains("editor and IDE"), "{reason}");
    assert!(reason.contains(".zed/**"), "{reason}");
}

#[test]
fn component_globs() {
    for (name, pattern, want) in [
        ("mise.dev.toml", "mise.*.toml", true),
        ("mise.toml", "mise.*.toml", false),
        ("jupyter_notebook_config.py", "jupyter_*config.py", true),
        ("a-b-c", "a*b*c", true),
        ("ac", "a*b*c", false),
        ("abc", "a*b*c", true),
        ("X.CODE-WORKSPACE", "*.code-workspace", true),
        (".envrc", ".envrc*", true),
        (".envrc.local", ".envrc*", true),
        (".env", ".envrc*", false),
    ] {
        assert_eq!(
            name_matches(OsStr::new(name), pattern),
            want,
            "{name} ~ {pattern}"
        );
    }
}

fn host() -> HostNames {
    let mut names = HostNames::new();
    for p in ["git", "sh", "node", "sudo", "python3", "pip"] {
        names.add_program(OsStr::new(p));
    }
    for m in ["pre_commit", "requests", "json", "_yaml"] {
        names.add_python_module(OsStr::new(m));
    }
    names.add_python_namespace(OsStr::new("google"));
    // A regular package anywhere wins over a namespace portion elsewhere.
    names.add_python_namespace(OsStr::new("json"));
    names
}

#[test]
fn new_entries_named_like_the_hosts_programs_and_modules_shadow_them() {
    use LeftKind::*;
    let names = host();
    for (path, kind, shadows_one) in [
        ("/w/node_modules/.bin/git", File, true),
        ("/w/node_modules/.bin/GIT", Symlink, true),
        ("/w/packages/a/node_modules/.bin/sh", Symlink, true),
        ("/w/node_modules/.bin/left-pad", Symlink, false),
        ("/w/node_modules/.bin/git", Dir, false),
        ("/w/.venv/bin/git", File, true),
        ("/w/.venv/bin/sudo", File, true),
        ("/w/.venv/bin/python3", Symlink, false),
        ("/w/.venv/bin/pip", File, false),
        ("/w/venv/bin/node", File, true),
        ("/w/env/bin/sh", File, true),
        ("/w/vendor/bin/git", File, true),
        ("/w/bin/git", File, false),
        ("/w/pre_commit/__init__.py", File, true),
        (
            "/w/pre_commit/__init__.cpython-312-x86_64-linux-gnu.so",
            File,
            true,
        ),
        ("/w/pre_commit", Dir, false),
        ("/w/pre_commit/__main__.py", File, false),
        ("/w/requests.py", File, true),
        ("/w/requests.pyc", File, true),
        ("/w/requests.cpython-312-x86_64-linux-gnu.so", File, true),
        ("/w/_yaml.abi3.so", File, true),
        ("/w/requests", Symlink, true),
        ("/w/requests", Dir, false),
        ("/w/requests/__init__.py", File, true),
        ("/w/requests/sub/__init__.py", File, false),
        ("/w/json/__init__.py", File, true),
        ("/w/json/decoder.py", File, false),
        ("/w/requests.pth", File, false),
        ("/w/Requests.py", File, false),
        ("/w/sub/requests.py", File, false),
        ("/w/google/protobuf/__init__.py", File, true),
        ("/w/google/protobuf.py", File, true),
        ("/w/google/README.md", File, false),
        ("/w/mytool.py", File, false),
        ("/w/9requests.py", File, false),
        ("/elsewhere/requests.py", File, false),
    ] {
        let hit = shadows(Path::new(path), Path::new(ROOT), kind, &names);
        assert_eq!(hit.is_some(), shadows_one, "{path} as {kind:?}: {hit:?}");
        if let Some(o) = hit {
            assert_eq!(o.class, SHADOWING);
        }
    }
}

#[test]
fn nothing_shadows_on_a_host_with_nothing_installed() {
    let empty = HostNames::new();
    for path in [
        "/w/node_modules/.bin/git",
        "/w/requests.py",
        "/w/pre_commit/__init__.py",
    ] {
        let hit = shadows(Path::new(path), Path::new(ROOT), LeftKind::File, &empty);
        assert_eq!(hit, None, "{path}");
    }
}

#[test]
fn python_reads_module_names_from_file_names() {
    for (name, is_dir, want) in [
        ("json", true, Some("json")),
        ("__future__.py", false, Some("__future__")),
        ("six.py", false, Some("six")),
        ("six.pyc", false, Some("six")),
        ("_ssl.cpython-312-x86_64-linux-gnu.so", false, Some("_ssl")),
        ("_yaml.abi3.so", false, Some("_yaml")),
        ("README", false, None),
        ("json", false, None),
        (".py", false, None),
        ("2to3.py", false, None),
        ("x-1.0.dist-info", true, None),
        ("python3.12", true, None),
        ("distutils-precedence.pth", false, None),
    ] {
        let got = python_module_name(OsStr::new(name), is_dir).and_then(OsStr::to_str);
        assert_eq!(got, want, "{name} (dir: {is_dir})");
    }
}

/// F20/F20b: with the workspace = HOME, shell-sourced files outside the protected list
/// landed (`~/.bash_completion`, bash-completion's completions, `~/.selected_editor`,
/// `user-dirs.dirs`, `.muttrc`, `.mambarc`, …).
#[test]
fn home_files_the_shell_and_session_source_are_obeyed() {
    const SESSION: &str = "files the shell, the desktop session and their helpers source or run";
    for p in [
        "/home/u/.bash_completion",
        "/home/u/.BASH_COMPLETION",
        "/home/u/.local/share/bash-completion/completions/git",
        "/home/u/.selected_editor",
        "/home/u/.config/user-dirs.dirs",
        "/home/u/.muttrc",
        "/home/u/.mambarc",
        "/home/u/.xsessionrc",
        "/home/u/.Xresources",
        "/home/u/.config/openbox/autostart",
        "/home/u/.kde/Autostart/x.sh",
        "/home/u/.local/share/applications/evil.desktop",
        "/home/u/.default-python-packages",
        "/home/u/.config/mpv/scripts/x.lua",
        "/home/u/.local/share/fish/vendor_conf.d/x.fish",
        "/home/u/.config/zsh/.zshrc",
    ] {
        // Whatever the writable root: HOME itself or a project below it.
        assert_eq!(class_of(p, HOME), Some(SESSION), "{p}");
        assert_eq!(class_of(p, "/"), Some(SESSION), "{p}");
    }
    assert_eq!(class_of("/w/.bash_completion", ROOT), None);
    assert_eq!(class_of("/home/u/notes/.muttrc.txt", HOME), None);
}

#[test]
fn configuration_that_lint_tools_run_is_obeyed() {
    let class = "lint, format and type-check tools' configuration that is code";
    for path in [
        "/w/.eslintrc.cjs",
        "/w/web/eslint.config.mts",
        "/w/prettier.config.mjs",
        "/w/mypy.ini",
    ] {
        assert_eq!(class_of(path, ROOT), Some(class), "{path}");
    }
    // Not held by the merge: what every install writes (a virtualenv's programs,
    // node_modules/.bin; only an entry there that shadows a host program is, see
    // `shadows`) and a test runner's configuration (testing runs the project's code).
    for path in [
        "/w/eslint.md",
        "/w/node_modules/left-pad/bin/cli.js",
        "/w/src/venv.py",
        "/w/venv/bin/python",
        "/w/.venv/bin/activate.fish",
        "/w/app/node_modules/.bin/prettier",
        "/w/web/vitest.config.mts",
        "/w/jest.config.js",
    ] {
        assert_eq!(class_of(path, ROOT), None, "{path}");
    }
}
