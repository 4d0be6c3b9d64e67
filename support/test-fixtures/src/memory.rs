//! Servers and clients on netcode-std's in-memory network
//! (`transport::memory`, on netcode-proto's seeded network simulator), as
//! the host tests of netcode-std and netcode-renet make them: bound at
//! 127.0.0.1 (each socket keeps the unique address the OS gave it), the
//! server exactly, so that its socket's address is the public address
//! clients send to.

use netcode_std::{BindMode, Client, ClientConfig, Server, ServerConfig};

pub use netcode_std::transport::memory::{MemoryNetwork, MemorySocket, SimConfig};

use crate::admitted::{AdmittedFrom, start_nowait};

/// A server on `net` at 127.0.0.1 with `config` (bound exactly) and
/// `slots` slots, started without waiting for the wall clock; and the
/// second its tokens are to be issued at.
pub fn memory_server(
    net: &MemoryNetwork,
    config: ServerConfig,
    slots: usize,
) -> (Server<MemorySocket>, AdmittedFrom) {
    let mut config = config;
    config.bind_mode = BindMode::Exact;
    let mut server = Server::bind_with("127.0.0.1:0", None::<&str>, config, net.adopt())
        .unwrap_or_else(|e| panic!("a server on the memory network: {e}"));
    let admitted = start_nowait(&mut server, slots);
    (server, admitted)
}

/// A client on `net` at 127.0.0.1.
pub fn memory_client(net: &MemoryNetwork) -> Client<MemorySocket> {
    Client::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        ClientConfig::default(),
        net.adopt(),
    )
    .unwrap_or_else(|e| panic!("a client on the memory network: {e}"))
}
