//! netcode-metrics' integration tests, in one test binary: snapshots
//! encoded as a scrape encodes them (`encoding`), a real netcode-std server
//! recorded (`server`), the scrape endpoint over loopback HTTP
//! (`endpoint`), the bounded HTTP server under it (`http`), and recording
//! without allocating (`no_alloc`). `common` is their shared reading of
//! the text format, and their netcode servers' start.
//!
//! The tests run on parallel threads of one process. The counting
//! allocator below is the whole binary's, and counts each thread apart, so
//! that one test's allocations never show in another's count.

mod common;
mod encoding;
mod endpoint;
mod http;
mod no_alloc;
mod server;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;
