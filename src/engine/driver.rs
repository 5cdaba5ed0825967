//! The Go engines' driver: a small Go program (`drivers/go`, its sources
//! compiled into kvtune) built once per source version into kvtune's cache
//! and started by the trial worker, inside the trial's cgroup, for each
//! store. Calls go to it a batch at a time over a pipe; it times each call
//! around the engine's own work, so the pipe's cost is not measured.
//!
//! Frames both ways are a little-endian u32 length and a payload; a
//! request's first byte says what it is, a reply's is 0 (ok) or 1 (error).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, BufWriter, Read as _, Write as _};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::{bail, Context};

use super::{dir_size, KvStore, Read, Timed};
use crate::dataset::ops::{Batch, Op, OpKind};
use crate::record::{EngineMemory, EngineMetrics, OptionSet};
use crate::space::Value;

/// The driver's sources, compiled in so an installed kvtune can build it.
const SOURCES: &[(&str, &str)] = &[
    ("go.mod", include_str!("../../drivers/go/go.mod")),
    ("go.sum", include_str!("../../drivers/go/go.sum")),
    ("main.go", include_str!("../../drivers/go/main.go")),
    ("pebble.go", include_str!("../../drivers/go/pebble.go")),
    ("badger.go", include_str!("../../drivers/go/badger.go")),
    ("bbolt.go", include_str!("../../drivers/go/bbolt.go")),
];

/// Where built drivers are kept: `$KVTUNE_CACHE`, else `$XDG_CACHE_HOME/kvtune`,
/// else `~/.cache/kvtune`.
fn cache_dir() -> PathBuf {
    let env = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("KVTUNE_CACHE")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("kvtune")))
        .or_else(|| env("HOME").map(|d| d.join(".cache/kvtune")))
        .unwrap_or_else(|| std::env::temp_dir().join("kvtune-cache"))
}

/// The driver built from these sources, building it first if need be.
pub fn binary() -> anyhow::Result<PathBuf> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    SOURCES.hash(&mut hasher);
    let dir = cache_dir().join(format!("go-driver-{:016x}", hasher.finish()));
    let binary = dir.join("kvtune-driver");
    if binary.exists() {
        return Ok(binary);
    }
    build(&dir, &binary)?;
    Ok(binary)
}

/// Writes the sources to `dir/src` and builds them with `go build`.
fn build(dir: &Path, binary: &Path) -> anyhow::Result<()> {
    let go = Command::new("go").arg("version").output();
    if !go.as_ref().is_ok_and(|o| o.status.success()) {
        bail!(
            "the Go engines (pebble, badger, bbolt) run through a driver written in Go, and `go` was not found \
             on PATH: install Go 1.24 or newer (apt-get install golang-go, or https://go.dev/dl) and run again; \
             RocksDB needs no Go"
        );
    }
    let src = dir.join("src");
    std::fs::create_dir_all(&src).with_context(|| format!("making {}", src.display()))?;
    for (name, text) in SOURCES {
        std::fs::write(src.join(name), text)
            .with_context(|| format!("writing {}", src.join(name).display()))?;
    }
    eprintln!(
        "building kvtune's Go driver for pebble, badger and bbolt into {} (once; a minute or two, modules from \
         the Go module proxy)",
        dir.display()
    );
    let partial = dir.join(format!("kvtune-driver.{}", std::process::id()));
    let output = Command::new("go")
        .args(["build", "-trimpath", "-o"])
        .arg(&partial)
        .arg(".")
        .current_dir(&src)
        .output()
        .context("running go build")?;
    if !output.status.success() {
        bail!(
            "building the Go driver in {} failed ({}):\n{}",
            src.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    // Renamed into place whole, so a concurrent run never starts half a binary.
    std::fs::rename(&partial, binary).with_context(|| format!("moving the driver to {}", binary.display()))
}

/// A store of a Go engine, open in a driver process.
pub struct DriverStore {
    engine: &'static str,
    pipe: RefCell<Pipe>,
    dir: PathBuf,
    pid: u32,
}

struct Pipe {
    child: Child,
    to: BufWriter<ChildStdin>,
    from: BufReader<ChildStdout>,
}

impl Pipe {
    /// Sends one request and returns the reply's data.
    fn request(&mut self, engine: &str, payload: &[u8]) -> anyhow::Result<Vec<u8>> {
        let sent = self
            .to
            .write_all(&(payload.len() as u32).to_le_bytes())
            .and_then(|_| self.to.write_all(payload))
            .and_then(|_| self.to.flush());
        match sent.and_then(|_| self.reply()) {
            Ok((0, data)) => Ok(data),
            Ok((_, message)) => bail!("{engine}: {}", String::from_utf8_lossy(&message)),
            Err(e) => {
                let status = self.child.try_wait().ok().flatten();
                bail!("the {engine} driver stopped answering ({e}); it exited: {status:?}")
            }
        }
    }

    fn reply(&mut self) -> std::io::Result<(u8, Vec<u8>)> {
        let mut size = [0u8; 4];
        self.from.read_exact(&mut size)?;
        let mut data = vec![0u8; u32::from_le_bytes(size) as usize];
        self.from.read_exact(&mut data)?;
        if data.is_empty() {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "an empty reply"));
        }
        let status = data.remove(0);
        Ok((status, data))
    }
}

impl DriverStore {
    /// Starts the driver for `engine` on `dir` with its native `options`; the
    /// Go runtime is told to keep its heap under `memory_limit` bytes.
    pub fn open(
        engine: &'static str,
        dir: &Path,
        options: &OptionSet,
        memory_limit: u64,
    ) -> anyhow::Result<Self> {
        let json: serde_json::Map<String, serde_json::Value> =
            options.iter().map(|(k, v)| (k.clone(), json_value(v))).collect();
        let mut child = Command::new(binary()?)
            .arg(engine)
            .arg(dir)
            .arg(serde_json::Value::Object(json).to_string())
            .env("GOMEMLIMIT", format!("{memory_limit}B"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting the {engine} driver"))?;
        let to = BufWriter::with_capacity(1 << 20, child.stdin.take().expect("piped stdin"));
        let from = BufReader::with_capacity(1 << 16, child.stdout.take().expect("piped stdout"));
        let pid = child.id();
        let mut pipe = Pipe { child, to, from };
        match pipe.reply() {
            Ok((0, _)) => {}
            Ok((_, message)) => {
                bail!("opening {engine} in {}: {}", dir.display(), String::from_utf8_lossy(&message))
            }
            Err(e) => bail!("the {engine} driver exited before it opened {}: {e}", dir.display()),
        }
        Ok(DriverStore { engine, pipe: RefCell::new(pipe), dir: dir.to_path_buf(), pid })
    }

    fn request(&self, payload: &[u8]) -> anyhow::Result<Vec<u8>> {
        self.pipe.borrow_mut().request(self.engine, payload)
    }

    /// Sends encoded calls and reads back each one's time and what it read.
    fn calls(&self, calls: Calls, out: &mut Vec<Timed>) -> anyhow::Result<()> {
        let reply = self.request(&calls.buf)?;
        if reply.len() != 24 * calls.reads.len() {
            bail!(
                "the {} driver answered {} bytes for {} calls",
                self.engine,
                reply.len(),
                calls.reads.len()
            );
        }
        let word =
            |chunk: &[u8], i: usize| u64::from_le_bytes(chunk[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        for (chunk, is_read) in reply.chunks_exact(24).zip(calls.reads) {
            let read = is_read.then(|| Read { entries: word(chunk, 1), bytes: word(chunk, 2) });
            out.push(Timed { nanos: word(chunk, 0), read });
        }
        Ok(())
    }

    fn one(&self, encode: impl FnOnce(&mut Calls)) -> anyhow::Result<Option<Read>> {
        let mut calls = Calls::new();
        encode(&mut calls);
        let mut out = Vec::with_capacity(1);
        self.calls(calls, &mut out)?;
        Ok(out[0].read)
    }

    /// The driver's counters and memory, by kvtune's names.
    fn stats(&self) -> HashMap<String, u64> {
        self.request(b"M").ok().and_then(|data| serde_json::from_slice(&data).ok()).unwrap_or_default()
    }
}

fn json_value(v: &Value) -> serde_json::Value {
    match v {
        Value::Int(i) => (*i).into(),
        Value::Float(f) => (*f).into(),
        Value::Bool(b) => (*b).into(),
        Value::Str(s) => s.clone().into(),
    }
}

/// A chunk of calls in the driver's wire format.
struct Calls {
    buf: Vec<u8>,
    /// Per call, whether it reads.
    reads: Vec<bool>,
}

impl Calls {
    fn new() -> Self {
        Calls { buf: vec![b'C', 0, 0, 0, 0], reads: vec![] }
    }

    fn begin(&mut self, kind: u8, reads: bool) {
        self.buf.push(kind);
        self.reads.push(reads);
        let n = self.reads.len() as u32;
        self.buf[1..5].copy_from_slice(&n.to_le_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(b);
    }

    fn write(&mut self, batch: &Batch, writes: &[Op], corpus: &[u8]) {
        self.begin(b'w', false);
        self.buf.extend_from_slice(&(writes.len() as u32).to_le_bytes());
        for op in writes {
            let (kind, key, value) = match op.kind {
                OpKind::DeleteRange => {
                    let (from, to) = batch.range(op);
                    (b'r', from, to)
                }
                OpKind::Delete | OpKind::SingleDelete => (b'd', batch.key(op), &[][..]),
                _ => (b'p', batch.key(op), &corpus[op.value.start as usize..op.value.end as usize]),
            };
            self.buf.push(kind);
            self.bytes(key);
            self.bytes(value);
        }
    }

    fn get(&mut self, key: &[u8]) {
        self.begin(b'g', true);
        self.bytes(key);
    }

    fn multi_get(&mut self, keys: &[&[u8]]) {
        self.begin(b'm', true);
        self.buf.extend_from_slice(&(keys.len() as u32).to_le_bytes());
        keys.iter().for_each(|k| self.bytes(k));
    }

    fn seek_for_prev(&mut self, key: &[u8], prefix_len: usize) {
        self.begin(b'b', true);
        self.buf.extend_from_slice(&(prefix_len as u16).to_le_bytes());
        self.bytes(key);
    }

    fn scan(&mut self, key: &[u8], limit: usize, prefix_len: usize) {
        self.begin(b's', true);
        self.buf.extend_from_slice(&(limit as u32).to_le_bytes());
        self.buf.extend_from_slice(&(prefix_len as u16).to_le_bytes());
        self.bytes(key);
    }

    fn compact_range(&mut self, start: &[u8], end: &[u8]) {
        self.begin(b'c', false);
        self.bytes(start);
        self.bytes(end);
    }

    /// Encodes the call a run of ops makes.
    fn run(&mut self, batch: &Batch, corpus: &[u8], run: &[Op]) {
        let op = &run[0];
        let key = batch.key(op);
        match op.kind {
            kind if kind.is_write() => self.write(batch, run, corpus),
            OpKind::Get => self.get(key),
            OpKind::MultiGet => self.multi_get(&run.iter().map(|op| batch.key(op)).collect::<Vec<_>>()),
            OpKind::SeekForPrev => self.seek_for_prev(key, op.prefix as usize),
            OpKind::Scan => self.scan(key, op.arg as usize, op.prefix as usize),
            OpKind::CompactRange => {
                let (from, to) = batch.range(op);
                self.compact_range(from, to)
            }
            _ => unreachable!("every write kind is a write"),
        }
    }
}

impl KvStore for DriverStore {
    fn write(&mut self, batch: &Batch, writes: &[Op], corpus: &[u8]) -> anyhow::Result<()> {
        self.one(|c| c.write(batch, writes, corpus)).map(|_| ())
    }

    fn get(&mut self, key: &[u8]) -> anyhow::Result<Read> {
        Ok(self.one(|c| c.get(key))?.unwrap_or_default())
    }

    fn multi_get(&mut self, keys: &[&[u8]]) -> anyhow::Result<Read> {
        Ok(self.one(|c| c.multi_get(keys))?.unwrap_or_default())
    }

    fn seek_for_prev(&mut self, key: &[u8], prefix_len: usize) -> anyhow::Result<Read> {
        Ok(self.one(|c| c.seek_for_prev(key, prefix_len))?.unwrap_or_default())
    }

    fn scan(&mut self, key: &[u8], limit: usize, prefix_len: usize) -> anyhow::Result<Read> {
        Ok(self.one(|c| c.scan(key, limit, prefix_len))?.unwrap_or_default())
    }

    fn compact_range(&mut self, start: &[u8], end: &[u8]) -> anyhow::Result<()> {
        self.one(|c| c.compact_range(start, end)).map(|_| ())
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        self.request(b"F").map(|_| ())
    }

    fn settle(&mut self) -> anyhow::Result<()> {
        self.request(b"S").map(|_| ())
    }

    fn metrics(&self) -> EngineMetrics {
        let s = self.stats();
        let get = |name: &str| s.get(name).copied().unwrap_or(0);
        EngineMetrics {
            flush_bytes: get("flush_bytes"),
            compaction_bytes: get("compaction_bytes"),
            blob_bytes: get("blob_bytes"),
            stall_micros: get("stall_micros"),
            block_cache_hits: get("block_cache_hits"),
            block_cache_misses: get("block_cache_misses"),
            bloom_useful: get("bloom_useful"),
            bloom_checked: get("bloom_checked"),
            live_keys_estimate: get("live_keys_estimate"),
        }
    }

    fn memory(&self) -> EngineMemory {
        let s = self.stats();
        let get = |name: &str| s.get(name).copied().unwrap_or(0);
        EngineMemory {
            block_cache: get("block_cache"),
            block_cache_pinned: 0,
            memtables: get("memtables"),
            table_readers: get("table_readers"),
            row_cache: 0,
        }
    }

    fn disk_bytes(&self) -> u64 {
        dir_size(&self.dir)
    }

    /// The whole batch in one request: one round trip per batch, not per call.
    fn run_calls(
        &mut self,
        batch: &Batch,
        corpus: &[u8],
        calls: &[Range<usize>],
        out: &mut Vec<Timed>,
    ) -> anyhow::Result<()> {
        let mut encoded = Calls::new();
        for range in calls {
            encoded.run(batch, corpus, &batch.ops[range.clone()]);
        }
        self.calls(encoded, out)
    }

    fn helper_peak_rss(&self) -> u64 {
        crate::budget::peak_rss(Some(self.pid))
    }
}

impl Drop for DriverStore {
    /// Closes the engine (it flushes what it holds) and waits for the driver.
    fn drop(&mut self) {
        let pipe = self.pipe.get_mut();
        let _ = pipe.request(self.engine, b"Q");
        let _ = pipe.child.wait();
    }
}
