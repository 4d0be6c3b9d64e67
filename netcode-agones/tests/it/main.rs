//! netcode-agones' tests, in one binary: the link to the sidecar on its own
//! (`link`), player tracking against the sidecar's refusals (`players`),
//! and the server binary run as a child process on a fake
//! sidecar (`lifecycle`, `sidecar`, `signals`, `browsers`), and a browser
//! allocated from a fleet by the matcher, in headless Chromium
//! (`fleet_browser`). `fake_sdk` is the fake
//! Agones SDK server; `harness` runs the binary and its players.
//!
//! Each test has its own fake sidecar, ports and processes; nothing is
//! shared between tests but the binary under test.

mod fake_sdk;
mod harness;

mod browsers;
mod fleet_browser;
mod lifecycle;
mod link;
mod players;
mod sidecar;
mod signals;
