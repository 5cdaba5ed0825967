//! kvtune: finds the best option set for an embedded key-value engine
//! (RocksDB first) for a workload inside a memory budget, and proves it with
//! measurements. The binary is a thin layer over [`commands`].
//!
//! Data moves one way: `space` -> `search` -> `trial` (through `engine` and
//! `replay`) -> `record` -> `study` (journal, verdict) -> `outcome` ->
//! `report`. `record` and `outcome` hold the types the stages share, so no
//! stage imports one that imports it back.

pub mod budget;
pub mod cli;
pub mod commands;
pub mod dataset;
pub mod engine;
pub mod launch;
pub mod outcome;
pub mod racing;
pub mod record;
pub mod replay;
pub mod report;
pub mod scale;
pub mod search;
pub mod space;
pub mod stats;
pub mod study;
pub mod trial;
