//! The netcode-proto fuzz targets ([`targets`]) and the pieces they share:
//! a forgiving input cursor ([`Cursor`]), the golden vectors' keys for the
//! wire-level targets ([`vectors`]), and for the session targets a session
//! built once on the core's scenario world ([`session`]), sealed packets
//! ([`seal`]) and clocks that take any time ([`clock`]).
//!
//! Nothing here reads the fuzz input with `unwrap`: the cursor returns zeros
//! once the input runs out. The only panics are harness assertions about
//! setup that does not depend on the input, and the invariants the targets
//! check on purpose.

pub mod clock;
mod cursor;
pub mod seal;
pub mod session;
pub mod targets;
pub mod vectors;

pub use cursor::Cursor;
