//! The golden-vector tests, one binary: `suite` holds the checks every
//! conforming vector set must pass, `golden` runs them over the C
//! reference's set (`NETCODE_REFERENCE_VECTORS`) and our committed copy,
//! `generated` over a set `netcode_vectors::generate` makes for each test
//! in a temporary directory of its own.

mod suite;

mod generated;
mod golden;
