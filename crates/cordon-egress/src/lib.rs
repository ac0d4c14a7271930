//! cordon-egress
