//! Shared pieces of the real-UDP tests: the workspace's test fixtures
//! (`support/test-fixtures`: the reference tests' key and protocol id,
//! tokens, payload patterns, loops that always end).
#![allow(unused_imports, unreachable_pub)]

pub use test_fixtures::*;
