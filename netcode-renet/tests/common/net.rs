//! The transports on netcode-std's in-memory network
//! (`transport::memory`, on netcode-proto's seeded network simulator):
//! servers and clients bound at 127.0.0.1 (each socket keeps the unique
//! address the OS gave it), whose datagrams the network loses, delays,
//! reorders or duplicates as its `SimConfig` says, the same way each run.

use std::net::SocketAddr;

pub use netcode_renet::netcode_std::transport::memory::{
    MemoryNetwork as Net, MemorySocket, SimConfig,
};
use netcode_renet::netcode_std::{BindMode, Client, ClientConfig, Server, ServerConfig};
use netcode_renet::{NetcodeClientTransport, NetcodeServerTransport};

/// A netcode server on `net` at 127.0.0.1 (bound exactly, so its socket's
/// address is the one tokens list), started with `slots` slots.
pub fn server(net: &Net, mut config: ServerConfig, slots: usize) -> Server<MemorySocket> {
    config.bind_mode = BindMode::Exact;
    let mut server = Server::bind_with("127.0.0.1:0", None::<&str>, config, net.adopt()).unwrap();
    server.start(slots).unwrap();
    server
}

/// A netcode client on `net` at 127.0.0.1.
pub fn client(net: &Net) -> Client<MemorySocket> {
    Client::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        ClientConfig::default(),
        net.adopt(),
    )
    .unwrap()
}

/// A server transport on `net` with `slots` slots, with the test key, and
/// its public address.
pub fn server_transport(
    net: &Net,
    slots: usize,
) -> (NetcodeServerTransport<MemorySocket>, SocketAddr) {
    let host = server(
        net,
        ServerConfig::new(super::PROTOCOL_ID, super::key()),
        slots,
    );
    let address = host.public_address();
    (NetcodeServerTransport::from_server(host), address)
}

/// A client transport on `net`, connecting as `client_id` to `server`.
pub fn client_transport(
    net: &Net,
    client_id: u64,
    server: SocketAddr,
) -> NetcodeClientTransport<MemorySocket> {
    let mut host = client(net);
    host.connect(&super::token(client_id, server)).unwrap();
    NetcodeClientTransport::from_client(host)
}
