//! Loopback clients: a client in the same process as its server (a listen
//! server's own player), connected without packets, keep-alives or timeouts.
//!
//! The C library hands each loopback payload to a callback the application
//! sets. Here each side keeps what it sends to a loopback peer in an outbox
//! instead: [`Server::poll_loopback_packet`] and
//! [`Client::poll_loopback_packet`] drain them, and
//! `process_loopback_packet` on the other side delivers.
//! [`transfer_loopback`] does both directions for one server and one
//! client, through those public methods only.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use netcode_std::{Client, Server, ServerConfig, proto::Key, transfer_loopback};
//!
//! let mut server = Server::new("127.0.0.1:0", ServerConfig::new(1, Key::from_bytes([1; 32])))?;
//! server.start(4)?;
//! server.connect_loopback_client(0, 42, None)?;
//! let mut client = Client::new("127.0.0.1:0")?;
//! client.connect_loopback(0, 4)?;
//!
//! client.send_packet(b"hello")?;
//! transfer_loopback(&mut server, &mut client);
//! let packet = server.receive_packet(0).expect("delivered");
//! assert_eq!(packet.data(), b"hello");
//! server.free_packet(packet);
//! # Ok(()) }
//! ```

use crate::client::Client;
use crate::server::Server;
use crate::transport::Socket;

/// Moves every pending loopback payload between `server` and `client`, in
/// both directions: what the client sent goes to its slot on the server,
/// and what the server sent to that slot goes to the client. Payloads the
/// server holds for other slots stay where they are. Returns how many
/// payloads were delivered.
pub fn transfer_loopback<S: Socket, C: Socket>(
    server: &mut Server<S>,
    client: &mut Client<C>,
) -> usize {
    let mut delivered = 0;
    if !client.loopback() {
        return delivered;
    }
    let index = client.client_index();
    while let Some(packet) = client.poll_loopback_packet() {
        if server
            .process_loopback_packet(index, packet.data(), packet.sequence())
            .is_ok()
        {
            delivered += 1;
        }
        client.free_packet(packet);
    }
    while let Some(packet) = server.poll_loopback_packet(index) {
        if client
            .process_loopback_packet(packet.data(), packet.sequence())
            .is_ok()
        {
            delivered += 1;
        }
        server.free_packet(packet);
    }
    delivered
}
