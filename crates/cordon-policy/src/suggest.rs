//! Narrow rule suggestions for "always allow" (being built).
