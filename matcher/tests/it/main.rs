//! The matcher's integration tests, in one test binary: the `matcher`
//! program started on loopback (`end_to_end`, `metrics`, `rate_limits`,
//! `storm`, `fleet_program`), the fleet source against a fake Agones
//! allocator (`fleet`), and the Kubernetes manifests (`deploy_manifests`).
//! `common` is their shared harness.
//!
//! The tests run on parallel threads of one process, so none of them may
//! lean on state a process has once: each program they start gets its own
//! files and ports (port 0) and a `RUST_LOG` of its own (none: the
//! program's default), and the open-file limit the storm raises only grows.

mod common;
mod deploy_manifests;
mod end_to_end;
mod fleet;
mod fleet_program;
mod metrics;
mod rate_limits;
mod storm;
