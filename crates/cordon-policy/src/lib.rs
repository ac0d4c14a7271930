//! cordon-policy: the pure decision core. A tool call goes in, a verdict comes out.
//!
//! This crate decides what an agent may *ask* for; it never spawns a process, opens a
//! socket or writes a file. File-system facts come through [`FileFacts`], so the whole
//! decision order can be tested against a [`FakeFs`]. Containment, which holds even when
//! a decision here is wrong, lives in `cordon-sandbox` and `cordon-egress`.
//!
//! ```
//! use cordon_policy::{Decision, FakeFs, LoadOptions, Policy, Request};
//! let fs = FakeFs::new().dir("/w/proj/src").dir("/home/u/.ssh").file("/home/u/.ssh/id_rsa");
//! let opts = LoadOptions { workspace: "/w/proj".into(), home: "/home/u".into(),
//!                          skip_default_files: true, ..Default::default() };
//! let policy = Policy::load(&opts, &fs).unwrap();
//! let req = Request::from_json(r#"{"tool":"Read","input":{"file_path":"~/.ssh/id_rsa"}}"#).unwrap();
//! assert_eq!(policy.decide(&req, &fs).decision, Decision::Deny);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod config;
pub mod credential;
pub mod duration;
pub mod errors;
pub mod facts;
pub mod fingerprint;
pub mod gitallow;
pub mod gitconfig;
mod glob;
pub mod guards;
pub mod import;
pub mod judgement;
pub mod label;
pub mod links;
pub mod mcp;
pub mod net;
pub mod obeyed;
pub mod ops;
pub mod paths;
pub mod planted;
pub mod policy;
pub mod presets;
pub mod request;
pub mod rules;
mod search;
pub mod secret_files;
pub mod secrets;
pub mod session;
pub mod settings;
pub mod state_dir;
pub mod suggest;
pub mod surface;
pub mod terminal;
pub mod time;
pub mod toolset;
pub mod twins;
pub mod vcs;
pub mod verdict;

pub use config::{ConfigError, Defaults, LoadOptions, Mode};
pub use errors::{
    AttenuationError, ParseApprovalPolicyError, ParseDecisionError, ParseModeError,
    ParseRequiredTierError, ParseSandboxModeError,
};
pub use facts::{FakeFs, FileFacts, FileKind, FileMeta, RealFs};
pub use judgement::{Allowed, ApprovalProof, Containment, Judgement};
pub use ops::OpKind;
pub use paths::Location;
pub use policy::{Attenuation, Policy};
pub use request::{Action, Request, RequestError, ToolKind};
pub use settings::{ApprovalPolicy, NetworkSettings, RequiredTier, SandboxMode, SandboxSettings};
pub use surface::Surface;
pub use verdict::{Decision, Finding, Source, Step, Verdict};
