//! Datasets: a TOML file naming a generator and its parameters, and the
//! generators that turn it into phases of operations. Built-in datasets live
//! in `datasets/` and are compiled in; a path to a file works as well.

pub mod ops;
pub mod spork;
mod values;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::budget::Shape;
use ops::OpSource;

/// Built-in datasets: name and file text.
pub const BUILT_IN: &[(&str, &str)] = &[("spork", include_str!("../../datasets/spork.toml"))];

/// A dataset file as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub generator: String,
    #[serde(default)]
    pub spork: Option<spork::SporkParams>,
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
    pub name: &'static str,
    pub source: Box<dyn OpSource + Send>,
    /// Leading operations run but not counted.
    pub warmup_ops: u64,
}

/// A dataset sized for one budget: it makes the phases' sources.
pub trait Workload {
    fn shape(&self) -> Shape;
    fn phase_names(&self) -> Vec<&'static str>;
    /// The phases in order, deterministic for the seed.
    fn phases(&self, seed: u64) -> Vec<Phase>;
}

impl Dataset {
    /// A built-in name or a path to a dataset file.
    pub fn find(name_or_path: &str) -> Result<Self, DatasetError> {
        if let Some((_, text)) = BUILT_IN.iter().find(|(name, _)| *name == name_or_path) {
            return Self::parse(name_or_path, text);
        }
        let path = Path::new(name_or_path);
        if name_or_path.ends_with(".toml") || path.exists() {
            let text = std::fs::read_to_string(path)
                .map_err(|source| DatasetError::Read { path: name_or_path.to_string(), source })?;
            return Self::parse(name_or_path, &text);
        }
        let known: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        Err(DatasetError::Unknown { name: name_or_path.to_string(), known: known.join(", ") })
    }

    pub fn parse(path: &str, text: &str) -> Result<Self, DatasetError> {
        let parse_err = |message: String| DatasetError::Parse { path: path.to_string(), message };
        let dataset: Dataset = toml::from_str(text).map_err(|e| parse_err(e.to_string()))?;
        dataset.params_problem().map(parse_err).map_or(Ok(dataset), Err)
    }

    fn params_problem(&self) -> Option<String> {
        match (self.generator.as_str(), &self.spork) {
            ("spork", Some(p)) => p.problem(),
            ("spork", None) => Some("generator `spork` needs a [spork] table".into()),
            (other, _) => Some(format!("unknown generator `{other}`: known generators are spork")),
        }
    }

    /// The workload at a budget of `budget` bytes (already scaled).
    pub fn workload(&self, budget: u64) -> Box<dyn Workload> {
        match &self.spork {
            Some(params) => Box::new(spork::Spork::new(params.clone(), budget)),
            None => unreachable!("checked when parsed"),
        }
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
    fn bad_field_names_the_key() {
        let text = BUILT_IN[0].1.replace("zipf_exponent", "zipf_exponnent");
        let err = Dataset::parse("x.toml", &text).unwrap_err().to_string();
        assert!(err.contains("x.toml") && err.contains("zipf_exponnent"), "{err}");
    }
}
