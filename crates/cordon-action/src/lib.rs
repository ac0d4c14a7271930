//! cordon-action: review a structured action request against an explicit action policy,
//! without running anything.
//!
//! An agent that wants something done beyond a plain tool call describes it as an
//! [`ActionRequest`]: who asks, which capability, the exact argv, every path with the
//! access it needs (read, create, overwrite, delete), every origin it will reach, the
//! credentials it needs, the kind of side effect, a reason and, for external writes, an
//! idempotency key. [`review`] judges it against an [`ActionPolicy`] and returns a
//! [`Review`]: `allow`, `ask` (with the approvals a human must give, each naming the
//! actual target and consequence) or `deny`, with every reason.
//!
//! This crate never spawns a process, opens a socket or writes a file: it reads file
//! metadata (through [`cordon_policy::FileFacts`]) to resolve paths, nothing more.
//! [`Profile`] is the containment a run of an accepted request gets, derived from the
//! request itself; running it (approval, revalidation, the sandbox, merging back only the
//! declared paths) is `cordon_gate::action`'s business.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod policy;
mod request;
mod review;

pub use policy::{ActionLimits, ActionPolicy, CodeFlags, PolicyError, Redirects};
pub use request::{
    Access, ActionRequest, MAX_REQUEST_BYTES, NetworkUse, PathUse, RequestError, SideEffect,
};
pub use review::{Approval, Profile, Review, review};
