//! The examples' integration tests, in one test binary: each module tests
//! some of the example programs, run as the `netcode-*` binaries that
//! share their source (`common::Program` starts them), or the shared
//! library code they use.
//!
//! One binary rather than one per file: the package links once for its
//! tests, not ten times. The modules share its process, so none of them
//! changes what the others see: no test sets an environment variable, a
//! signal handler or the working directory of the test process (signals
//! go to the programs under test, whose environment `Program` sets);
//! every server binds port 0 but `crash`'s and `browser_reconnect`'s, which
//! pick free ports below the ephemeral range so that no client socket of
//! another test takes them between a kill and the restart; temporary files
//! are named by test.

mod common;

mod browser;
mod browser_blocked;
mod browser_reconnect;
mod crash;
mod fetch_token;
mod help;
mod interrupt;
mod matcher_client;
mod metrics;
mod programs;
mod reference;
mod restart_rule;
