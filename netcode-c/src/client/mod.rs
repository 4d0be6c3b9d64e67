//! The client API of `netcode.h`: the object and how each call reaches it
//! ([`object`]), making and destroying it ([`create`]), and the rest of
//! the calls ([`calls`]).

mod calls;
mod create;
mod object;

pub use calls::*;
pub use create::*;
pub use object::netcode_client_t;
