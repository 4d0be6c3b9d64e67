//! Wall time of every implementation on every case (criterion), the
//! secondary figure next to `aead-count`'s instruction counts:
//!
//! ```sh
//! cargo bench --bench aead                     # every implementation and case
//! cargo bench --bench aead -- 'seam|orion'     # a criterion filter
//! ```
//!
//! Ids are `<case>/<implementation> [<RustCrypto config>]`, the config being
//! the `--cfg` backend flags this build was made with (`default`: runtime
//! dispatch), so results of differently built runs never share an id.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use netcode_bench_aead::cases::{CASES, Fixture, KEY};
use netcode_bench_aead::{implementations, rustcrypto_config};

fn aead(c: &mut Criterion) {
    let all = implementations(&KEY);
    for case in CASES {
        let mut group = c.benchmark_group(case.name);
        for implementation in &all {
            let fixture = Fixture::new(&*implementation.aead, case);
            let id = format!("{} [{}]", implementation.name, rustcrypto_config());
            // Each call gets a fresh copy of the input, made untimed.
            group.bench_function(id, |b| {
                b.iter_batched_ref(
                    || fixture.input().to_vec(),
                    |buffer| black_box(fixture.run(buffer)),
                    BatchSize::SmallInput,
                )
            });
        }
        group.finish();
    }
}

criterion_group!(benches, aead);
criterion_main!(benches);
