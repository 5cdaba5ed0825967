//! Datasets: a TOML file naming a generator and its parameters, and the
//! generators that turn it into phases of operations. Built-in datasets live
//! in `datasets/` and are compiled in; a path to a file works as well.

pub mod mixgraph;
pub mod ops;
pub mod spork;
pub mod tbs;
pub mod trace;
pub mod tsdb;
mod values;
pub mod ycsb;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::budget::Shape;
use ops::OpSource;

/// Built-in datasets: name and file text.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("spork", include_str!("../../datasets/spork.toml")),
    ("tbs", include_str!("../../datasets/tbs.toml")),
    ("tsdb", include_str!("../../datasets/tsdb.toml")),
    ("mixgraph", include_str!("../../datasets/mixgraph.toml")),
    ("ycsb-a", include_str!("../../datasets/ycsb-a.toml")),
    ("ycsb-b", include_str!("../../datasets/ycsb-b.toml")),
    ("ycsb-c", include_str!("../../datasets/ycsb-c.toml")),
    ("ycsb-d", include_str!("../../datasets/ycsb-d.toml")),
    ("ycsb-e", include_str!("../../datasets/ycsb-e.toml")),
    ("ycsb-f", include_str!("../../datasets/ycsb-f.toml")),
];

/// The generators a dataset file can name.
const GENERATORS: &str = "spork, tbs, tsdb, mixgraph, ycsb, trace";

/// A dataset file as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    pub name: String,
    /// The file it was read from, if not built in: what a preset points
    /// back to, so `bench --preset` finds the same workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<std::path::PathBuf>,
    #[serde(default)]
    pub description: String,
    /// The real system modelled and the sources read for it.
    #[serde(default)]
    pub source: String,
    pub generator: String,
    /// User data written over the budget. Unset: the modelled system's own
    /// ratio (what the generator's parameters give); set (`--data-ratio`)
    /// to study data larger or smaller than memory. Kept under scaling.
    #[serde(default)]
    pub data_ratio: Option<f64>,
    /// How many leading key bytes the reads stay within (a register's
    /// versions, a trace's events): what a prefix extractor would use.
    #[serde(default)]
    pub prefix_len: Option<u16>,
    /// Whether the modelled application tolerates RocksDB's unordered
    /// writes (a reader may see a later write before an earlier one and
    /// snapshots are not repeatable): only then may `unordered_write` run.
    #[serde(default)]
    pub writes_allow_unordered: bool,
    /// What this dataset's users optimise: `throughput` (whole replay),
    /// `phase:NAME` (one phase's throughput), `latency:PHASE:PCT` or
    /// `bytes_per_key` (the default of `--objective`).
    #[serde(default)]
    pub objective: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spork: Option<spork::SporkParams>,
    #[serde(default)]
    pub tbs: Option<tbs::TbsParams>,
    #[serde(default)]
    pub tsdb: Option<tsdb::TsdbParams>,
    #[serde(default)]
    pub mixgraph: Option<mixgraph::MixgraphParams>,
    #[serde(default)]
    pub ycsb: Option<ycsb::YcsbParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<trace::TraceParams>,
}

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error(
        "unknown dataset `{name}`: known datasets are {known}; or give the path of a dataset .toml file"
    )]
    Unknown { name: String, known: String },
    #[error("cannot read dataset file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("dataset {path} is not valid: {message}")]
    Parse { path: String, message: String },
}

/// One phase of a workload.
pub struct Phase {
    pub name: String,
    pub source: Box<dyn OpSource + Send>,
    /// Leading operations run but not counted.
    pub warmup_ops: u64,
}

/// What a dataset's users count their data in besides keys (InfluxDB's
/// points), so disk size is also given per unit, as they quote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataUnit {
    pub name: String,
    /// Units the whole workload writes.
    pub count: u64,
}

/// The budget [`Dataset::deletes_ranges`] builds a workload at: any would do.
const RANGE_DELETES_PROBE_BUDGET: u64 = 64 << 20;

/// A dataset sized for one budget: it makes the phases' sources.
pub trait Workload {
    fn shape(&self) -> Shape;
    fn phase_names(&self) -> Vec<String>;
    /// The unit its users count data in, if not keys.
    fn data_unit(&self) -> Option<DataUnit> {
        None
    }
    /// The phases in order, deterministic for the seed.
    fn phases(&self, seed: u64) -> Vec<Phase>;
    /// What a reader of `kvtune datasets` should know of it at this budget
    /// (a trace says how much of itself it replays, and at what pace).
    fn notes(&self) -> Vec<String> {
        vec![]
    }
    /// Whether its replay may delete key ranges, at any budget: RocksDB
    /// cannot serve range deletes beside a row cache.
    fn deletes_ranges(&self) -> bool {
        false
    }
}

impl Dataset {
    /// A built-in name, a path to a dataset file, or a path to a trace file
    /// (a one-phase `trace` dataset). A trace dataset's files are read once
    /// here, so a trace that cannot be replayed fails now.
    pub fn find(name_or_path: &str) -> Result<Self, DatasetError> {
        if let Some((_, text)) = BUILT_IN.iter().find(|(name, _)| *name == name_or_path) {
            return Self::parse(name_or_path, text);
        }
        let path = Path::new(name_or_path);
        if name_or_path.ends_with(".toml") || path.exists() {
            let mut dataset = match trace::Format::sniff(path) {
                Some(format) => Self::of_trace(path, format),
                None => {
                    let text = std::fs::read_to_string(path)
                        .map_err(|source| DatasetError::Read { path: name_or_path.to_string(), source })?;
                    Self::parse(name_or_path, &text)?
                }
            };
            if let Some(params) = &mut dataset.trace {
                params.resolve(path.parent().unwrap_or(Path::new("")));
                let parse_err = |message| DatasetError::Parse { path: name_or_path.to_string(), message };
                params.check().map_err(parse_err)?;
            }
            dataset.file = Some(std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
            return Ok(dataset);
        }
        let known: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        Err(DatasetError::Unknown { name: name_or_path.to_string(), known: known.join(", ") })
    }

    pub fn parse(path: &str, text: &str) -> Result<Self, DatasetError> {
        let parse_err = |message: String| DatasetError::Parse { path: path.to_string(), message };
        let dataset: Dataset = toml::from_str(text).map_err(|e| parse_err(e.to_string()))?;
        dataset.params_problem().map(parse_err).map_or(Ok(dataset), Err)
    }

    /// A trace file as a one-phase dataset named after the file.
    fn of_trace(path: &Path, format: trace::Format) -> Self {
        Dataset {
            name: path.file_stem().map_or("trace".into(), |s| s.to_string_lossy().into_owned()),
            file: None,
            description: format!("the {format} trace {}", path.display()),
            source: path.display().to_string(),
            generator: "trace".into(),
            data_ratio: None,
            prefix_len: None,
            objective: None,
            spork: None,
            tbs: None,
            tsdb: None,
            mixgraph: None,
            ycsb: None,
            writes_allow_unordered: false,
            trace: Some(trace::single(path, format)),
        }
    }

    fn params_problem(&self) -> Option<String> {
        let needs = |table: &str| Some(format!("generator `{table}` needs a [{table}] table"));
        match self.generator.as_str() {
            "spork" => self.spork.as_ref().map_or_else(|| needs("spork"), |p| p.problem()),
            "tbs" => self.tbs.as_ref().map_or_else(|| needs("tbs"), |p| p.problem()),
            "tsdb" => self.tsdb.as_ref().map_or_else(|| needs("tsdb"), |p| p.problem()),
            "mixgraph" => self.mixgraph.as_ref().map_or_else(|| needs("mixgraph"), |p| p.problem()),
            "ycsb" => self.ycsb.as_ref().map_or_else(|| needs("ycsb"), |p| p.problem()),
            "trace" => self.trace.as_ref().map_or_else(|| needs("trace"), |p| p.problem()),
            other => Some(format!("unknown generator `{other}`: known generators are {GENERATORS}")),
        }
    }

    /// The workload at a budget of `budget` bytes (already scaled), its
    /// data `data_ratio` times the budget where that is set.
    pub fn workload(&self, budget: u64) -> Box<dyn Workload> {
        let native = self.build(budget, 1.0);
        match self.data_ratio {
            None => native,
            Some(ratio) => {
                self.build(budget, ratio * budget as f64 / native.shape().user_bytes.max(1) as f64)
            }
        }
    }

    /// Whether its replay may delete key ranges (see [`Workload::deletes_ranges`]);
    /// the same at every budget.
    pub fn deletes_ranges(&self) -> bool {
        self.build(RANGE_DELETES_PROBE_BUDGET, 1.0).deletes_ranges()
    }

    /// User data over the budget at the generator's own sizes.
    pub fn native_ratio(&self, budget: u64) -> f64 {
        self.build(budget, 1.0).shape().user_bytes as f64 / budget.max(1) as f64
    }

    /// The generator's workload at `budget`, every count times `size`.
    fn build(&self, budget: u64, size: f64) -> Box<dyn Workload> {
        match self.generator.as_str() {
            "spork" => {
                Box::new(spork::Spork::new(self.spork.clone().expect("checked when parsed"), budget, size))
            }
            "tbs" => Box::new(tbs::Tbs::new(self.tbs.clone().expect("checked when parsed"), budget, size)),
            "tsdb" => {
                Box::new(tsdb::Tsdb::new(self.tsdb.clone().expect("checked when parsed"), budget, size))
            }
            "mixgraph" => Box::new(mixgraph::Mixgraph::new(
                self.mixgraph.clone().expect("checked when parsed"),
                budget,
                size,
            )),
            "ycsb" => {
                Box::new(ycsb::Ycsb::new(self.ycsb.clone().expect("checked when parsed"), budget, size))
            }
            "trace" => {
                Box::new(trace::Trace::new(self.trace.clone().expect("checked when parsed"), budget, size))
            }
            _ => unreachable!("checked when parsed"),
        }
    }

    /// This dataset replayed at `pace`: only a trace has a recorded pace.
    pub fn with_pace(mut self, pace: trace::Pace) -> Result<Self, DatasetError> {
        match &mut self.trace {
            Some(params) => params.pace = pace,
            None if pace == trace::Pace::Fast => {}
            None => {
                return Err(DatasetError::Parse {
                    path: self.name.clone(),
                    message: "--pace recorded needs a trace dataset: a generated one has no recorded times"
                        .into(),
                })
            }
        }
        Ok(self)
    }

    /// This dataset with its data `ratio` times the budget.
    pub fn with_data_ratio(mut self, ratio: f64) -> Result<Self, DatasetError> {
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(DatasetError::Parse {
                path: self.name.clone(),
                message: format!(
                    "--data-ratio {ratio}: give a number above 0, e.g. 0.5 (data half the budget) or 4"
                ),
            });
        }
        self.data_ratio = Some(ratio);
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_dataset_lists_the_known_ones() {
        let err = Dataset::find("nope").unwrap_err().to_string();
        assert!(err.contains("`nope`") && err.contains("spork"), "{err}");
    }

    #[test]
    fn every_built_in_parses_and_generator_mistakes_are_named() {
        for (name, _) in BUILT_IN {
            let dataset = Dataset::find(name).unwrap();
            assert_eq!(&dataset.name, name);
            assert!(!dataset.build(64 << 20, 1.0).phase_names().is_empty());
        }
        let text = BUILT_IN[0].1.replace("generator = \"spork\"", "generator = \"nope\"");
        let err = Dataset::parse("x.toml", &text).unwrap_err().to_string();
        assert!(err.contains("`nope`") && err.contains("spork, tbs, tsdb"), "{err}");
        let text = BUILT_IN[1].1.replace("generator = \"tbs\"", "generator = \"tsdb\"");
        let err = Dataset::parse("x.toml", &text).unwrap_err().to_string();
        assert!(err.contains("generator `tsdb` needs a [tsdb] table"), "{err}");
    }

    #[test]
    fn every_built_in_dataset_parses_and_builds() {
        for (name, _) in BUILT_IN {
            let dataset = Dataset::find(name).unwrap();
            assert_eq!(&dataset.name, name);
            let workload = dataset.workload(256 << 20);
            assert!(workload.shape().keys > 0 && workload.shape().user_bytes > 0, "{name}");
            assert_eq!(workload.phases(1).len(), workload.phase_names().len(), "{name}");
        }
    }

    #[test]
    fn a_generator_without_its_table_is_refused() {
        let text = BUILT_IN.iter().find(|(n, _)| *n == "ycsb-a").unwrap().1;
        let err = Dataset::parse("x.toml", &text[..text.find("[ycsb]").unwrap()]).unwrap_err().to_string();
        assert!(err.contains("x.toml") && err.contains("needs a [ycsb] table"), "{err}");
        let err = Dataset::parse("y.toml", "name = \"y\"\ngenerator = \"nope\"").unwrap_err().to_string();
        assert!(err.contains("spork, tbs, tsdb, mixgraph, ycsb"), "{err}");
    }

    #[test]
    fn bad_field_names_the_key() {
        let text = BUILT_IN[0].1.replace("zipf_exponent", "zipf_exponnent");
        let err = Dataset::parse("x.toml", &text).unwrap_err().to_string();
        assert!(err.contains("x.toml") && err.contains("zipf_exponnent"), "{err}");
    }
}
