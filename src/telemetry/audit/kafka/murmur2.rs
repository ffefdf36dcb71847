//! The partition of a keyed record, as the Java client's default partitioner picks it: the
//! 32-bit MurmurHash2 of the key (seed `0x9747b28c`), made positive by clearing its sign bit,
//! modulo the number of partitions (`org.apache.kafka.common.utils.Utils.murmur2` and
//! `BuiltInPartitioner.partitionForKey` in Kafka's clients). warrant's records of one
//! decision thus land in the partition a Java producer would have chosen for the same key.

/// MurmurHash2, 32 bits, as Kafka's clients compute it.
pub fn murmur2(data: &[u8]) -> i32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h: u32 = 0x9747_b28c ^ (data.len() as u32);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// The partition (of `partitions`, at least one) of a record keyed `key`.
pub fn partition_for(key: &[u8], partitions: u32) -> u32 {
    let positive = (murmur2(key) & 0x7fff_ffff) as u32;
    positive % partitions.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values Kafka's own client computes (checked with `Utils.murmur2` of kafka-clients
    /// 4.3.2 through jshell).
    #[test]
    fn murmur2_matches_the_java_client() {
        for (input, want) in [
            ("21", -973_932_308),
            ("foobar", -790_332_482),
            ("a-little-bit-long-string", -985_981_536),
            ("a-little-bit-longer-string", -1_486_304_829),
            (
                "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            ("abc", 479_470_107),
        ] {
            assert_eq!(murmur2(input.as_bytes()), want, "{input}");
        }
    }

    #[test]
    fn a_key_always_lands_in_the_same_partition() {
        let key = b"0b9f2a4e-1c1d-8c3a-9d2e-6f6e1d2c3b4a";
        assert_eq!(partition_for(key, 3), partition_for(key, 3));
        assert!(partition_for(key, 3) < 3);
        assert_eq!(partition_for(key, 1), 0);
        assert_eq!(partition_for(key, 0), 0);
    }
}
