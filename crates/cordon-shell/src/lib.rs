//! cordon-shell
