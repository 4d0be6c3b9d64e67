//! A scope in which a server's or client's datagrams wait to leave
//! together, in as few system calls as the socket allows.

use core::ops::{Deref, DerefMut};

/// Hosts that can hold their datagrams for a [`Batch`]: [`Server`](crate::Server)
/// and [`Client`](crate::Client), and a transport's wrapper around one
/// (netcode-tokio's), which forwards to the host inside.
pub trait Batching {
    /// Starts holding datagrams, or stops and sends what is held: what a
    /// [`Batch`] does when it begins and ends. Call [`Batch::new`] rather
    /// than this.
    fn set_batching(&mut self, on: bool);
}

/// A server or client whose datagrams are held while this lives and sent
/// together when it ends (or whenever a full batch is waiting), from
/// [`Server::batch`](crate::Server::batch) or
/// [`Client::batch`](crate::Client::batch). It dereferences to the server
/// or client, so every method works inside the scope.
///
/// Outside a batch, each call sends its datagrams before it returns.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use netcode_std::{Server, ServerConfig, proto::Key};
/// # let mut server = Server::new("127.0.0.1:40000", ServerConfig::new(1, Key::from_bytes([1; 32])))?;
/// let mut batch = server.batch();
/// for index in 0..batch.max_clients() {
///     if batch.client_connected(index) {
///         batch.send_packet(index, b"snapshot")?;
///     }
/// }
/// drop(batch); // one sendmmsg per 32 datagrams on Linux
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "datagrams are held until the batch is dropped"]
pub struct Batch<'a, T: Batching> {
    host: &'a mut T,
}

impl<'a, T: Batching> Batch<'a, T> {
    /// Holds `host`'s datagrams until the batch is dropped.
    pub fn new(host: &'a mut T) -> Self {
        host.set_batching(true);
        Self { host }
    }
}

impl<T: Batching> Deref for Batch<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.host
    }
}

impl<T: Batching> DerefMut for Batch<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.host
    }
}

impl<T: Batching> Drop for Batch<'_, T> {
    /// Sends every datagram the scope held.
    fn drop(&mut self) {
        self.host.set_batching(false);
    }
}
