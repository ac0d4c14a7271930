//! The table: every class, its tools, and every location they look at.
//!
//! One line per location. A comment says why where the tool or the way it runs the file
//! is not obvious from the name. Classes are in priority order: where two classes could
//! match one path (`.claude/CLAUDE.md` is an instruction file inside an agent's settings
//! directory), the earlier names it, so instruction files come first.

use super::{Class, any, home, root};

/// Every class of files that host tools obey or run without being asked.
pub const CLASSES: &[Class] = &[
    Class {
        name: "instructions for agents",
        tools: "Claude Code, Codex, Gemini CLI, Qwen Code, Cursor, Windsurf, Cline, Roo Code, \
                Kilo Code, Kiro, Continue, Amazon Q, Junie, JetBrains AI Assistant, Augment, \
                Trae, OpenHands, Goose, Crush, Amp, Zed, GitHub Copilot",
        why: "the next agent session reads it as instructions before doing anything",
        entries: &[
            any("CLAUDE.md"),
            any("CLAUDE.local.md"),
            any(".claude/CLAUDE.md"),
            any(".claude/rules/**"),
            any("AGENTS.md"),
            // Codex reads it before AGENTS.md in each directory.
            any("AGENTS.override.md"),
            // Amp's first name for AGENTS.md; Zed still reads it.
            any("AGENT.md"),
            any("GEMINI.md"),
            any("QWEN.md"),
            any("CRUSH.md"),
            // Zed's own rules file.
            any(".rules"),
            any(".cursorrules"),
            any(".cursor/rules/**"),
            any(".windsurfrules"),
            any(".windsurf/rules/**"),
            // A file or a directory of rules; Cline also keeps workflows and hooks there.
            any(".clinerules/**"),
            any(".roorules*"),
            any(".roo/rules/**"),
            any(".roo/rules-*/**"),
            any(".kilocode/rules/**"),
            any(".kiro/steering/**"),
            any(".continue/rules/**"),
            any(".amazonq/rules/**"),
            any(".junie/guidelines.md"),
            any(".aiassistant/rules/**"),
            any(".augment-guidelines"),
            any(".augment/rules/**"),
            any(".trae/rules/**"),
            any(".openhands/microagents/**"),
            any(".openhands_instructions"),
            any(".goosehints"),
            any(".github/copilot-instructions.md"),
            any(".github/instructions/**"),
            any(".github/prompts/**"),
            any(".github/chatmodes/**"),
            any(".github/agents/**"),
        ],
    },
    Class {
        name: "agents' MCP servers and settings",
        tools: "Claude Code, Codex, Gemini CLI, Qwen Code, Cursor, Windsurf, Kiro, Roo Code, \
                Kilo Code, Continue, Amazon Q, Aider, Junie, JetBrains AI Assistant, Cline, \
                OpenCode, Crush, Augment, Trae, OpenHands, Goose, Factory, Tabnine, Amp, \
                GitHub Copilot",
        why: "the next agent session starts its MCP servers, runs its hooks and takes its \
              permissions from it",
        entries: &[
            any(".mcp.json"),
            // Hooks, permissions, commands, agents and skills.
            any(".claude/**"),
            any(".codex/**"),
            any(".gemini/**"),
            any(".qwen/**"),
            any(".cursor/**"),
            any(".windsurf/**"),
            // MCP servers (settings/mcp.json), agent hooks run on file events.
            any(".kiro/**"),
            any(".roo/**"),
            any(".roomodes"),
            any(".kilocode/**"),
            any(".continue/**"),
            any(".continuerc.json"),
            // default.json, mcp.json, cli-agents/.
            any(".amazonq/**"),
            // test-cmd, lint-cmd with auto-test and auto-lint run commands.
            any(".aider.conf.yml"),
            any(".aider.model.settings.yml"),
            any(".aider.model.metadata.json"),
            any(".junie/**"),
            any(".aiassistant/**"),
            // OpenCode loads JavaScript plugins and tools from .opencode/.
            any(".opencode/**"),
            any("opencode.json"),
            any("opencode.jsonc"),
            any(".crush.json"),
            any("crush.json"),
            any(".augment/**"),
            any(".trae/**"),
            // .openhands/setup.sh runs at the start of every session.
            any(".openhands/**"),
            any(".goose/**"),
            any(".factory/**"),
            any(".tabnine/**"),
            // User scope: Claude Code's user-scope MCP servers live in ~/.claude.json.
            home(".claude.json"),
            home(".codeium/**"),
            home(".aws/amazonq/**"),
            home(".config/opencode/**"),
            home(".config/crush/**"),
            home(".config/goose/**"),
            home(".config/amp/**"),
            home(".copilot/**"),
            home(".config/github-copilot/**"),
            home(".cline/**"),
            home("Documents/Cline/**"),
        ],
    },
    Class {
        name: "editor and IDE configuration and tasks",
        tools: "VS Code and its forks (Cursor, Windsurf, VSCodium), JetBrains IDEs and Fleet, \
                Zed, Sublime Text, Vim and Neovim, Emacs, Helix, Kakoune, micro, Eclipse, \
                Visual Studio, Nova, Theia, Metals and other Build Server Protocol clients",
        why: "the editor runs its tasks, starts its language servers and loads its settings \
              when the folder is opened",
        entries: &[
            // tasks.json tasks with runOn folderOpen, settings that name executables.
            any(".vscode/**"),
            any("*.code-workspace"),
            any(".idea/**"),
            // JetBrains shared run configurations.
            any(".run/*.run.xml"),
            any(".fleet/**"),
            // settings.json (language servers, context servers), tasks.json, debug.json.
            any(".zed/**"),
            any("*.sublime-project"),
            // Vim's and Neovim's 'exrc', the localvimrc plugin, lazy.nvim's local specs.
            any(".exrc"),
            any("_exrc"),
            any(".vimrc"),
            any("_vimrc"),
            any(".gvimrc"),
            any("_gvimrc"),
            any(".nvimrc"),
            any(".nvim.lua"),
            any(".lvimrc"),
            any(".lazy.lua"),
            any(".dir-locals.el"),
            any(".dir-locals-2.el"),
            // languages.toml names the language servers Helix starts.
            any(".helix/**"),
            // Eclipse runs the external tool builders of .project on every build.
            any(".project"),
            any(".externalToolBuilders/**"),
            // tasks.vs.json, launch.vs.json.
            any(".vs/**"),
            any(".nova/**"),
            any(".theia/**"),
            // Connection files whose argv the IDE starts as the build server on import.
            any(".bsp/**"),
            home(".config/zed/**"),
            home(".config/helix/**"),
            home(".config/kak/**"),
            home(".config/micro/**"),
            home(".config/sublime-text/**"),
            home(".config/sublime-text-3/**"),
            home(".config/JetBrains/**"),
            home(".local/share/JetBrains/**"),
            home(".config/Code/**"),
            home(".config/Code - Insiders/**"),
            home(".config/Code - OSS/**"),
            home(".config/VSCodium/**"),
            home(".config/Cursor/**"),
            home(".config/Windsurf/**"),
            home(".vscode-insiders/**"),
            home(".vscode-oss/**"),
            home(".vscode-server/**"),
            home(".cursor-server/**"),
            home(".windsurf-server/**"),
            home(".config/nvim/**"),
            home(".vim/**"),
            home(".emacs"),
            home(".emacs.el"),
            home(".emacs.d/**"),
            home(".config/emacs/**"),
            home(".doom.d/**"),
            home(".config/doom/**"),
            home(".spacemacs"),
            home(".spacemacs.d/**"),
        ],
    },
    Class {
        name: "dev-container and cloud-workspace definitions",
        tools: "Dev Containers (VS Code, GitHub Codespaces, DevPod, the devcontainer CLI), \
                Gitpod, Devfile (Eclipse Che, OpenShift Dev Spaces), Project IDX and \
                Firebase Studio, Replit, CodeSandbox",
        why: "the workspace is built and its commands run when the folder is opened \
              (devcontainer.json's initializeCommand runs on the host itself)",
        entries: &[
            any(".devcontainer/**"),
            any(".devcontainer.json"),
            any(".gitpod.yml"),
            any(".gitpod.Dockerfile"),
            any("devfile.yaml"),
            any("devfile.yml"),
            any(".devfile.yaml"),
            any(".devfile.yml"),
            any(".idx/**"),
            any(".replit"),
            any("replit.nix"),
            any(".codesandbox/**"),
        ],
    },
    Class {
        name: "version-manager and toolchain selection",
        tools: "mise (and rtx), asdf, rustup, nvm, fnm, nodenv, Volta, pyenv, uv, rbenv, RVM, \
                chruby, goenv, jenv, SDKMAN!, tfenv, tfswitch, proto, plenv, phpenv, Bun, \
                the .NET SDK, Nix profiles",
        why: "the manager acts on cd or picks the toolchain every later command runs, \
              and a version can name a directory in the tree (`path:` in asdf and mise, \
              `path` in rust-toolchain.toml)",
        entries: &[
            any(".tool-versions"),
            any("mise.toml"),
            any(".mise.toml"),
            any("mise.*.toml"),
            any(".mise.*.toml"),
            any("mise/config.toml"),
            any(".mise/**"),
            any(".config/mise.toml"),
            any(".config/mise.*.toml"),
            any(".config/mise/**"),
            any(".rtx*.toml"),
            any("rust-toolchain"),
            any("rust-toolchain.toml"),
            any(".nvmrc"),
            any(".node-version"),
            any(".bun-version"),
            any(".python-version"),
            any(".python-versions"),
            any(".ruby-version"),
            any(".ruby-gemset"),
            // RVM sources it as a shell script on cd.
            any(".rvmrc"),
            any(".versions.conf"),
            any(".go-version"),
            any(".java-version"),
            // SDKMAN! applies it on cd with sdkman_auto_env.
            any(".sdkmanrc"),
            any(".terraform-version"),
            any(".tfswitchrc"),
            any(".tfswitch.toml"),
            any(".prototools"),
            any(".perl-version"),
            any(".php-version"),
            // Too ordinary a name to hold at any depth; `sdk.paths` can point into the tree.
            root("global.json"),
            home(".asdfrc"),
            home(".asdf/**"),
            // mise's installs, and the list of config files the user trusted.
            home(".local/share/mise/**"),
            home(".local/state/mise/**"),
            home(".volta/**"),
            home(".fnm/**"),
            home(".local/share/fnm/**"),
            home(".nvm/**"),
            home(".nodenv/**"),
            home(".pyenv/**"),
            home(".rbenv/**"),
            home(".rvm/**"),
            home(".goenv/**"),
            home(".gvm/**"),
            home(".jenv/**"),
            home(".sdkman/**"),
            home(".proto/**"),
            home(".rustup/**"),
            home(".ghcup/**"),
            home(".dotnet/**"),
            home(".local/share/uv/**"),
            home(".local/share/pipx/**"),
            home(".local/pipx/**"),
            home(".nix-profile"),
            home(".nix-defexpr/**"),
            home(".local/state/nix/**"),
            home(".config/nix/**"),
            home(".config/nixpkgs/**"),
        ],
    },
    Class {
        name: "shell-prompt and directory-environment configuration",
        tools: "direnv (and nix-direnv, devenv, Devbox, Flox through it), autoenv, zsh-autoenv, \
                smartcd, ondir, Starship, Powerlevel10k and zsh plugin managers, Oh My Bash, \
                bash-it, nushell, xonsh, elvish, PowerShell, editors and tools that load .env",
        why: "the shell runs it on cd or at every prompt, or sets the environment of every \
              command started there (direnv's approval covers .envrc's text, not the files \
              it loads)",
        entries: &[
            // .envrc and the .envrc.local kind it commonly sources.
            any(".envrc*"),
            // direnv's load_dotenv, autoenv (which runs it as a script), the dotenv plugin of
            // Oh My Zsh, Pipenv, VS Code's Python envFile: NODE_OPTIONS, BASH_ENV or
            // PYTHONSTARTUP there runs code in every process started.
            any(".env"),
            any(".env.leave"),
            any(".autoenv.zsh"),
            any(".autoenv_leave.zsh"),
            // What `use flake`, `use nix`, `use devenv`, devbox and flox evaluate on cd.
            any("flake.nix"),
            any("flake.lock"),
            any("shell.nix"),
            any("default.nix"),
            any("devenv.nix"),
            any("devenv.yaml"),
            any("devenv.lock"),
            any("devbox.json"),
            any(".flox/**"),
            home(".direnvrc"),
            home(".config/direnv/**"),
            // direnv's list of allowed .envrc files.
            home(".local/share/direnv/**"),
            home(".autoenv/**"),
            home(".autoenv_authorized"),
            home(".smartcd/**"),
            home(".smartcd_config"),
            home(".ondirrc"),
            home(".config/starship.toml"),
            home(".p10k.zsh"),
            home(".zimrc"),
            home(".zim/**"),
            home(".zplug/**"),
            home(".antigen/**"),
            home(".zinit/**"),
            home(".local/share/zinit/**"),
            home(".oh-my-zsh/**"),
            home(".oh-my-bash/**"),
            home(".bash_it/**"),
            home(".config/nushell/**"),
            home(".xonshrc"),
            home(".config/xonsh/**"),
            home(".elvish/**"),
            home(".config/elvish/**"),
            home(".config/powershell/**"),
        ],
    },
    Class {
        name: "build-tool and package-manager configuration and tool wrappers",
        tools: "npm, Yarn, pnpm, Bun, Cargo, Gradle, Maven, Bazel and Bazelisk, Buck2, sbt, \
                Mill, uv, Poetry, PDM, pip in a virtualenv, Bundler, NuGet, Terraform",
        why: "the tool runs it in place of itself, or it changes what the tool runs or \
              installs, for commands that would not otherwise run the project's code",
        entries: &[
            // script-shell, node-options, registry.
            any(".npmrc"),
            // yarnPath: Yarn runs that file as itself.
            any(".yarnrc"),
            any(".yarnrc.yml"),
            any(".yarn/releases/**"),
            any(".yarn/plugins/**"),
            // pnpm's readPackage and other hooks, run on install.
            any(".pnpmfile.*"),
            // preload scripts run before every `bun run` and `bun test`.
            any("bunfig.toml"),
            any(".bunfig.toml"),
            // rustc-wrapper, runner, aliases, [env].
            any(".cargo/config"),
            any(".cargo/config.toml"),
            any("gradlew"),
            any("gradlew.bat"),
            any("gradle/wrapper/**"),
            any("mvnw"),
            any("mvnw.cmd"),
            // wrapper, extensions.xml, jvm.config, maven.config.
            any(".mvn/**"),
            // Bazelisk runs tools/bazel (and tools/bazel.<os>-<arch>) instead of Bazel.
            any("tools/bazel"),
            any("tools/bazel.*"),
            any(".bazelrc"),
            // BAZELISK_BASE_URL: where Bazel itself is downloaded from.
            any(".bazeliskrc"),
            any(".bazelversion"),
            any(".buckconfig"),
            any(".buckconfig.local"),
            // Read by the sbt launcher: JVM options such as -javaagent.
            any(".jvmopts"),
            any(".sbtopts"),
            any(".mill-version"),
            any(".config/mill-version"),
            root("mill"),
            root("millw"),
            any("uv.toml"),
            any("poetry.toml"),
            any("pdm.toml"),
            any(".pdm.toml"),
            // The interpreter PDM runs for the project, by path.
            any(".pdm-python"),
            // pip reads the virtualenv's own pip.conf.
            any("*/pip.conf"),
            any(".bundle/config"),
            any("nuget.config"),
            // Provider plugins Terraform runs for every plan.
            any(".terraform/providers/**"),
            any(".terraform/plugins/**"),
        ],
    },
    Class {
        name: "git hook managers",
        tools: "pre-commit (and prek), husky, lefthook, overcommit, simple-git-hooks, yorkie, \
                plain .githooks directories",
        why: "the hook the manager installed runs it on the next commit, push or checkout",
        entries: &[
            // A `repo: local` hook runs through the installed pre-commit hook.
            any(".pre-commit-config.yaml"),
            any(".pre-commit-config.yml"),
            any(".pre-commit-hooks.yaml"),
            any(".husky/**"),
            any(".huskyrc"),
            any(".huskyrc.*"),
            any("husky.config.*"),
            any("lefthook.*"),
            any(".lefthook.*"),
            any("lefthook-local.*"),
            any(".lefthook-local.*"),
            any(".config/lefthook.*"),
            any(".config/lefthook-local.*"),
            any(".lefthook/**"),
            any(".lefthook-local/**"),
            any(".overcommit.yml"),
            any(".git-hooks/**"),
            any(".simple-git-hooks.*"),
            any("simple-git-hooks.*"),
            any(".githooks/**"),
            // The installed hook runs `python -m pre_commit` from the work tree's root, and
            // -m puts the working directory first on sys.path.
            root("pre_commit/**"),
            root("pre_commit.*"),
            // The runners the installed hooks call from the root's node_modules.
            root("node_modules/husky/**"),
            root("node_modules/lefthook/**"),
            root("node_modules/lefthook-*/**"),
            root("node_modules/@evilmartians/**"),
            root("node_modules/yorkie/**"),
        ],
    },
    Class {
        name: "CI definitions",
        tools: "GitHub Actions, GitLab CI, CircleCI, Travis CI, Azure Pipelines, Bitbucket \
                Pipelines, Jenkins, Buildkite, Drone, Woodpecker, Forgejo and Gitea Actions, \
                AppVeyor, Cirrus CI, Semaphore, Codemagic, Google Cloud Build, AWS CodeBuild, \
                Tekton, TeamCity, Bamboo, Harness, SourceHut builds",
        why: "the CI service runs it with the repository's secrets on the next push",
        entries: &[
            any(".github/workflows/**"),
            // Local actions the workflows use (`uses: ./.github/actions/x`).
            any(".github/actions/**"),
            any(".gitlab-ci.yml"),
            // The conventional home of files .gitlab-ci.yml includes.
            any(".gitlab/ci/**"),
            any(".circleci/**"),
            any(".travis.yml"),
            any("azure-pipelines.yml"),
            any("azure-pipelines.yaml"),
            any(".azure-pipelines/**"),
            any("bitbucket-pipelines.yml"),
            any("Jenkinsfile*"),
            any(".buildkite/**"),
            any("buildkite.yml"),
            any("buildkite.yaml"),
            any("buildkite.json"),
            any(".drone.*"),
            any(".woodpecker.yml"),
            any(".woodpecker.yaml"),
            any(".woodpecker/**"),
            any(".forgejo/workflows/**"),
            any(".gitea/workflows/**"),
            any("appveyor.yml"),
            any(".appveyor.yml"),
            any(".cirrus.yml"),
            any(".cirrus.star"),
            any(".semaphore/**"),
            any("codemagic.yaml"),
            any("cloudbuild.yaml"),
            any("cloudbuild.yml"),
            any("cloudbuild.json"),
            any("buildspec.yml"),
            any("buildspec.yaml"),
            any(".tekton/**"),
            any(".teamcity/**"),
            any("bamboo-specs/**"),
            any(".harness/**"),
            any(".build.yml"),
            any(".builds/**"),
        ],
    },
    Class {
        name: "start-up files of interpreters and REPLs",
        tools: "Python (site, virtualenvs, pdb), IPython and Jupyter, R, IRB, Pry, IEx, GHCi, \
                Erlang, Octave, MATLAB, the Perl debugger, GDB, LLDB, Julia, psql, sqlite3, \
                mongosh, Guile, Racket, SBCL, Tcl, Ammonite",
        why: "the interpreter or debugger runs it at start, from the working directory or \
              from HOME",
        entries: &[
            // Imported at every start of an interpreter whose sys.path holds them.
            any("sitecustomize.py"),
            any("usercustomize.py"),
            // `home =` picks the interpreter's own standard library.
            any("pyvenv.cfg"),
            // Any prefix (a virtualenv, tox and nox environments, --prefix installs):
            // site runs the lines of every .pth that start with `import`.
            any("lib/python*/site-packages/*.pth"),
            any("lib/python*/site-packages/sitecustomize.py"),
            any("lib/python*/site-packages/usercustomize.py"),
            any("lib64/python*/site-packages/*.pth"),
            any(".pdbrc"),
            // Loaded from the working directory by IPython before 8.0.1 (CVE-2022-21699)
            // and jupyter_core before 4.11.2 (CVE-2022-39286).
            any("ipython*_config.py"),
            any("profile_*/startup/**"),
            any("jupyter_*config.py"),
            any("jupyter_*config.json"),
            // R reads both from the working directory before HOME.
            any(".Rprofile"),
            any(".Renviron"),
            any(".irbrc"),
            any("irb.rc"),
            any("_irbrc"),
            any("$irbrc"),
            any(".pryrc"),
            any(".iex.exs"),
            any(".ghci"),
            any(".erlang"),
            any(".octaverc"),
            root("startup.m"),
            any(".perldb"),
            any(".gdbinit"),
            // GDB's auto-load scripts next to an object file.
            any("*-gdb.py"),
            any("*-gdb.gdb"),
            any("*-gdb.scm"),
            any(".lldbinit"),
            home(".pythonrc"),
            home(".pythonrc.py"),
            home(".ipython/**"),
            home(".jupyter/**"),
            // Kernel specs: the argv Jupyter starts for a kernel.
            home(".local/share/jupyter/**"),
            home(".config/irb/irbrc"),
            home(".config/pry/pryrc"),
            home(".ghc/**"),
            home(".config/gdb/**"),
            home(".lldbinit-*"),
            home(".julia/config/**"),
            home(".psqlrc"),
            home(".sqliterc"),
            home(".mongoshrc.js"),
            home(".mongorc.js"),
            home(".guile"),
            home(".racketrc"),
            home(".sbclrc"),
            home(".clisprc.lisp"),
            home(".eclrc"),
            home(".ccl-init.lisp"),
            home(".tclshrc"),
            home(".wishrc"),
            home(".ammonite/**"),
        ],
    },
    Class {
        name: "per-user tool configuration under HOME",
        tools: "wget, curl, mailcap users (mutt, run-mailcap), Terraform, less, conda, \
                Podman and Buildah, Docker, Mercurial, Subversion, Maven, Go, uv, Poetry, \
                PDM, pnpm, Bun, Bundler, RubyGems, sbt, Leiningen, Clojure, NuGet, Helm, \
                krew, gh, tmux, screen, terminal emulators, desktop sessions, D-Bus, mail \
                delivery",
        why: "the tool reads it at every run, wherever it runs, and it can name a program, a \
              plugin or a server to use",
        entries: &[
            home(".wgetrc"),
            home(".curlrc"),
            home(".config/.curlrc"),
            home(".mailcap"),
            // provider_installation and dev_overrides run any provider binary.
            home(".terraformrc"),
            home(".terraform.d/**"),
            // Its #env section sets LESSOPEN, which runs on every file less opens.
            home(".lesskey"),
            home(".config/lesskey"),
            home(".less"),
            home(".condarc"),
            home(".config/conda/**"),
            home(".conda/condarc"),
            home(".conda/.condarc"),
            // containers.conf names the OCI runtime and hook directories.
            home(".config/containers/**"),
            // CLI plugins run as `docker <name>`; contexts point docker at another engine.
            home(".docker/**"),
            home(".hgrc"),
            home(".config/hg/**"),
            home(".subversion/**"),
            // The mvn script sources it as shell.
            home(".mavenrc"),
            home(".m2/**"),
            home(".gradle/**"),
            // GOFLAGS (-toolexec), GOPROXY, GOTOOLCHAIN.
            home(".config/go/env"),
            home(".config/uv/**"),
            home(".config/pypoetry/**"),
            home(".config/pdm/**"),
            home(".config/pip/**"),
            home(".pip/**"),
            home(".config/pnpm/**"),
            home(".npm-global/**"),
            home(".yarn/**"),
            home(".bundle/**"),
            home(".gemrc"),
            home(".gem/**"),
            home(".local/share/gem/**"),
            home(".sbt/**"),
            home(".lein/**"),
            home(".clojure/**"),
            home(".config/clojure/**"),
            home(".nuget/**"),
            home(".config/NuGet/**"),
            home(".config/helm/**"),
            home(".local/share/helm/**"),
            home(".krew/**"),
            // gh extensions run as `gh <name>`.
            home(".local/share/gh/**"),
            home(".tmux.conf"),
            home(".tmux/**"),
            home(".config/tmux/**"),
            home(".screenrc"),
            home(".config/kitty/**"),
            home(".config/alacritty/**"),
            home(".alacritty.toml"),
            home(".alacritty.yml"),
            home(".wezterm.lua"),
            home(".config/wezterm/**"),
            home(".config/mimeapps.list"),
            // Debian's ~/.profile puts ~/bin on PATH.
            home("bin/**"),
            // Session services D-Bus starts on the first call to their name.
            home(".local/share/dbus-1/**"),
            home(".config/plasma-workspace/**"),
            home(".config/autostart-scripts/**"),
            home(".config/i3/**"),
            home(".config/sway/**"),
            home(".config/hypr/**"),
            // A `|command` line pipes the user's mail into a program.
            home(".forward"),
            home(".procmailrc"),
            home(".rhosts"),
            home(".shosts"),
        ],
    },
    Class {
        name: "files the shell, the desktop session and their helpers source or run",
        tools: "bash-completion, sensible-editor, xdg-user-dirs, X session scripts, xrdb, \
                mutt, mamba, pyenv and rbenv default packages, hatch, file managers and \
                players with script hooks, desktop launchers",
        why: "an interactive shell, a session start or an ordinary command sources it as \
              shell or runs what it names, without being asked",
        entries: &[
            // Sourced by bash-completion in every interactive bash (Debian's ~/.bashrc).
            home(".bash_completion"),
            home(".bash_completion.d/**"),
            home(".local/share/bash-completion/**"),
            // `sensible-editor` (crontab -e, visudo) sources it as shell.
            home(".selected_editor"),
            // `xdg-user-dir` sources it as shell.
            home(".config/user-dirs.dirs"),
            home(".config/user-dirs.conf"),
            home(".xsessionrc"),
            home(".xinputrc"),
            home(".xserverrc"),
            // xrdb runs the C preprocessor on it at session start.
            home(".Xresources"),
            home(".Xdefaults"),
            home(".config/openbox/**"),
            home(".kde/Autostart/**"),
            home(".kde4/Autostart/**"),
            home(".config/lxsession/**"),
            home(".config/xfce4/**"),
            // Launchers: a double click or a MIME association runs their Exec line.
            home(".local/share/applications/**"),
            // Backticks run commands when mutt reads it.
            home(".muttrc"),
            home(".mutt/**"),
            home(".config/mutt/**"),
            home(".mambarc"),
            home(".config/mamba/**"),
            // pyenv, rbenv and nodenv install these into every new interpreter.
            home(".default-python-packages"),
            home(".default-gems"),
            home(".default-npm-packages"),
            home(".config/hatch/**"),
            // Sourced by the distributions' bashrc.d and ZDOTDIR schemes.
            home(".bashrc.d/**"),
            home(".config/bash/**"),
            home(".config/zsh/**"),
            home(".zsh/**"),
            home(".local/share/fish/**"),
            // Script, plugin and alias hooks run by the tool at start.
            home(".config/mpv/**"),
            home(".config/lf/**"),
            home(".config/ranger/**"),
            home(".config/k9s/**"),
            home(".config/glab-cli/**"),
            home(".config/htop/**"),
        ],
    },
    Class {
        name: "lint, format and type-check tools' configuration that is code",
        tools: "ESLint, Prettier, Stylelint, Babel, PostCSS, commitlint, lint-staged, Pylint, \
                mypy, coverage.py",
        why: "the tool runs the file as code, or a plugin or hook it names, each time it \
              lints, formats or checks, for commands that would not otherwise run the \
              project's code",
        // Not here: a test runner's configuration (`jest.config.*`, `vitest.config.*`,
        // `.mocharc.*`), because testing runs the project's code anyway; a virtualenv's
        // `bin/` and `node_modules/.bin/`, because every install writes them (holding them
        // would hold every `pip install` and `npm install` of a contained run) and an
        // install runs the packages' code anyway. The skill review treats both as project
        // code a package must not write (`cordon-skill` `review/project.rs`).
        entries: &[
            // JavaScript configuration files are modules the tool imports and runs.
            any("eslint.config.*"),
            any(".eslintrc.js"),
            any(".eslintrc.cjs"),
            any(".eslintrc.mjs"),
            any("prettier.config.*"),
            any(".prettierrc.js"),
            any(".prettierrc.cjs"),
            any(".prettierrc.mjs"),
            any("stylelint.config.*"),
            any(".stylelintrc.js"),
            any(".stylelintrc.cjs"),
            any(".stylelintrc.mjs"),
            any("babel.config.*"),
            any(".babelrc.js"),
            any(".babelrc.cjs"),
            any("postcss.config.*"),
            any("commitlint.config.*"),
            any("lint-staged.config.*"),
            any(".lintstagedrc.js"),
            // Pylint's init-hook is Python; load-plugins, like mypy's and coverage's
            // plugins, imports modules of the project.
            any(".pylintrc"),
            any("pylintrc"),
            any("mypy.ini"),
            any(".mypy.ini"),
            any(".coveragerc"),
        ],
    },
];
