//! cordon-policy: the pure decision core. A tool call goes in, a verdict comes out.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod guards;
pub mod settings;
pub mod net;
pub mod suggest;
