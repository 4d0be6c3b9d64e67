//! netcode-tokio's integration tests, one binary: each file of this
//! directory is a module, `common` holds the workspace's fixtures, servers
//! on loopback and the bound on every wait.
//!
//! Every socket binds port 0, and each `#[tokio::test]` has a runtime of
//! its own. Servers start with `start_nowait` (of the netcode-std server
//! inside) and the tests issue their tokens as of the second it returns,
//! but for the one whose token the official port makes with its own
//! clock (`official`), whose server waits in the async `start`.

mod common;

mod cancel;
mod idle;
mod lifecycle;
mod official;
mod reconnect;
mod udp;
