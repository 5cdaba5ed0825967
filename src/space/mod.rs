//! Search spaces: the parameters a study may change, loaded from TOML files
//! such as `search-spaces/rocksdb.toml`, and the candidates drawn from them.

mod param;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rand::Rng;
use serde::Deserialize;

pub use param::{Domain, Param, Setting, SettingError, Value, SPECIAL_SHARE};

/// One option set to try: parameter name to value. Parameters the space does
/// not name keep the engine's defaults.
pub type Candidate = BTreeMap<String, Value>;

/// A parsed, checked search space.
#[derive(Debug, Clone)]
pub struct Space {
    pub name: String,
    pub description: String,
    pub params: Vec<Param>,
    /// Named candidates an engineer would try first (RocksDB's tuning guide),
    /// run before any sampler's own proposals; they may set parameters the
    /// space does not search.
    pub seeds: Vec<(String, Candidate)>,
    /// The data a seed is for, where the file says (`[seed_when.NAME]`).
    pub seed_when: BTreeMap<String, SeedWhen>,
    /// The file's text, kept so a journal can rebuild the space on resume.
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SpaceError {
    #[error("cannot read search space {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("search space {path} is not valid TOML: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("search space {path}, parameter `{param}`: {problem}")]
    Param { path: PathBuf, param: String, problem: String },
    #[error("search space {path} declares no parameters: add [params.NAME] tables")]
    Empty { path: PathBuf },
    #[error("search space `{name}` is neither a file nor a built-in space; built-in spaces are {known}")]
    Unknown { name: String, known: String },
    #[error("search space {path}, seed `{seed}`: `{param}`: the engine has no parameter of this name; known are: {known}")]
    Seed { path: PathBuf, seed: String, param: String, known: String },
    #[error("search space {path}, [seeds.{seed}] `base`: {problem}")]
    SeedBase { path: PathBuf, seed: String, problem: String },
    #[error("search space {path}, [seed_when.{seed}]: {problem}")]
    SeedWhen { path: PathBuf, seed: String, problem: String },
}

/// When a seed is worth a trial, by the data the study replays, as the
/// defaults' first run left it on disk: a seed made for data larger than
/// memory (a small block cache, leaving memory to the page cache) costs a
/// trial where the data fits, one for large values (blob files) where the
/// values are small. The measure is the database on disk, which the page
/// cache must hold, not the user data: spork's is 1.03 times the budget but
/// compresses to 0.65 on disk.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedWhen {
    /// The seed runs only where the defaults' database is at least this
    /// many times the budget.
    pub min_disk_ratio: Option<f64>,
    /// The seed runs only where the defaults' database holds at least this
    /// many bytes a key (keys and values, compressed, over the keys).
    pub min_bytes_per_key: Option<f64>,
}

impl SeedWhen {
    /// Why the seed is not worth a trial where the defaults' database was
    /// `disk_ratio` times the budget with `bytes_per_key` (unmeasured: no
    /// reason), or `None`.
    pub fn rules_out(&self, disk_ratio: f64, bytes_per_key: Option<f64>) -> Option<String> {
        if let Some(min) = self.min_disk_ratio.filter(|min| disk_ratio < *min) {
            return Some(format!(
                "it is for a database of at least {min} times the budget on disk, and the defaults' was {disk_ratio:.2} times"
            ));
        }
        let (min, had) = self.min_bytes_per_key.zip(bytes_per_key).filter(|(min, had)| had < min)?;
        Some(format!("it is for values large enough to leave at least {min:.0} bytes a key on disk, and the defaults' database had {had:.0}"))
    }

    /// What is wrong with the condition as written, if anything.
    fn problem(&self) -> Option<String> {
        let named = [
            ("min_disk_ratio", self.min_disk_ratio, "the database on disk over the budget"),
            ("min_bytes_per_key", self.min_bytes_per_key, "bytes on disk a key"),
        ];
        if named.iter().all(|(_, value, _)| value.is_none()) {
            return Some("no condition: give min_disk_ratio or min_bytes_per_key".into());
        }
        named.iter().find_map(|(name, value, what)| {
            let bad = value.filter(|v| !(v.is_finite() && *v > 0.0))?;
            Some(format!("{name} = {bad}: give a positive number ({what})"))
        })
    }
}

/// Built-in search spaces: name and file text.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("rocksdb", include_str!("../../search-spaces/rocksdb.toml")),
    ("badger-thread", include_str!("../../search-spaces/badger-thread.toml")),
    ("table-spork", include_str!("../../search-spaces/table-spork.toml")),
    ("pebble", include_str!("../../search-spaces/pebble.toml")),
    ("badger", include_str!("../../search-spaces/badger.toml")),
    ("bbolt", include_str!("../../search-spaces/bbolt.toml")),
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpaceFile {
    #[serde(default)]
    description: String,
    params: BTreeMap<String, Param>,
    #[serde(default)]
    seeds: indexmap::IndexMap<String, Candidate>,
    #[serde(default)]
    seed_when: BTreeMap<String, SeedWhen>,
}

/// The key a seed names another by, whose settings it starts from: the
/// large-values seed is the tuning guide's with blob files, stated once.
const SEED_BASE: &str = "base";

type Seeds = indexmap::IndexMap<String, Candidate>;

fn seed_names(seeds: &Seeds) -> String {
    seeds.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
}

/// `seeds` with each `base = "NAME"` replaced by the settings of NAME, a
/// seed written before it (so bases form no cycle), then the seed's own;
/// else the seed and what is wrong with its base.
fn with_bases(seeds: Seeds) -> Result<Seeds, (String, String)> {
    let mut done = Seeds::new();
    for (name, mut own) in seeds {
        if let Some(base) = own.remove(SEED_BASE) {
            let Value::Str(base) = base else {
                return Err((name, format!("{base} is not a seed's name: give one in quotes")));
            };
            let Some(settings) = done.get(&base) else {
                let earlier = match done.is_empty() {
                    true => "none".to_string(),
                    false => seed_names(&done),
                };
                return Err((
                    name,
                    format!("no seed `{base}` written before this one; those are: {earlier}"),
                ));
            };
            let mut merged = settings.clone();
            merged.extend(own);
            own = merged;
        }
        done.insert(name, own);
    }
    Ok(done)
}

impl Space {
    /// A built-in space by name, or a space file by path; `known` are the
    /// parameter names the engine has.
    pub fn find(name_or_path: &str, known: &[&str]) -> Result<Self, SpaceError> {
        if let Some((name, text)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
            return Self::parse(name, text, known);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            let known: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
            return Err(SpaceError::Unknown { name: name_or_path.to_string(), known: known.join(", ") });
        }
        Self::load(path, known)
    }

    /// Reads a space file; `known` are the parameter names the engine has.
    pub fn load(path: &Path, known: &[&str]) -> Result<Self, SpaceError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| SpaceError::Read { path: path.to_path_buf(), source })?;
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Self::parse(&name, &text, known).map_err(|err| err.at(path))
    }

    /// Parses the text of a space file; errors name the parameter at fault.
    pub fn parse(name: &str, text: &str, known: &[&str]) -> Result<Self, SpaceError> {
        let path = PathBuf::from(name);
        let file: SpaceFile = toml::from_str(text)
            .map_err(|err| SpaceError::Parse { path: path.clone(), message: err.to_string() })?;
        if file.params.is_empty() {
            return Err(SpaceError::Empty { path });
        }
        let seeds = with_bases(file.seeds).map_err(|(seed, problem)| SpaceError::SeedBase {
            path: path.clone(),
            seed,
            problem,
        })?;
        for (seed, candidate) in &seeds {
            if let Some(param) = candidate.keys().find(|name| !known.contains(&name.as_str())) {
                return Err(SpaceError::Seed {
                    path,
                    seed: seed.clone(),
                    param: param.clone(),
                    known: known.join(", "),
                });
            }
        }
        for (seed, when) in &file.seed_when {
            let problem = if !seeds.contains_key(seed) {
                match seeds.is_empty() {
                    true => "no seed of this name; the file has no [seeds.NAME]".into(),
                    false => format!("no seed of this name; the seeds are: {}", seed_names(&seeds)),
                }
            } else if let Some(problem) = when.problem() {
                problem
            } else {
                continue;
            };
            return Err(SpaceError::SeedWhen { path, seed: seed.clone(), problem });
        }
        let mut params = Vec::with_capacity(file.params.len());
        for (param_name, mut param) in file.params {
            let problem = match known.contains(&param_name.as_str()) {
                true => param.problem(),
                false => {
                    Some(format!("the engine has no parameter of this name; known are: {}", known.join(", ")))
                }
            };
            if let Some(problem) = problem {
                return Err(SpaceError::Param { path, param: param_name, problem });
            }
            param.name = param_name;
            params.push(param);
        }
        let seeds = seeds.into_iter().collect();
        Ok(Space {
            name: name.to_string(),
            description: file.description,
            params,
            seeds,
            seed_when: file.seed_when,
            text: text.to_string(),
        })
    }

    /// The same space without the parameters `held` names (a dataset holds
    /// them at one value): a search does not vary what no candidate may
    /// change, nor spends its design and pool on candidates that would.
    pub fn without(&self, held: &[&str]) -> Space {
        let mut space = self.clone();
        space.params.retain(|p| !held.contains(&p.name.as_str()));
        space
    }

    /// A candidate drawn uniformly (log-uniformly where declared), each
    /// parameter taking one of its special values (0, off, the default)
    /// with probability [`SPECIAL_SHARE`], as LlamaTune samples them.
    pub fn sample(&self, rng: &mut impl Rng) -> Candidate {
        self.params.iter().map(|p| (p.name.clone(), p.sample(rng))).collect()
    }

    /// The candidate at a point of the unit cube, one coordinate per parameter.
    pub fn decode(&self, point: &[f64]) -> Candidate {
        self.params.iter().zip(point).map(|(p, u)| (p.name.clone(), p.decode(*u))).collect()
    }

    /// A candidate's point in the unit cube; parameters it lacks sit mid-range.
    pub fn encode(&self, candidate: &Candidate) -> Vec<f64> {
        self.params.iter().map(|p| candidate.get(&p.name).map_or(0.5, |v| p.encode(v))).collect()
    }

    /// Every candidate of a space whose parameters are all choices, when
    /// there are at most `limit` of them (a model can then weigh each one
    /// instead of a random pool); `None` otherwise.
    pub fn every_candidate(&self, limit: u64) -> Option<Vec<Candidate>> {
        let values: Vec<Vec<Value>> = self
            .params
            .iter()
            .map(|p| match &p.domain {
                Domain::Choice { values } => Some(values.clone()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let size =
            values.iter().try_fold(1u64, |acc, v| acc.checked_mul(v.len() as u64)).filter(|s| *s <= limit)?;
        Some((0..size).map(|index| self.combination(&values, index)).collect())
    }

    /// Number of points of the full grid (saturating).
    pub fn grid_size(&self) -> u64 {
        self.params.iter().map(|p| p.grid_levels().len() as u64).fold(1u64, |acc, n| acc.saturating_mul(n))
    }

    /// The grid point with the given index (mixed-radix over the levels).
    pub fn grid_point(&self, index: u64) -> Candidate {
        let levels: Vec<Vec<Value>> = self.params.iter().map(Param::grid_levels).collect();
        self.combination(&levels, index)
    }

    /// The `index`-th combination of one value per parameter from
    /// `values` (mixed-radix, the last parameter fastest).
    fn combination(&self, values: &[Vec<Value>], mut index: u64) -> Candidate {
        let mut candidate = Candidate::new();
        for (p, levels) in self.params.iter().zip(values).rev() {
            let n = levels.len() as u64;
            candidate.insert(p.name.clone(), levels[(index % n) as usize].clone());
            index /= n;
        }
        candidate
    }
}

impl SpaceError {
    fn at(self, real: &Path) -> Self {
        let path = real.to_path_buf();
        match self {
            SpaceError::Parse { message, .. } => SpaceError::Parse { path, message },
            SpaceError::Param { param, problem, .. } => SpaceError::Param { path, param, problem },
            SpaceError::Empty { .. } => SpaceError::Empty { path },
            SpaceError::Seed { seed, param, known, .. } => SpaceError::Seed { path, seed, param, known },
            SpaceError::SeedBase { seed, problem, .. } => SpaceError::SeedBase { path, seed, problem },
            SpaceError::SeedWhen { seed, problem, .. } => SpaceError::SeedWhen { path, seed, problem },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: &[&str] = &["share", "count", "trigger", "mode"];

    const SPACE: &str = r#"
        [params.share]
        kind = "float"
        min = 0.01
        max = 0.5
        log = true
        grid = [0.05, 0.25]

        [params.count]
        kind = "int"
        min = 2
        max = 8

        [params.trigger]
        kind = "int"
        min = 2
        max = 16
        log = true

        [params.mode]
        kind = "choice"
        values = ["pread", "mmap", "direct"]
    "#;

    #[test]
    fn a_seed_condition_names_a_seed_and_a_positive_bound() {
        let with = |when: &str| format!("{SPACE}\n[seeds.small]\nshare = 0.02\n{when}\n");
        let space = Space::parse("t", &with("[seed_when.small]\nmin_disk_ratio = 0.75"), ANY).unwrap();
        assert_eq!(space.seed_when["small"].min_disk_ratio, Some(0.75));
        for (when, expected) in [
            ("[seed_when.smal]\nmin_disk_ratio = 1.0", "no seed of this name; the seeds are: small"),
            ("[seed_when.small]\nmin_disk_ratio = -1.0", "give a positive number"),
            ("[seed_when.small]\nmin_bytes_per_key = 0", "min_bytes_per_key = 0: give a positive number"),
            ("[seed_when.small]\n", "no condition: give min_disk_ratio or min_bytes_per_key"),
            ("[seed_when.small]\nmin_data = 1.0", "unknown field"),
        ] {
            let err = Space::parse("t", &with(when), ANY).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }

    #[test]
    fn a_seed_starts_from_the_settings_of_its_base() {
        let seeds = "[seeds.guide]\nshare = 0.02\ncount = 4\n[seeds.more]\nbase = \"guide\"\ncount = 6\nmode = \"mmap\"";
        let space = Space::parse("t", &format!("{SPACE}\n{seeds}\n"), ANY).unwrap();
        let (name, more) = &space.seeds[1];
        assert_eq!(name, "more");
        assert_eq!(more["share"], Value::Float(0.02), "from its base");
        assert_eq!(more["count"], Value::Int(6), "its own over its base's");
        assert_eq!(more["mode"], Value::Str("mmap".into()));
        assert!(!more.contains_key("base"));
        for (seeds, expected) in [
            (
                "[seeds.more]\nbase = \"guide\"\n[seeds.guide]\ncount = 4",
                "no seed `guide` written before this one; those are: none",
            ),
            ("[seeds.guide]\ncount = 4\n[seeds.more]\nbase = \"gide\"", "those are: guide"),
            ("[seeds.more]\nbase = 3", "3 is not a seed's name"),
        ] {
            let err = Space::parse("t", &format!("{SPACE}\n{seeds}\n"), ANY).unwrap_err().to_string();
            assert!(err.contains("[seeds.more] `base`") && err.contains(expected), "{err}");
        }
    }

    #[test]
    fn loads_and_samples_inside_the_ranges() {
        let space = Space::parse("t", SPACE, ANY).unwrap();
        let mut rng = rand::rng();
        for _ in 0..200 {
            let c = space.sample(&mut rng);
            for p in &space.params {
                assert!(p.contains(&c[&p.name]), "{} = {}", p.name, c[&p.name]);
            }
        }
    }

    #[test]
    fn encoding_round_trips() {
        let space = Space::parse("t", SPACE, ANY).unwrap();
        let mut rng = rand::rng();
        for _ in 0..50 {
            let c = space.sample(&mut rng);
            let back = space.decode(&space.encode(&c));
            assert_eq!(back["count"], c["count"]);
            assert_eq!(back["trigger"], c["trigger"]);
            assert_eq!(back["mode"], c["mode"]);
            let (a, b) = (back["share"].as_f64().unwrap(), c["share"].as_f64().unwrap());
            assert!((a - b).abs() < 1e-9 * b.max(1.0));
        }
    }

    #[test]
    fn every_log_scaled_integer_encodes_to_a_point_that_decodes_to_it() {
        let space = Space::parse("t", SPACE, ANY).unwrap();
        let trigger = space.params.iter().find(|p| p.name == "trigger").unwrap();
        for v in 2..=16 {
            assert_eq!(trigger.decode(trigger.encode(&Value::Int(v))), Value::Int(v));
        }
    }

    #[test]
    fn every_candidate_of_a_small_space_of_choices_once_else_none() {
        let choices = r#"
            [params.mode]
            kind = "choice"
            values = ["pread", "mmap", "direct"]
            [params.count]
            kind = "choice"
            values = [1, 2]
        "#;
        let space = Space::parse("t", choices, ANY).unwrap();
        let all = space.every_candidate(6).unwrap();
        assert_eq!(all.len(), 6);
        for (i, a) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|b| a != b));
        }
        assert!(space.every_candidate(5).is_none(), "more than the limit");
        let mixed = Space::parse("t", SPACE, ANY).unwrap();
        assert!(mixed.every_candidate(u64::MAX).is_none(), "a space with numbers");
    }

    #[test]
    fn grid_covers_every_combination_once() {
        let space = Space::parse("t", SPACE, ANY).unwrap();
        assert_eq!(space.grid_size(), 2 * 2 * 2 * 3);
        let points: Vec<_> = (0..space.grid_size()).map(|i| space.grid_point(i)).collect();
        for (i, a) in points.iter().enumerate() {
            assert!(points[i + 1..].iter().all(|b| a != b));
        }
    }

    #[test]
    fn rejections_name_the_parameter() {
        let bad = SPACE.replace("min = 2", "min = 9");
        let err = Space::parse("t", &bad, ANY).unwrap_err().to_string();
        assert!(err.contains("`count`") && err.contains("min 9 is above max 8"), "{err}");

        let bad = SPACE.replace("grid = [0.05, 0.25]", "grid = [0.05, 0.75]");
        let err = Space::parse("t", &bad, ANY).unwrap_err().to_string();
        assert!(err.contains("`share`") && err.contains("outside"), "{err}");

        let err = Space::parse("t", SPACE, &["share", "count"]).unwrap_err().to_string();
        assert!(err.contains("`mode`") && err.contains("known are"), "{err}");
    }

    #[test]
    fn malformed_toml_names_the_line() {
        let err =
            Space::parse("t", "[params.a]\nkind = \"float\"\nmin = oops\n", ANY).unwrap_err().to_string();
        assert!(err.contains("line 3"), "{err}");
    }
}
