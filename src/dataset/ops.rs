//! The operation stream a dataset produces and the replay driver consumes.
//! Keys live in one byte arena per batch and values are slices of a corpus
//! the source owns, so generating a batch allocates nothing once warm.

use std::ops::Range;

/// What an operation asks of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Put,
    Delete,
    /// Delete of a key written once (RocksDB's SingleDelete).
    SingleDelete,
    /// Delete of every key in `[start, end)`; the key holds start then end,
    /// `arg` is the start's length.
    DeleteRange,
    /// A merge operand; replayed as a put of it (kvtune cannot know the
    /// application's merge operator).
    Merge,
    Get,
    /// One of a run of point reads issued as one call (consecutive MultiGet
    /// ops of a batch form the call).
    MultiGet,
    /// Latest entry at or below the key, within the first `prefix` bytes.
    SeekForPrev,
    /// Seek to the key and read up to `arg` entries forward, within its
    /// first `prefix` bytes (0: unbounded).
    Scan,
    /// Compacts `[start, end)` now, as an application's maintenance does;
    /// the key holds start then end, `arg` is the start's length.
    CompactRange,
}

impl OpKind {
    /// Writes go to the engine as one atomic batch per run of writes.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            OpKind::Put | OpKind::Delete | OpKind::SingleDelete | OpKind::DeleteRange | OpKind::Merge
        )
    }

    /// Every kind, for readers and tables, in declaration order (`kind as usize` indexes it).
    pub const ALL: [OpKind; 10] = [
        OpKind::Put,
        OpKind::Delete,
        OpKind::SingleDelete,
        OpKind::DeleteRange,
        OpKind::Merge,
        OpKind::Get,
        OpKind::MultiGet,
        OpKind::SeekForPrev,
        OpKind::Scan,
        OpKind::CompactRange,
    ];
}

/// One operation; `key` indexes the batch's key arena, `value` the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub key: Range<u32>,
    pub value: Range<u32>,
    /// Entry limit for `Scan`; start key length for `DeleteRange` and `CompactRange`.
    pub arg: u32,
    /// Bytes of the key a `Scan` or `SeekForPrev` stays within (0: unbounded).
    pub prefix: u16,
}

/// A group of operations, applied in order: each run of consecutive writes
/// as one atomic engine write, each read as its own call.
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

    /// The start and end keys of a `DeleteRange` or `CompactRange`.
    pub fn range(&self, op: &Op) -> (&[u8], &[u8]) {
        self.key(op).split_at((op.arg as usize).min(op.key.len()))
    }

    /// Appends a write whose key is built by `write_key`.
    pub fn push(&mut self, kind: OpKind, write_key: impl FnOnce(&mut Vec<u8>), value: Range<u32>, arg: u32) {
        self.push_op(kind, write_key, value, arg, 0);
    }

    /// Appends a read whose key is built by `write_key`, staying within its
    /// first `prefix` bytes (0: unbounded).
    pub fn push_read(&mut self, kind: OpKind, write_key: impl FnOnce(&mut Vec<u8>), limit: u32, prefix: u16) {
        self.push_op(kind, write_key, 0..0, limit, prefix);
    }

    /// Appends a `DeleteRange` or `CompactRange` of `[start, end)`.
    pub fn push_range(&mut self, kind: OpKind, start: &[u8], end: &[u8]) {
        self.push_op(kind, |k| k.extend_from_slice(&[start, end].concat()), 0..0, start.len() as u32, 0);
    }

    fn push_op(
        &mut self,
        kind: OpKind,
        write_key: impl FnOnce(&mut Vec<u8>),
        value: Range<u32>,
        arg: u32,
        prefix: u16,
    ) {
        let start = self.keys.len() as u32;
        write_key(&mut self.keys);
        let key = start..self.keys.len() as u32;
        self.ops.push(Op { kind, key, value, arg, prefix });
    }

    /// Whether a batch of a client's one-record calls is closed: it holds
    /// `max_ops`, or its last op is a write, so the next write is an engine
    /// call of its own (ops of a batch run as one write only if adjacent).
    pub fn closed(&self, max_ops: usize) -> bool {
        self.ops.len() >= max_ops || self.ops.last().is_some_and(|op| op.kind.is_write())
    }

    /// User bytes this batch writes (keys and values of its writes).
    pub fn write_bytes(&self) -> u64 {
        self.ops.iter().filter(|op| op.kind.is_write()).map(|op| (op.key.len() + op.value.len()) as u64).sum()
    }
}

/// Ops, key bytes and value bytes by kind (in [`OpKind::ALL`] order), and
/// batches: what describing, exporting and checking a stream count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub ops: [u64; OpKind::ALL.len()],
    pub key_bytes: [u64; OpKind::ALL.len()],
    pub value_bytes: [u64; OpKind::ALL.len()],
    pub batches: u64,
}

impl Tally {
    pub fn add(&mut self, batch: &Batch) {
        self.batches += 1;
        for op in &batch.ops {
            let i = op.kind as usize;
            self.ops[i] += 1;
            self.key_bytes[i] += op.key.len() as u64;
            self.value_bytes[i] += op.value.len() as u64;
        }
    }

    pub fn total_ops(&self) -> u64 {
        self.ops.iter().sum()
    }
}

/// The end of the run of ops starting at `i` that go to the engine as one
/// call: consecutive writes (one atomic write), or consecutive multi-gets,
/// or a single op.
pub fn call_end(ops: &[Op], i: usize) -> usize {
    let kind = ops[i].kind;
    let together = |k: OpKind| match kind {
        k0 if k0.is_write() => k.is_write(),
        OpKind::MultiGet => k == OpKind::MultiGet,
        _ => false,
    };
    i + 1 + ops[i + 1..].iter().take_while(|op| together(op.kind)).count()
}

/// The engine calls a batch's ops make, in order, each as its range of ops.
pub fn calls(ops: &[Op]) -> Vec<Range<usize>> {
    let mut calls = Vec::new();
    let mut i = 0;
    while i < ops.len() {
        let end = call_end(ops, i);
        calls.push(i..end);
        i = end;
    }
    calls
}

/// A source of batches for one phase. Implementations are deterministic for a
/// seed, so every candidate of a study sees the same stream.
pub trait OpSource {
    /// Fills `batch` with the next batch; returns false when the phase is over.
    fn next_batch(&mut self, batch: &mut Batch) -> bool;
    /// Bytes the value ranges of the last batch's ops point into.
    fn corpus(&self) -> &[u8];
    /// Why the phase ended early, if it did: a source that reads a file (a
    /// trace) can fail midway; `next_batch` then returns false and this says why.
    fn take_error(&mut self) -> Option<anyhow::Error> {
        None
    }
}

/// Every batch of a source, for tests that measure what a generator makes.
#[cfg(test)]
pub fn drain(source: &mut dyn OpSource) -> Vec<Batch> {
    let mut out = vec![];
    let mut batch = Batch::default();
    while source.next_batch(&mut batch) {
        out.push(batch.clone());
    }
    out
}
