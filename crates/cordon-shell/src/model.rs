//! The analysis result: cordon's own description of what a piece of shell text runs.
//!
//! These types are the contract between the analyzer and the policy. They carry no
//! parser types, so a parser upgrade never reaches them.

use serde::Serialize;

/// Everything the analyzer found in one piece of shell text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Analysis {
    /// Every simple command found, in source order, recursively: command and process
    /// substitutions, `bash -c` bodies, heredocs fed to a shell, function bodies at
    /// their call sites, and so on.
    pub commands: Vec<SimpleCommand>,
    /// Set when any part of the text (the top level or a nested string analyzed as
    /// shell) failed to parse, or was nested too deeply to parse safely. A policy must
    /// never allow such text.
    pub parse_error: Option<String>,
    /// Dangerous shapes recognised across commands.
    pub hazards: Vec<Hazard>,
}

impl Analysis {
    /// True when some command is not fully visible: a parse error, a dynamic word, an
    /// unknown program or an argument that executes other code.
    #[must_use]
    pub fn has_opaque_parts(&self) -> bool {
        self.parse_error.is_some()
            || self.commands.iter().any(|c| {
                !c.dynamic.is_empty()
                    || c.effects.class == Class::Unknown
                    || !c.effects.executes.is_empty()
            })
    }
}

/// One simple command: a program with its arguments, assignments and redirections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SimpleCommand {
    /// The command as written, truncated if very long.
    pub text: String,
    /// The program after wrappers were peeled; `None` for a command that only assigns
    /// variables or only redirects.
    pub program: Option<Word>,
    /// `argv[1..]` of the peeled program.
    pub args: Vec<Word>,
    /// Variable assignments placed before the command (or given to `env`).
    pub assignments: Vec<(String, Word)>,
    /// Redirections of this command, including those of an enclosing compound command.
    pub redirects: Vec<Redirect>,
    /// Wrappers that were peeled off, outermost first (`sudo`, `env`, `timeout`, ...).
    pub wrappers: Vec<String>,
    /// How this command is reached.
    pub context: Context,
    /// The working directory the command runs in, relative to the starting directory.
    pub cwd: CwdChange,
    /// Why the text alone cannot fix what this command does. Empty when it can.
    pub dynamic: Vec<Dynamic>,
    /// What the program does with its arguments, from the program knowledge base.
    pub effects: Effects,
    /// True when the program is a function defined earlier in the same text; its body's
    /// commands are reported separately with [`Context::FunctionBody`].
    pub function_call: bool,
}

impl SimpleCommand {
    /// True when this command is not written in the call's own text but run by another
    /// program from code it was handed: a string run as shell code (`bash -c`, `eval`,
    /// `git -c core.pager=…`, a Makefile's recipe, interpreter code), a here-document fed
    /// to a shell, an alias's value, a `find -exec` argument. A remembered rule never
    /// names such a program: the human was shown the program that runs it.
    #[must_use]
    pub fn in_code(&self) -> bool {
        matches!(
            self.context,
            Context::ShellString | Context::Heredoc | Context::Alias | Context::ExecArgument
        )
    }
}

/// A word after quote removal and escape decoding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Word {
    /// The decoded text. A leading `~`, `$HOME` or `${HOME}` is normalised to `~`.
    /// Parts whose value is only known at run time are kept as written (`$X`, `$(…)`).
    pub value: String,
    /// False when the value at run time can differ from `value`.
    pub literal: bool,
}

impl Word {
    /// A literal word.
    #[must_use]
    pub fn literal(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            literal: true,
        }
    }
}

/// One redirection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// The file descriptor written before the operator (`2>`), if any.
    pub fd: Option<u32>,
    /// The operator.
    pub kind: RedirectKind,
    /// The target: a file name, a descriptor number (for duplication), a here-document
    /// body or a here-string.
    pub target: Word,
}

/// Redirection operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum RedirectKind {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `&>` (and `>&FILE`)
    WriteBoth,
    /// `&>>`
    AppendBoth,
    /// `<&N`
    DupIn,
    /// `>&N`
    DupOut,
    /// `>&-` / `<&-`
    Close,
    /// `<<` / `<<-`
    HereDoc,
    /// `<<<`
    HereString,
}

impl RedirectKind {
    /// True for operators that create or modify the target file.
    #[must_use]
    pub fn writes_file(self) -> bool {
        matches!(
            self,
            Self::Write
                | Self::Append
                | Self::Clobber
                | Self::ReadWrite
                | Self::WriteBoth
                | Self::AppendBoth
        )
    }

    /// True for operators that read the target file.
    #[must_use]
    pub fn reads_file(self) -> bool {
        matches!(self, Self::Read | Self::ReadWrite)
    }
}

/// How a command is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Context {
    /// Written directly in the text (including inside groups, loops and conditionals).
    TopLevel,
    /// Inside `$(…)` or backticks.
    CommandSubstitution,
    /// Inside `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// Inside `( … )`.
    Subshell,
    /// A string run as shell code: `bash -c`, `eval`, `source` of a literal, `watch`,
    /// `su -c`, `trap`, `env -S`, an option whose value is a command
    /// (`git -c core.pager=…`, `rsync -e …`, `tar --to-command=…`), a literal command
    /// in interpreter code (`os.system("…")`), a Makefile's recipes.
    ShellString,
    /// A here-document or here-string fed to a shell, or literal text piped to one
    /// (`echo 'ls' | sh`).
    Heredoc,
    /// The body of a function defined in the text.
    FunctionBody,
    /// The value of an alias defined in the text.
    Alias,
    /// A command run by another program's argument (`find -exec`, `fd -x`).
    ExecArgument,
}

/// The working directory of a command relative to the directory the text starts in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum CwdChange {
    /// No `cd` before this command.
    Unchanged,
    /// Accumulated `cd` operands: `sub/dir`, `~/x`, `/abs`, `sub/..`.
    Relative(String),
    /// A `cd` to a target only known at run time.
    Dynamic,
}

/// Why a command's behaviour cannot be fixed from the text alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Dynamic {
    /// A parameter expansion whose value the text does not fix (`$X` of an inherited
    /// or run-time variable, `${x@P}` of one, `$1`), as written.
    ParameterExpansion(String),
    /// A command substitution inside a word.
    CommandSubstitution,
    /// A process substitution used as a word.
    ProcessSubstitution,
    /// An arithmetic expansion.
    Arithmetic,
    /// A word with unquoted glob characters: its pattern after expansion, in bash
    /// pattern syntax with the characters that were quoted escaped by a backslash, and
    /// a leading `~` for the home directory (see [`crate::pattern`]).
    Glob(String),
    /// A brace expansion too large to evaluate, as written.
    BraceExpansion(String),
    /// A `~user` (or `~+`, `~-`) prefix, as written.
    TildeUser(String),
    /// The program name is not a literal word.
    NonLiteralProgram,
    /// The command name is a function defined earlier in the text that shadows a
    /// real command.
    ShadowedByFunction(String),
    /// The command name is an alias defined earlier in the text.
    ShadowedByAlias(String),
    /// The arguments are supplied at run time (`xargs`, `parallel`).
    RuntimeArguments(String),
    /// Nesting exceeded the analysis depth limit; the nested part was not analyzed.
    TooDeep,
    /// Something else the analyzer cannot see through, with a reason.
    Opaque(String),
}

/// The effects of one program invocation, from the program knowledge base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effects {
    /// The overall class.
    pub class: Class,
    /// Paths the program reads, as written (`~`-normalised).
    pub reads: Vec<Word>,
    /// Paths the program creates or modifies through its arguments (redirect targets
    /// are not repeated here).
    pub writes: Vec<Word>,
    /// Paths the program deletes.
    pub deletes: Vec<Word>,
    /// Destinations among the writes that may be directories the program fills with
    /// files it names itself: a copy's or move's destination, an archive's extraction
    /// directory, the tree a patch changes. Whatever lies beneath them may be new.
    pub fills: Vec<Word>,
    /// The program rewrites files of the work tree it runs in that its text does not
    /// name (`git checkout BRANCH`, `git merge`, `git stash pop`): which files is known
    /// only at run time. Says what it does, in a few words.
    pub unnamed_writes: Option<String>,
    /// Literal (or not) network targets.
    pub network: Vec<NetTarget>,
    /// The program reaches the network and no literal target is visible.
    pub network_unknown_target: bool,
    /// Arguments that make the program run other code.
    pub executes: Vec<ExecArg>,
    /// Whether the program runs programs configured by the repository.
    pub runs_repo_config: RepoConfigUse,
    /// Why the command gains privilege, if it does.
    pub privilege: Option<String>,
    /// Variables exported here that steer later execution (`LD_PRELOAD`, `PATH`, ...).
    pub influences_env: Vec<String>,
    /// The program prints or inspects the environment (`env`, `printenv`).
    pub reads_env: bool,
    /// Paths named inside code the analysis does not follow: string literals of
    /// `python3 -c` code, an awk program or an SQL statement, and path-like arguments
    /// handed to a script. Whether the code reads or writes them is not known, so the
    /// policy checks them against its guards only (a credential read, a protected
    /// write) and never asks about them otherwise.
    pub mentions: Vec<Word>,
    /// Programs the program runs by itself to do its own job, named by no argument
    /// (`tar -z` runs `gzip` through `sh -c`, `zgrep` runs `gzip` and `grep`, `scp`
    /// runs `ssh`). The policy names them and judges them by deny rules alone.
    pub helpers: Vec<String>,
    /// For git: the directory it starts from (`.`, or `-C DIR`). git works on the whole
    /// repository that contains it, found upwards, and maintains that repository's
    /// `.git` (index, objects, refs) by itself; the policy, which sees the file system,
    /// names both.
    pub git_repository: Option<Word>,
    /// For git: the subcommand refreshes the index's stat cache while it reads (`status`,
    /// `diff`, `describe --dirty`), and rewrites `.git/index` through `.git/index.lock`
    /// whenever it can take the lock. `--no-optional-locks` and `GIT_OPTIONAL_LOCKS=0`
    /// turn that off. The policy names the write (git's `optional locks`).
    pub git_refreshes_index: bool,
    /// Files the program reads by itself, named by no argument: its configuration,
    /// start-up and credential files (`git` reads `~/.gitconfig`, `wget` reads
    /// `~/.netrc`, `bash -l` runs `~/.profile`). The policy judges them apart from the
    /// reads the text asks for (see `cordon-policy`'s `ops`).
    pub config_reads: Vec<Word>,
    /// The code behind [`Effects::mentions`] may write files: it has a write-mode open,
    /// a write, delete, rename or copy call, or runs commands, or it is not visible at
    /// all (a script's arguments). When false, mentions are checked as reads only.
    pub mentions_may_write: bool,
}

impl Default for Effects {
    fn default() -> Self {
        Self {
            class: Class::Unknown,
            reads: Vec::new(),
            writes: Vec::new(),
            deletes: Vec::new(),
            fills: Vec::new(),
            unnamed_writes: None,
            network: Vec::new(),
            network_unknown_target: false,
            executes: Vec::new(),
            runs_repo_config: RepoConfigUse::None,
            config_reads: Vec::new(),
            git_repository: None,
            git_refreshes_index: false,
            helpers: Vec::new(),
            privilege: None,
            influences_env: Vec::new(),
            reads_env: false,
            mentions: Vec::new(),
            mentions_may_write: false,
        }
    }
}

/// The overall class of a program invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Class {
    /// Known program, invoked in a form that only reads. A shell given a literal
    /// string (`bash -c '…'`, `eval '…'`, `watch '…'`) and a call to a function defined
    /// in the text are read-only themselves: the commands they run are reported as
    /// commands of their own.
    ReadOnly,
    /// Known program that writes, deletes, executes other code or reaches the network.
    Mutating,
    /// Not in the knowledge base, or invoked in a form it does not model.
    Unknown,
}

/// A network target named in the arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetTarget {
    /// A URL or `host[:port]` as written.
    pub target: String,
    /// False when part of the target is only known at run time.
    pub literal: bool,
}

/// An argument that makes a program run other code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecArg {
    /// The program that runs the code.
    pub program: String,
    /// The argument that does it (`-exec`, `--pre`, `-c`, `e`, `system()`, `script`).
    pub arg: String,
    /// True when running code is the program's own purpose (`make`, `cargo test`,
    /// `npm run`): an allow rule naming the program covers it.
    pub own_purpose: bool,
    /// What is run, as far as the text shows.
    pub detail: String,
}

/// Whether a program runs programs configured by the repository it works in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum RepoConfigUse {
    /// It does not.
    None,
    /// Only when the repository's configuration says so (`git status`, `git diff`,
    /// `git log -p`): the policy should check `.git/config`.
    IfConfigured,
    /// Always may (git subcommands that run hooks: `commit`, `checkout`, `pull`, ...).
    Always,
}

/// A dangerous shape recognised across commands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hazard {
    /// Which shape.
    pub kind: HazardKind,
    /// The offending text.
    pub text: String,
    /// One sentence on what was recognised.
    pub detail: String,
}

/// Kinds of hazard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum HazardKind {
    /// Network output piped, substituted or process-substituted into an interpreter,
    /// or written to a file that is then run.
    FetchToExec,
    /// Text that is decoded or transformed first (`base64 -d`, `xxd -r`, `rev`, `tr`,
    /// `gunzip`, `printf '\x…'`) and then piped, substituted or written to a file that
    /// an interpreter runs: the code that runs is not the text a reader sees.
    DecodeToExec,
    /// A lookup tool whose host name contains a substitution or expansion.
    DnsExfiltration,
    /// The command gains privilege or asks an agent CLI to drop its safeguards.
    PrivilegeEscalation,
}
