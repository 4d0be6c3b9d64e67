//! The transports on netcode-std's in-memory network
//! (`transport::memory`, on netcode-proto's seeded network simulator),
//! over the servers and clients `test_fixtures::memory` makes: bound at
//! 127.0.0.1 (each socket keeps the unique address the OS gave it), whose
//! datagrams the network loses, delays, reorders or duplicates as its
//! `SimConfig` says, the same way each run.

use std::net::SocketAddr;

use netcode_renet::netcode_std::ServerConfig;
use netcode_renet::{NetcodeClientTransport, NetcodeServerTransport};
use test_fixtures::AdmittedFrom;
use test_fixtures::memory::{memory_client, memory_server};

pub use test_fixtures::memory::{MemoryNetwork as Net, MemorySocket, SimConfig};

/// The server a client transport connects to: its public address, and the
/// second its tokens are issued at.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub address: SocketAddr,
    pub admitted: AdmittedFrom,
}

/// A server transport on `net` with `slots` slots, with the test key,
/// started without waiting for the wall clock; and where its clients
/// connect.
pub fn server_transport(net: &Net, slots: usize) -> (NetcodeServerTransport<MemorySocket>, Target) {
    let config = ServerConfig::new(super::PROTOCOL_ID, super::key());
    let (host, admitted) = memory_server(net, config, slots);
    let address = host.public_address();
    let target = Target { address, admitted };
    (NetcodeServerTransport::from_server(host), target)
}

/// A client transport on `net`, connecting as `client_id` to `server`.
pub fn client_transport(
    net: &Net,
    client_id: u64,
    server: Target,
) -> NetcodeClientTransport<MemorySocket> {
    let mut host = memory_client(net);
    host.connect(&super::token(server.admitted, client_id, server.address))
        .unwrap();
    NetcodeClientTransport::from_client(host)
}
