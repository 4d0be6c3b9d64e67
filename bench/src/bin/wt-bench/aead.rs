//! `wt-bench aead`: the AEAD part of one echo, in this process
//! (`netcode_bench::seal_open`: one seal and one open of a 100-byte payload
//! packet body through netcode-proto's own crypto functions, on the backend
//! the build compiled in, ring by default), timed as this thread's time on
//! a CPU over `--iterations` pairs after a warm-up: the same figure as the
//! UDP bench's AEAD row.

use netcode_bench::cli::Options;
use netcode_bench::machine::load1;
use netcode_bench::seal_open::ours_micros_per_pair;
use netcode_proto::crypto;

use crate::options::ResultLine;

/// Pairs run untimed first.
const WARM_UP: u64 = 20_000;

pub(crate) fn run(mut options: Options) -> Result<(), String> {
    let round: u32 = options.get("round", 1)?;
    let iterations: u64 = options.get("iterations", 2_000_000)?;
    let bytes: usize = options.get("payload", 100)?;
    options.finish()?;
    let load_before = load1();
    let micros = ours_micros_per_pair(WARM_UP, iterations, bytes)
        .ok_or("no thread CPU time (/proc/thread-self)")?;
    ResultLine::new(round, "aead", 0)
        .field("backend", crypto::BACKEND)
        .field("bytes", bytes)
        .field("iterations", iterations)
        .float("us", micros, 4)
        .field("load_before", load_before)
        .field("load_after", load1())
        .print();
    Ok(())
}
