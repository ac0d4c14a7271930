//! Network normalization shared by the policy and the egress proxy (being built).
