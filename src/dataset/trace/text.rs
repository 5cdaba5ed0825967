//! Text traces a user can make from their own logs, one operation a line:
//!
//! CSV, columns `op,key,arg,time_us,batch,prefix` (a first line whose first
//! field is `op` names the columns instead, in any order; `#` starts a
//! comment line):
//!
//! ```text
//! op,key,arg,time_us,batch,prefix
//! put,user:42,size:120
//! put,0x00ff17,hello
//! delete_range,user:0,user:5
//! scan,user:4,100,,,5
//! ```
//!
//! JSON lines, fields `op`, `key`, `keys` (multi_get), `value`, `value_size`,
//! `end`, `limit`, `prefix`, `time_us`, `batch`:
//!
//! ```text
//! {"op":"put","key":"user:42","value_size":120}
//! {"op":"multi_get","keys":["user:1","0x0102"],"time_us":1700000000000000}
//! ```
//!
//! Keys and values are text, or hex after `0x`; a put's value is a size
//! (`size:N` in CSV, `value_size` in JSON: N bytes cut from a synthetic
//! corpus) or literal. `arg` is a put's or merge's value, a range's end key,
//! a scan's entry limit. Lines sharing a `batch` number, one after another,
//! are one batch: writes among them one atomic write, multi-gets one call;
//! without it every line is its own call. `time_us` is the recorded time
//! (for `pace = "recorded"`), `prefix` the key bytes a scan or seek stays
//! within.

use std::borrow::Cow;
use std::io::{self, BufRead, Read, Write};
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::source::{At, Call, Head, RecordReader, Sink, TraceError};
use crate::dataset::ops::{Batch, Op, OpKind};

/// Longest line kvtune reads, and the largest sized value.
const MAX_LINE: u64 = 1 << 30;
const MAX_SIZED_VALUE: u64 = 64 << 20;

/// Operation names, as both formats write them.
const OPS: [(&str, OpKind); 11] = [
    ("put", OpKind::Put),
    ("merge", OpKind::Merge),
    ("delete", OpKind::Delete),
    ("single_delete", OpKind::SingleDelete),
    ("delete_range", OpKind::DeleteRange),
    ("get", OpKind::Get),
    ("multi_get", OpKind::MultiGet),
    // A seek is a scan of one entry.
    ("seek", OpKind::Scan),
    ("seek_for_prev", OpKind::SeekForPrev),
    ("scan", OpKind::Scan),
    ("compact_range", OpKind::CompactRange),
];

/// Whether `name` is an op of text traces.
pub fn is_op(name: &str) -> bool {
    OPS.iter().any(|(n, _)| *n == name)
}

fn op_names() -> String {
    OPS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The value of each hex digit; 0xFF for bytes that are not one.
const HEX_DIGITS: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// What a line gives, whichever the format, before its checks.
struct Fields<'a> {
    op: &'a str,
    key: Option<&'a [u8]>,
    /// More keys of a multi_get (JSON `keys`).
    keys: Vec<&'a [u8]>,
    value: Option<Value<'a>>,
    end: Option<&'a [u8]>,
    limit: Option<u64>,
    prefix: Option<u64>,
}

enum Value<'a> {
    Size(u64),
    Bytes(&'a [u8]),
}

/// The format's name for each field, so errors name what the user wrote.
struct Names {
    value: &'static str,
    end: &'static str,
    limit: &'static str,
}

type FieldError = (Option<&'static str>, String);

/// A staged op: what `decode` pushes into the batch.
struct StagedOp {
    kind: OpKind,
    key: Range<usize>,
    value: Option<StagedValue>,
    arg: u32,
    prefix: u16,
}

enum StagedValue {
    Size(usize),
    Bytes(Range<usize>),
}

/// The ops of the line last read, checked, with their bytes.
#[derive(Default)]
struct Staged {
    bytes: Vec<u8>,
    ops: Vec<StagedOp>,
}

impl Staged {
    fn clear(&mut self) {
        self.bytes.clear();
        self.ops.clear();
    }

    /// Appends `text` (hex after `0x`) and returns where it went.
    fn text(&mut self, text: &[u8], field: &'static str) -> Result<Range<usize>, FieldError> {
        let start = self.bytes.len();
        match text.strip_prefix(b"0x") {
            None => self.bytes.extend_from_slice(text),
            Some(hex) => {
                self.bytes.resize(start + hex.len() / 2, 0);
                let mut seen = 0u8;
                for (out, pair) in self.bytes[start..].iter_mut().zip(hex.chunks_exact(2)) {
                    let (hi, lo) = (HEX_DIGITS[pair[0] as usize], HEX_DIGITS[pair[1] as usize]);
                    seen |= hi | lo;
                    *out = hi << 4 | (lo & 15);
                }
                if seen > 15 || hex.len() % 2 != 0 {
                    self.bytes.truncate(start);
                    let shown = String::from_utf8_lossy(&text[..text.len().min(40)]);
                    return Err((
                        Some(field),
                        format!("`{shown}` is not hex: write 0x and an even number of hex digits (text that itself begins with 0x must be written as hex)"),
                    ));
                }
            }
        }
        Ok(start..self.bytes.len())
    }

    /// Checks `f` against what its op takes and stages its ops.
    fn stage(&mut self, f: &Fields, names: &Names) -> Result<Call, FieldError> {
        self.clear();
        let Some(&(name, kind)) = OPS.iter().find(|(n, _)| *n == f.op.trim()) else {
            return Err((Some("op"), format!("unknown op `{}`: ops are {}", f.op, op_names())));
        };
        let takes = |field: &'static str, given: bool, allowed: bool| match given && !allowed {
            true => Err((Some(field), format!("{name} takes no {field}"))),
            false => Ok(()),
        };
        let is = |kinds: &[OpKind]| kinds.contains(&kind);
        takes(names.value, f.value.is_some(), is(&[OpKind::Put, OpKind::Merge]))?;
        takes(names.end, f.end.is_some(), is(&[OpKind::DeleteRange, OpKind::CompactRange]))?;
        takes(names.limit, f.limit.is_some(), name == "scan")?;
        takes("prefix", f.prefix.is_some(), is(&[OpKind::Scan, OpKind::SeekForPrev]))?;
        takes("keys", !f.keys.is_empty(), kind == OpKind::MultiGet)?;
        let missing = |field: &'static str, what: &str| (Some(field), format!("{name} needs {what}"));
        let key = match (f.key, f.keys.is_empty()) {
            (Some(key), _) => Some(self.text(key, "key")?),
            (None, true) => return Err(missing("key", "a key")),
            (None, false) => None,
        };
        let prefix = match f.prefix {
            Some(p) if p > u16::MAX as u64 => return Err((Some("prefix"), format!("{p}: at most 65535"))),
            p => p.unwrap_or(0) as u16,
        };
        let op = |key: Range<usize>, arg: u32| StagedOp { kind, key, value: None, arg, prefix };
        match kind {
            OpKind::Put | OpKind::Merge => {
                let value = match &f.value {
                    None => return Err(missing(names.value, "a value: a size or the bytes")),
                    Some(Value::Size(n)) if *n > MAX_SIZED_VALUE => {
                        return Err((
                            Some(names.value),
                            format!("a value of {n} bytes: kvtune takes sized values up to 64 MiB"),
                        ))
                    }
                    Some(Value::Size(n)) => StagedValue::Size(*n as usize),
                    Some(Value::Bytes(b)) => StagedValue::Bytes(self.text(b, names.value)?),
                };
                let key = key.expect("checked");
                self.ops.push(StagedOp { kind, key, value: Some(value), arg: 0, prefix: 0 });
            }
            OpKind::DeleteRange | OpKind::CompactRange => {
                let start = key.expect("checked");
                let Some(end) = f.end else { return Err(missing(names.end, "an end key")) };
                let end = self.text(end, names.end)?;
                self.ops.push(op(start.start..end.end, start.len() as u32));
            }
            OpKind::Scan => {
                let limit = match (name, f.limit) {
                    ("seek", _) => 1,
                    (_, None | Some(0)) => return Err(missing(names.limit, "an entry limit of 1 or more")),
                    (_, Some(n)) => n.min(u32::MAX as u64) as u32,
                };
                self.ops.push(op(key.expect("checked"), limit));
            }
            OpKind::MultiGet => {
                if let Some(key) = key {
                    self.ops.push(op(key, 0));
                }
                for k in &f.keys {
                    let key = self.text(k, "keys")?;
                    self.ops.push(op(key, 0));
                }
            }
            _ => self.ops.push(op(key.expect("checked"), 0)),
        }
        Ok(Call::of(kind))
    }

    /// Pushes the staged ops into the batch.
    fn flush(&self, sink: &mut Sink) {
        for op in &self.ops {
            let key = &self.bytes[op.key.clone()];
            let value = match &op.value {
                None => 0..0,
                Some(StagedValue::Size(n)) => sink.sized(*n),
                Some(StagedValue::Bytes(r)) => sink.literal(&self.bytes[r.clone()]),
            };
            let write = |k: &mut Vec<u8>| k.extend_from_slice(key);
            match op.kind {
                k if k.is_write() || k == OpKind::CompactRange => sink.batch.push(k, write, value, op.arg),
                k => sink.batch.push_read(k, write, op.arg, op.prefix),
            }
        }
    }
}

/// Parses an optional whole number.
fn number(text: &[u8], field: &'static str, what: &str) -> Result<Option<u64>, FieldError> {
    let text = std::str::from_utf8(text).unwrap_or("?").trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| (Some(field), format!("`{text}` is not {what}")))
}

/// Lines of a text trace, counted, blank lines and `#` comments skipped.
struct Lines<R> {
    input: R,
    /// The number of the last line read.
    line: u64,
    text: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    fn new(input: R) -> Self {
        Lines { input, line: 0, text: Vec::new() }
    }

    /// Appends the next physical line to `text`; false at the end.
    fn more(&mut self) -> Result<bool, FieldError> {
        let room = MAX_LINE + 1 - (self.text.len() as u64).min(MAX_LINE);
        match (&mut self.input).take(room).read_until(b'\n', &mut self.text) {
            Ok(0) => Ok(false),
            Ok(_) if self.text.len() as u64 > MAX_LINE => {
                Err((None, "line over kvtune's 1 GiB limit".into()))
            }
            Ok(_) => {
                self.line += 1;
                // A byte order mark some editors put first is not text.
                if self.line == 1 && self.text.starts_with(b"\xEF\xBB\xBF") {
                    self.text.drain(..3);
                }
                Ok(true)
            }
            Err(e) => Err((None, format!("cannot read: {e}"))),
        }
    }

    /// Reads the next line that is not blank or a comment; its number, or
    /// `None` at the end.
    fn next(&mut self) -> Result<Option<u64>, FieldError> {
        loop {
            self.text.clear();
            if !self.more()? {
                return Ok(None);
            }
            let content = self.text.trim_ascii();
            if !content.is_empty() && !content.starts_with(b"#") {
                return Ok(Some(self.line));
            }
        }
    }
}

/// `text` without its line ending.
fn chomp(text: &[u8]) -> &[u8] {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    text.strip_suffix(b"\r").unwrap_or(text)
}

/// Splits a CSV record (RFC 4180: fields in double quotes may hold commas,
/// line breaks and doubled quotes) into `fields`, ranges of `out`. False if
/// a quote is still open at the end: the record goes on on the next line.
fn split_csv(text: &[u8], out: &mut Vec<u8>, fields: &mut Vec<Range<usize>>) -> Result<bool, FieldError> {
    out.clear();
    fields.clear();
    let text = chomp(text);
    let mut i = 0;
    loop {
        let start = out.len();
        if text.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match (text.get(i), text.get(i + 1)) {
                    (None, _) => return Ok(false),
                    (Some(b'"'), Some(b'"')) => {
                        out.push(b'"');
                        i += 2;
                    }
                    (Some(b'"'), _) => break,
                    (Some(&c), _) => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
            i += 1;
            if !matches!(text.get(i), None | Some(b',')) {
                return Err((
                    None,
                    format!("text after the quoted field {}: quote all of it", fields.len() + 1),
                ));
            }
        } else {
            let end = text[i..].iter().position(|&c| c == b',').map_or(text.len(), |p| i + p);
            out.extend_from_slice(&text[i..end]);
            i = end;
        }
        fields.push(start..out.len());
        if i >= text.len() {
            return Ok(true);
        }
        i += 1;
    }
}

/// CSV columns kvtune knows, in their default order.
const COLUMNS: [&str; 6] = ["op", "key", "arg", "time_us", "batch", "prefix"];

/// Reads a CSV trace.
pub struct CsvReader<R> {
    lines: Lines<R>,
    /// The record's first line, for errors.
    line: u64,
    unquoted: Vec<u8>,
    fields: Vec<Range<usize>>,
    /// Index of each of [`COLUMNS`] in a record, if present.
    columns: [Option<usize>; 6],
    /// Fields a record may have: the header's, else all six.
    width: usize,
    first: bool,
    staged: Staged,
}

impl<R: BufRead + Send> CsvReader<R> {
    pub fn new(input: R) -> Self {
        CsvReader {
            lines: Lines::new(input),
            line: 0,
            unquoted: Vec::new(),
            fields: Vec::new(),
            columns: [0, 1, 2, 3, 4, 5].map(Some),
            width: COLUMNS.len(),
            first: true,
            staged: Staged::default(),
        }
    }

    fn error(&self, (field, message): FieldError) -> TraceError {
        TraceError { at: At::Line { line: self.line, field }, message }
    }

    /// Reads the next record into `fields`; false at the end.
    fn read(&mut self) -> Result<bool, FieldError> {
        let Some(line) = self.lines.next()? else { return Ok(false) };
        self.line = line;
        while !split_csv(&self.lines.text, &mut self.unquoted, &mut self.fields)? {
            if !self.lines.more()? {
                return Err((None, "a quoted field is never closed".into()));
            }
        }
        Ok(true)
    }

    fn names(&self) -> impl Iterator<Item = &[u8]> {
        self.fields.iter().map(|r| self.unquoted[r.clone()].trim_ascii())
    }

    /// Whether the record is a header: it begins with `op`, or it names
    /// columns only, `op` among them.
    fn is_header(&self) -> bool {
        self.names().next() == Some(b"op")
            || (self.names().any(|n| n == b"op")
                && self.names().all(|n| COLUMNS.iter().any(|c| c.as_bytes() == n)))
    }

    /// Takes the column order from a header line.
    fn header(&mut self) -> Result<(), FieldError> {
        let mut columns = [None; 6];
        for (i, name) in self.names().enumerate() {
            let Some(c) = COLUMNS.iter().position(|c| c.as_bytes() == name) else {
                let name = String::from_utf8_lossy(name);
                return Err((None, format!("unknown column `{name}`: columns are {}", COLUMNS.join(", "))));
            };
            columns[c] = Some(i);
        }
        self.columns = columns;
        self.width = self.fields.len();
        match columns[1] {
            None => Err((None, "the header names no `key` column".into())),
            Some(_) => Ok(()),
        }
    }

    fn parse(&mut self) -> Result<Head, FieldError> {
        // Empty trailing fields (a spreadsheet's padding) are no trouble.
        if self.fields[self.width.min(self.fields.len())..].iter().any(|r| !r.is_empty()) {
            let message = format!("{} fields, but the lines have {} columns", self.fields.len(), self.width);
            return Err((None, message));
        }
        let (fields, unquoted, columns) = (&self.fields, &self.unquoted, &self.columns);
        let field = |c: usize| columns[c].and_then(|i| fields.get(i)).map(|r| &unquoted[r.clone()]);
        let op = std::str::from_utf8(field(0).unwrap_or(b"")).map_err(|_| (Some("op"), "not text".into()))?;
        let Some(kind) = OPS.iter().find(|(n, _)| *n == op.trim()).map(|(_, k)| *k) else {
            return Err((Some("op"), format!("unknown op `{op}`: ops are {}", op_names())));
        };
        let mut fields = Fields {
            op,
            key: field(1),
            keys: vec![],
            value: None,
            end: None,
            limit: None,
            prefix: number(field(5).unwrap_or(b""), "prefix", "a number of key bytes")?,
        };
        match (kind, field(2).filter(|a| !a.is_empty())) {
            (OpKind::Put | OpKind::Merge, Some(a)) => {
                fields.value = Some(match a.strip_prefix(b"size:") {
                    Some(n) => Value::Size(number(n, "arg", "a size: write size:N")?.unwrap_or(0)),
                    None => Value::Bytes(a),
                })
            }
            (OpKind::DeleteRange | OpKind::CompactRange, a) => fields.end = a,
            (OpKind::Scan, Some(a)) if op.trim() == "scan" => {
                fields.limit = number(a, "arg", "an entry limit")?
            }
            (_, Some(_)) => return Err((Some("arg"), format!("{} takes no arg", op.trim()))),
            _ => {}
        }
        let names = Names { value: "arg", end: "arg", limit: "arg" };
        let call = self.staged.stage(&fields, &names)?;
        Ok(Head {
            time_us: number(field(3).unwrap_or(b""), "time_us", "a time in microseconds")?,
            call,
            group: number(field(4).unwrap_or(b""), "batch", "a batch number")?,
        })
    }

    fn next_record(&mut self) -> Result<Option<Head>, FieldError> {
        if !self.read()? {
            return Ok(None);
        }
        if std::mem::take(&mut self.first) && self.is_header() {
            self.header()?;
            if !self.read()? {
                return Ok(None);
            }
        }
        self.parse().map(Some)
    }
}

impl<R: BufRead + Send> RecordReader for CsvReader<R> {
    fn next(&mut self) -> Result<Option<Head>, TraceError> {
        self.next_record().map_err(|e| self.error(e))
    }

    fn decode(&mut self, sink: &mut Sink) -> Result<(), TraceError> {
        self.staged.flush(sink);
        Ok(())
    }
}

/// A JSON line as written; strings borrow from the line where they can.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonLine<'a> {
    #[serde(borrow)]
    op: Cow<'a, str>,
    #[serde(borrow, default)]
    key: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    keys: Vec<Cow<'a, str>>,
    #[serde(borrow, default)]
    value: Option<Cow<'a, str>>,
    #[serde(default)]
    value_size: Option<u64>,
    #[serde(borrow, default)]
    end: Option<Cow<'a, str>>,
    #[serde(default)]
    limit: Option<u64>,
    #[serde(default)]
    prefix: Option<u64>,
    #[serde(default)]
    time_us: Option<u64>,
    #[serde(default)]
    batch: Option<u64>,
}

/// JSON fields and whether each is text (else a whole number; `keys` a list).
const JSON_FIELDS: [(&str, bool); 10] = [
    ("op", true),
    ("key", true),
    ("keys", true),
    ("value", true),
    ("value_size", false),
    ("end", true),
    ("limit", false),
    ("prefix", false),
    ("time_us", false),
    ("batch", false),
];

/// Which field of a line serde rejected, and why, found the slow way.
fn json_problem(line: &[u8], e: serde_json::Error) -> FieldError {
    let plain =
        |e: &serde_json::Error| format!("{e}").split(" at line ").next().unwrap_or_default().to_string();
    let value: serde_json::Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return (None, format!("not JSON: {} (column {})", plain(&e), e.column())),
    };
    let Some(map) = value.as_object() else {
        return (None, "expected an object, e.g. {\"op\":\"get\",\"key\":\"user:1\"}".into());
    };
    for (name, v) in map {
        let Some(&(field, text)) = JSON_FIELDS.iter().find(|(f, _)| f == name) else {
            let known: Vec<&str> = JSON_FIELDS.iter().map(|(f, _)| *f).collect();
            return (None, format!("unknown field `{name}`: fields are {}", known.join(", ")));
        };
        let ok = match (field, text) {
            ("keys", _) => v.as_array().is_some_and(|a| a.iter().all(|k| k.is_string())),
            (_, true) => v.is_string(),
            (_, false) => v.is_u64(),
        };
        if !ok {
            let want = match (field, text) {
                ("keys", _) => "a list of keys",
                (_, true) => "text",
                (_, false) => "a whole number",
            };
            return (Some(field), format!("expected {want}, found {v}"));
        }
    }
    match map.contains_key("op") {
        false => (Some("op"), "missing".into()),
        true => (None, plain(&e)),
    }
}

/// Reads a JSON lines trace.
pub struct JsonlReader<R> {
    lines: Lines<R>,
    staged: Staged,
}

impl<R: BufRead + Send> JsonlReader<R> {
    pub fn new(input: R) -> Self {
        JsonlReader { lines: Lines::new(input), staged: Staged::default() }
    }

    fn error(&self, (field, message): FieldError) -> TraceError {
        TraceError { at: At::Line { line: self.lines.line, field }, message }
    }

    fn parse(&mut self) -> Result<Head, FieldError> {
        let text = &self.lines.text;
        let line: JsonLine = serde_json::from_slice(text).map_err(|e| json_problem(text, e))?;
        let value = match (&line.value, line.value_size) {
            (Some(_), Some(_)) => {
                return Err((Some("value_size"), "give value or value_size, not both".into()))
            }
            (Some(v), None) => Some(Value::Bytes(v.as_bytes())),
            (None, Some(n)) => Some(Value::Size(n)),
            (None, None) => None,
        };
        let fields = Fields {
            op: &line.op,
            key: line.key.as_deref().map(str::as_bytes),
            keys: line.keys.iter().map(|k| k.as_bytes()).collect(),
            value,
            end: line.end.as_deref().map(str::as_bytes),
            limit: line.limit,
            prefix: line.prefix,
        };
        let names = Names { value: "value", end: "end", limit: "limit" };
        let call = self.staged.stage(&fields, &names)?;
        Ok(Head { time_us: line.time_us, call, group: line.batch })
    }

    fn next_record(&mut self) -> Result<Option<Head>, FieldError> {
        match self.lines.next()? {
            None => Ok(None),
            Some(_) => self.parse().map(Some),
        }
    }
}

impl<R: BufRead + Send> RecordReader for JsonlReader<R> {
    fn next(&mut self) -> Result<Option<Head>, TraceError> {
        self.next_record().map_err(|e| self.error(e))
    }

    fn decode(&mut self, sink: &mut Sink) -> Result<(), TraceError> {
        self.staged.flush(sink);
        Ok(())
    }
}

/// Text of a key as the readers take it: itself if printable and not
/// mistakable for hex, else `0x` and hex.
fn key_text(key: &[u8]) -> Cow<'_, str> {
    let printable = key.iter().all(|&c| (0x20..0x7F).contains(&c));
    match printable && !key.starts_with(b"0x") {
        true => Cow::Borrowed(std::str::from_utf8(key).expect("ASCII")),
        false => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let mut s = String::with_capacity(2 + 2 * key.len());
            s.push_str("0x");
            for b in key {
                s.push(HEX[(b >> 4) as usize] as char);
                s.push(HEX[(b & 15) as usize] as char);
            }
            Cow::Owned(s)
        }
    }
}

/// The op name a text trace gives `op`.
fn op_name(op: &Op) -> &'static str {
    let name = OPS.iter().find(|(n, k)| *k == op.kind && *n != "seek").map(|(n, _)| *n);
    name.expect("every kind has a name")
}

/// A JSON line as kvtune writes it.
#[derive(Serialize)]
struct JsonOut<'a> {
    op: &'static str,
    key: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value_size: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prefix: Option<u16>,
    batch: u64,
}

/// Writes kvtune batches as a CSV or JSON lines trace: every op a line, the
/// batch's number in `batch` so the batches (and their atomic writes) come
/// back as they were; values as their size.
pub struct TextWriter<W: Write> {
    out: W,
    json: bool,
    batch: u64,
    line: Vec<u8>,
}

/// Appends a CSV field, quoted where it must be.
fn csv_field(out: &mut Vec<u8>, text: &str) {
    let plain = !text.contains([',', '"', '\r', '\n']) && text.trim() == text;
    if plain {
        return out.extend_from_slice(text.as_bytes());
    }
    out.push(b'"');
    out.extend_from_slice(text.replace('"', "\"\"").as_bytes());
    out.push(b'"');
}

impl<W: Write> TextWriter<W> {
    pub fn csv(mut out: W) -> io::Result<Self> {
        writeln!(out, "{}", COLUMNS.join(","))?;
        Ok(TextWriter { out, json: false, batch: 0, line: Vec::new() })
    }

    pub fn jsonl(out: W) -> Self {
        TextWriter { out, json: true, batch: 0, line: Vec::new() }
    }

    pub fn write_batch(&mut self, batch: &Batch) -> io::Result<()> {
        for op in &batch.ops {
            let (key, end) = match op.kind {
                OpKind::DeleteRange | OpKind::CompactRange => {
                    let (start, end) = batch.range(op);
                    (key_text(start), Some(key_text(end)))
                }
                _ => (key_text(batch.key(op)), None),
            };
            let line = JsonOut {
                op: op_name(op),
                key,
                value_size: matches!(op.kind, OpKind::Put | OpKind::Merge).then_some(op.value.len()),
                end,
                limit: (op.kind == OpKind::Scan).then_some(op.arg),
                prefix: (op.prefix > 0).then_some(op.prefix),
                batch: self.batch,
            };
            self.line(&line)?;
        }
        self.batch += 1;
        Ok(())
    }

    fn line(&mut self, l: &JsonOut) -> io::Result<()> {
        self.line.clear();
        if self.json {
            serde_json::to_writer(&mut self.line, l)?;
        } else {
            let arg = match (l.value_size, &l.end, l.limit) {
                (Some(n), _, _) => format!("size:{n}"),
                (_, Some(end), _) => end.to_string(),
                (_, _, Some(limit)) => limit.to_string(),
                _ => String::new(),
            };
            let prefix = l.prefix.map(|p| p.to_string()).unwrap_or_default();
            let fields = [l.op, &l.key, &arg, "", &l.batch.to_string(), &prefix];
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    self.line.push(b',');
                }
                csv_field(&mut self.line, field);
            }
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
