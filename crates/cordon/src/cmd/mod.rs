//! One module per subcommand: each defines its clap arguments and a `run` function.

pub mod action;
pub mod approvals;
pub mod audit;
pub mod changes;
pub mod check;
pub mod docs;
pub mod doctor;
pub mod exec;
pub mod hook;
pub mod import;
pub mod label;
pub mod mcp;
pub mod mcp_gateway;
pub mod proxy;
pub mod review_toolset;
pub mod serve;
pub mod sessions;
pub mod setup;
pub mod size;
pub mod skill;
pub mod slots;
pub mod ui;
