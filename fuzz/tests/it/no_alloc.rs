//! The session targets allocate nothing per input once their session is
//! built: every committed input of `server_connected` and `client`, run a
//! second time, under an allocator that counts.

use std::fs;
use std::path::Path;

use netcode_fuzz::targets;

#[test]
fn session_targets_allocate_nothing_per_input() {
    for name in ["server_connected", "client"] {
        let target = targets::by_name(name).expect("a target of that name");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join(name);
        let inputs: Vec<Vec<u8>> = fs::read_dir(&dir)
            .expect("the target's corpus")
            .map(|entry| fs::read(entry.expect("a corpus entry").path()).expect("a corpus file"))
            .collect();
        assert!(!inputs.is_empty(), "{name}: no corpus");
        // The first pass builds the session and the copy each input runs on.
        inputs.iter().for_each(|input| target(input));
        let (allocations, ()) = counting_alloc::count(|| inputs.iter().for_each(|i| target(i)));
        assert_eq!(allocations, 0, "{name}: allocations in a second pass");
    }
}
