//! cordon-store
