//! Connect tokens and challenge tokens.
//!
//! STANDARD.md: *Connect Token*, *Challenge Token*.
//!
//! * [`ConnectToken`]: the 2048-byte public token a web backend hands to a
//!   client, made by [`generate_connect_token`].
//! * [`PrivateConnectToken`]: the part only the backend and the dedicated
//!   servers can read, sealed inside the public token with XChaCha20-Poly1305.
//! * [`ChallengeToken`]: what a server sends a client during the handshake to
//!   prove the client owns its address.

mod challenge;
mod connect;
mod error;
mod generate;
mod private;

pub use challenge::ChallengeToken;
pub use connect::ConnectToken;
pub use error::TokenError;
pub use generate::{ConnectTokenParams, generate_connect_token};
pub use private::{PrivateConnectToken, private_token_associated_data};
