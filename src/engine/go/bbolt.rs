//! bbolt (go.etcd.io/bbolt), the B+tree behind etcd and, as BoltDB, InfluxDB's
//! bz1 engine. It holds no cache of its own: the file is mapped, and what it
//! reads is page cache that the trial's cgroup counts.

use super::{model, GoSpec, Native};
use crate::engine::knob::{flag, float, int, text, Kind, Knob, Settings};
use crate::engine::Scaling;
use crate::space::Value;

pub static BBOLT: GoSpec = GoSpec {
    name: "bbolt",
    module: "go.etcd.io/bbolt v1.5.0",
    knobs: KNOBS,
    memory: |_| model(0, 0, 0.0, 0.0),
    code,
    // bbolt has no memory options: its fitted defaults are its own.
    shipped: None,
    writes_options: None,
};

const KNOBS: &[Knob<Native>] = &[
    Knob {
        name: "page_size",
        help: "page size in bytes, a power of two (bbolt's default: the OS page, 4096)",
        kind: Kind::Int { min: 1024, max: 1 << 20 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(4096),
        apply: |n, v| {
            let asked = int(v) as u64;
            let ran = asked.next_power_of_two();
            let ran = if ran - asked > asked - ran / 2 { ran / 2 } else { ran };
            if ran != asked {
                n.replace(
                    "page_size",
                    Value::from(ran),
                    "bbolt's pages are a power of two: the nearest one ran".into(),
                );
            }
            n.set("page_size", Value::from(ran));
        },
    },
    Knob {
        name: "fill_percent",
        help: "how full a page is left when it splits (Bucket.FillPercent): high for appends in key order",
        kind: Kind::Float { min: 0.1, max: 1.0 },
        scaling: Scaling::Fixed,
        default: |_| Value::Float(0.5),
        apply: |n, v| n.set("fill_percent", float(v)),
    },
    Knob {
        name: "freelist_type",
        help:
            "how the free page list is kept: array (bbolt's default) or hashmap (faster with many free pages)",
        kind: Kind::Choice(&["array", "hashmap"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("array"),
        apply: |n, v| n.set("freelist_type", text(v)),
    },
    Knob {
        name: "no_sync",
        help: "skip the fsync at each commit (DB.NoSync): faster, and a crash may corrupt the file",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |n, v| n.set("no_sync", flag(v)),
    },
    Knob {
        name: "no_freelist_sync",
        help: "do not write the free list at each commit; it is rebuilt by a scan on open",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |n, v| n.set("no_freelist_sync", flag(v)),
    },
    Knob {
        name: "initial_mmap_share",
        help: "initial size of the file's mapping as a share of the budget, 0 to grow it as the file grows \
               (a growing map is remapped, which waits for readers)",
        kind: Kind::Share,
        scaling: Scaling::Budget,
        default: |_| Value::Float(0.0),
        apply: |n, v| n.set_bytes("initial_mmap_size", n.share(v)),
    },
    Knob {
        name: "mmap_populate",
        help: "read the whole mapping in when it is made (MAP_POPULATE)",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |n, v| n.set("mmap_populate", flag(v)),
    },
];

fn code(n: &Native) -> String {
    let v = |name: &str| n.text(name);
    let freelist = if v("freelist_type") == "hashmap" { "FreelistMapType" } else { "FreelistArrayType" };
    let flags = if v("mmap_populate") == "true" { "syscall.MAP_POPULATE" } else { "0" };
    format!(
        "db, err := bolt.Open(path, 0o600, &bolt.Options{{\n\
         \tPageSize:        {page},\n\
         \tFreelistType:    bolt.{freelist},\n\
         \tNoFreelistSync:  {nofree},\n\
         \tInitialMmapSize: {mmap},\n\
         \tMmapFlags:       {flags},\n}})\n\
         db.NoSync = {nosync}\n\
         // and in each read-write transaction, on each bucket it writes:\n\
         bucket.FillPercent = {fill}\n",
        page = v("page_size"),
        nofree = v("no_freelist_sync"),
        mmap = v("initial_mmap_size"),
        nosync = v("no_sync"),
        fill = v("fill_percent"),
    )
}
