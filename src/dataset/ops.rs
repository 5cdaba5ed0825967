//! The operation stream a dataset produces and the replay driver consumes.
//! Keys live in one byte arena per batch and values are slices of a shared
//! corpus, so generating a batch allocates nothing once warm.

use std::ops::Range;

/// What an operation asks of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Put,
    Delete,
    Get,
    /// Latest entry at or below the key whose first `prefix_len` bytes match.
    SeekForPrev,
    /// Forward scan of up to `limit` entries sharing the key as prefix.
    Scan,
}

impl OpKind {
    pub fn is_write(self) -> bool {
        matches!(self, OpKind::Put | OpKind::Delete)
    }
}

/// One operation; `key` indexes the batch's key arena, `value` the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub key: Range<u32>,
    pub value: Range<u32>,
    /// Prefix length for `SeekForPrev`, entry limit for `Scan`.
    pub arg: u32,
}

/// A group of operations. Writes in a batch are applied atomically as one
/// engine write; reads are issued one by one.
#[derive(Debug, Default, Clone)]
pub struct Batch {
    pub keys: Vec<u8>,
    pub ops: Vec<Op>,
}

impl Batch {
    pub fn clear(&mut self) {
        self.keys.clear();
        self.ops.clear();
    }

    pub fn key(&self, op: &Op) -> &[u8] {
        &self.keys[op.key.start as usize..op.key.end as usize]
    }

    /// Appends an operation whose key is built by `write_key`.
    pub fn push(&mut self, kind: OpKind, write_key: impl FnOnce(&mut Vec<u8>), value: Range<u32>, arg: u32) {
        let start = self.keys.len() as u32;
        write_key(&mut self.keys);
        let key = start..self.keys.len() as u32;
        self.ops.push(Op { kind, key, value, arg });
    }

    /// User bytes this batch writes (keys and values of puts and deletes).
    pub fn write_bytes(&self) -> u64 {
        self.ops.iter().filter(|op| op.kind.is_write()).map(|op| (op.key.len() + op.value.len()) as u64).sum()
    }
}

/// A source of batches for one phase. Implementations are deterministic for a
/// seed, so every candidate of a study sees the same stream.
pub trait OpSource {
    /// Fills `batch` with the next batch; returns false when the phase is over.
    fn next_batch(&mut self, batch: &mut Batch) -> bool;
    /// Bytes the value ranges of this source's ops point into.
    fn corpus(&self) -> &[u8];
}
