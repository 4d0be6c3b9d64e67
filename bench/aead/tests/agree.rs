//! Every implementation computes what netcode-proto's seam computes: the
//! same ciphertext and tag for both constructions at every length around
//! the block and batch boundaries, opens what it sealed, and rejects a
//! wrong tag or wrong associated data (leaving the buffer as it was, where
//! it promises to).

use netcode_bench_aead::cases::KEY;
use netcode_bench_aead::{Nonce, Rejected, implementations};

const LENGTHS: [usize; 21] = [
    0, 1, 15, 16, 17, 63, 64, 65, 100, 127, 128, 191, 192, 193, 255, 256, 257, 511, 513, 1008, 1200,
];

#[test]
fn every_implementation_agrees_with_the_seam() {
    let all = implementations(&KEY);
    let seam = &all
        .iter()
        .find(|i| i.name == "seam")
        .expect("the seam")
        .aead;
    let nonces = [
        Nonce::Ietf(core::array::from_fn(|i| (i * 5 + 1) as u8)),
        Nonce::X(core::array::from_fn(|i| (i * 3 + 2) as u8)),
    ];
    for implementation in &all {
        let name = implementation.name;
        let aead = &implementation.aead;
        for (nonce, length) in nonces.iter().flat_map(|n| LENGTHS.map(|l| (n, l))) {
            let plain: Vec<u8> = (0..length).map(|i| (i * 13 + length) as u8).collect();
            let ad: Vec<u8> = (0..length % 40).map(|i| i as u8).collect();
            let context = format!("{name}, {nonce:?}, {length} bytes");

            let (mut ours, mut theirs) = (plain.clone(), plain.clone());
            let tag = aead.seal(nonce, &ad, &mut ours);
            assert_eq!(
                (tag, &ours),
                (seam.seal(nonce, &ad, &mut theirs), &theirs),
                "{context}: seal"
            );

            let sealed = ours.clone();
            let mut bad_tag = tag;
            bad_tag[length % 16] ^= 0x20;
            assert_eq!(
                aead.open(nonce, &ad, &mut ours, &bad_tag),
                Err(Rejected),
                "{context}"
            );
            if implementation.restores_on_failure {
                assert_eq!(ours, sealed, "{context}: a failed open restores");
            }
            ours.copy_from_slice(&sealed);
            let mut wrong_ad = ad.clone();
            wrong_ad.push(0);
            assert_eq!(
                aead.open(nonce, &wrong_ad, &mut ours, &tag),
                Err(Rejected),
                "{context}"
            );
            ours.copy_from_slice(&sealed);
            aead.open(nonce, &ad, &mut ours, &tag)
                .expect("opens its own seal");
            assert_eq!(ours, plain, "{context}: open");
        }
    }
}
