//! Value bytes and hash-like keys shared by the generators.

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

/// splitmix64: a fast, well-mixed hash of a 64-bit input, for hash-like
/// identifiers that can be recomputed from their index.
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Appends a 32-byte hash-like identifier for `(seed, a, b)`.
pub fn push_id32(out: &mut Vec<u8>, seed: u64, a: u64, b: u64) {
    let mut h = mix64(seed ^ mix64(a) ^ mix64(b.wrapping_add(0x5851_F42D)));
    for _ in 0..4 {
        h = mix64(h);
        out.extend_from_slice(&h.to_be_bytes());
    }
}

/// A block of bytes values are cut from. Each 16-byte chunk is fresh random
/// bytes, or (with probability 1 - 1/compressibility) a copy of one of the 4
/// chunks before it (so even a 45-byte value holds repeats), so LZ compressors (snappy, lz4, zstd) shrink any slice of
/// it by about `compressibility`, as they do real CBOR or protobuf payloads.
pub fn corpus(len: usize, compressibility: f64, seed: u64) -> Vec<u8> {
    const CHUNK: usize = 16;
    let mut rng = StdRng::seed_from_u64(seed ^ 0xC0_FFEE);
    let repeat = (1.0 - 1.0 / compressibility.max(1.0)).clamp(0.0, 0.99);
    let mut out = vec![0u8; len.div_ceil(CHUNK) * CHUNK];
    for start in (0..out.len()).step_by(CHUNK) {
        let back = rng.random_range(1..=4usize) * CHUNK;
        if start >= back && rng.random::<f64>() < repeat {
            out.copy_within(start - back..start - back + CHUNK, start);
        } else {
            rng.fill_bytes(&mut out[start..start + CHUNK]);
        }
    }
    out.truncate(len);
    out
}

/// Bytes of a value corpus for a budget: a 64th of it, from 1 to 8 MiB, so
/// the generator's own memory stays a small part of what the cgroup counts.
pub fn corpus_bytes(budget: u64) -> usize {
    const SHARE_OF_BUDGET: u64 = 64;
    ((budget / SHARE_OF_BUDGET) as usize).clamp(1 << 20, 8 << 20)
}

/// A random slice of `len` bytes of a corpus of `corpus_len` bytes.
pub fn slice(rng: &mut impl Rng, corpus_len: usize, len: usize) -> std::ops::Range<u32> {
    let len = len.min(corpus_len);
    let start = rng.random_range(0..=corpus_len - len);
    start as u32..(start + len) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
        push_id32(&mut a, 1, 2, 3);
        push_id32(&mut b, 1, 2, 3);
        push_id32(&mut c, 1, 2, 4);
        assert_eq!(a.len(), 32);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn corpus_is_deterministic_and_repetitive_as_asked() {
        let x = corpus(1 << 16, 2.5, 7);
        assert_eq!(x, corpus(1 << 16, 2.5, 7));
        let chunks: Vec<&[u8]> = x.chunks(16).collect();
        let repeats =
            (16..chunks.len()).filter(|&i| (1..=4).any(|b| chunks[i] == chunks[i - b])).count() as f64;
        let share = repeats / (chunks.len() - 16) as f64;
        assert!((share - 0.6).abs() < 0.05, "repeated share {share}");
    }
}
