//! Byte sizes as users type them ("128G", "512MiB") and the memory model of an
//! engine configuration, used to reject candidates that cannot fit the budget
//! before they cost a trial.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * KIB;
pub const GIB: u64 = 1024 * MIB;
pub const TIB: u64 = 1024 * GIB;

/// A number of bytes. Parsed with binary units only, because memory is sized in
/// powers of 1024 and "128G" of RAM means 128 GiB to everyone who buys it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ByteSize(pub u64);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{input}` is not a size: write a number with an optional unit K, M, G or T (each a power of 1024; `KiB`, `KB` and `K` all mean 1024 bytes), e.g. 128G, 512MiB, 1.5T")]
pub struct ByteSizeError {
    pub input: String,
}

impl FromStr for ByteSize {
    type Err = ByteSizeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ByteSizeError { input: s.to_string() };
        let text = s.trim();
        let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: f64 = number.parse().map_err(|_| err())?;
        let multiplier = match unit.trim().to_ascii_uppercase().as_str() {
            "" | "B" => 1,
            "K" | "KB" | "KIB" => KIB,
            "M" | "MB" | "MIB" => MIB,
            "G" | "GB" | "GIB" => GIB,
            "T" | "TB" | "TIB" => TIB,
            _ => return Err(err()),
        };
        let bytes = number * multiplier as f64;
        if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
            return Err(err());
        }
        Ok(ByteSize(bytes.round() as u64))
    }
}

impl fmt::Display for ByteSize {
    /// The largest binary unit that keeps the number at or above 1, with up to
    /// two decimals: 128 GiB, 1.5 MiB, 300 B.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")];
        for (size, name) in units {
            if self.0 >= size {
                let value = self.0 as f64 / size as f64;
                let text = format!("{value:.2}");
                let text = text.trim_end_matches('0').trim_end_matches('.');
                return write!(f, "{text} {name}");
            }
        }
        write!(f, "{} B", self.0)
    }
}

/// How big a workload's data is: what a memory model needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    pub keys: u64,
    pub user_bytes: u64,
}

/// What an option set is expected to hold in memory, by part. The page cache
/// takes whatever is left, so the sum must stay under the budget with room for
/// the process itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryModel {
    pub block_cache: u64,
    /// Key-value pairs cached whole for point reads, beside the block cache:
    /// its capacity and what its entries cost beyond their charge.
    #[serde(default)]
    pub row_cache: u64,
    pub memtables: u64,
    /// Index and filter memory held outside the block cache, per key and per
    /// byte of data: it grows with the database.
    pub outside_cache_per_key: f64,
    pub outside_cache_per_byte: f64,
    /// Buffers the engine reads into outside any cache, as compactions do
    /// under direct I/O where the kernel's read-ahead cannot serve them.
    #[serde(default)]
    pub read_buffers: u64,
    /// The process, the engine's own structures and table readers.
    pub overhead: u64,
}

impl MemoryModel {
    /// Index and filter blocks held outside the cache for data of `shape`.
    pub fn index_and_filters(&self, shape: Shape) -> u64 {
        (self.outside_cache_per_key * shape.keys as f64
            + self.outside_cache_per_byte * shape.user_bytes as f64) as u64
    }

    pub fn total(&self, shape: Shape) -> u64 {
        self.block_cache
            + self.row_cache
            + self.memtables
            + self.index_and_filters(shape)
            + self.read_buffers
            + self.overhead
    }

    /// Why the model does not fit `budget` for data of `shape`, or `None` when it does.
    pub fn misfit(&self, shape: Shape, budget: u64) -> Option<String> {
        (self.total(shape) > budget).then(|| {
            format!(
                "needs {} (block cache {}{} + memtables {} + index/filters {}{} + overhead {}) but the budget is {}",
                ByteSize(self.total(shape)),
                ByteSize(self.block_cache),
                match self.row_cache {
                    0 => String::new(),
                    bytes => format!(" + row cache {} with its entries' overhead", ByteSize(bytes)),
                },
                ByteSize(self.memtables),
                ByteSize(self.index_and_filters(shape)),
                match self.read_buffers {
                    0 => String::new(),
                    bytes => format!(" + read-ahead buffers {}", ByteSize(bytes)),
                },
                ByteSize(self.overhead),
                ByteSize(budget)
            )
        })
    }
}

/// Bytes of physical memory on this machine, and of the memory cgroup we run in
/// if that is smaller.
pub fn machine_memory() -> u64 {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    let total = system.total_memory();
    match system.cgroup_limits() {
        Some(limits) if limits.total_memory > 0 => total.min(limits.total_memory),
        _ => total,
    }
}

/// The peak resident set (VmHWM) of process `pid`, else of this one, in bytes.
pub fn peak_rss(pid: Option<u32>) -> u64 {
    let pid = pid.map_or("self".to_string(), |p| p.to_string());
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_binary_units() {
        for (text, bytes) in [
            ("128G", 128 * GIB),
            ("128GB", 128 * GIB),
            ("128GiB", 128 * GIB),
            ("128 gib", 128 * GIB),
            ("512MiB", 512 * MIB),
            ("1.5T", 3 * TIB / 2),
            ("4096", 4096),
            ("64k", 64 * KIB),
        ] {
            assert_eq!(text.parse::<ByteSize>(), Ok(ByteSize(bytes)), "{text}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_size() {
        for text in ["", "G", "12X", "-5G", "1..2G", "0", "12 GBs"] {
            let err = text.parse::<ByteSize>().unwrap_err();
            assert!(err.to_string().contains("K, M, G or T"), "{text}: {err}");
        }
    }

    #[test]
    fn displays_in_the_largest_unit() {
        assert_eq!(ByteSize(128 * GIB).to_string(), "128 GiB");
        assert_eq!(ByteSize(3 * MIB / 2).to_string(), "1.5 MiB");
        assert_eq!(ByteSize(300).to_string(), "300 B");
    }

    #[test]
    fn model_rejects_what_does_not_fit() {
        let model = MemoryModel {
            block_cache: 600 * MIB,
            row_cache: 0,
            memtables: 300 * MIB,
            outside_cache_per_key: 1.0,
            outside_cache_per_byte: 0.0,
            read_buffers: 0,
            overhead: 100 * MIB,
        };
        let shape = Shape { keys: 10 * MIB, user_bytes: GIB };
        assert!(model.misfit(shape, GIB).is_none());
        let why = model.misfit(shape, 512 * MIB).unwrap();
        assert!(why.contains("block cache 600 MiB") && why.contains("index/filters 10 MiB"), "{why}");
        // The part outside the cache grows with the data.
        assert!(model.misfit(Shape { keys: 100 * MIB, ..shape }, GIB).is_some());
    }
}
