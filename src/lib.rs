//! kvtune: finds the best option set for an embedded key-value engine
//! (RocksDB first) for a workload inside a memory budget, and proves it with
//! measurements. The binary is a thin layer over [`commands`].

pub mod budget;
pub mod cli;
pub mod commands;
pub mod dataset;
pub mod engine;
pub mod replay;
pub mod report;
pub mod scale;
pub mod search;
pub mod space;
pub mod stats;
pub mod study;
pub mod trial;
