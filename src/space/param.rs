//! One tunable parameter: its kind, range and grid levels, and how it maps to
//! the unit interval the samplers work in.

use rand::Rng;
use serde::{Deserialize, Serialize};

/// A parameter value as written in space files, presets and the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Value {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::Float(v) => Some(*v),
            _ => None,
        }
    }
}

/// `NAME=VALUE` as typed on a command line (`--set bloom_bits=10`): the value
/// is read as a boolean, a whole number, a number, or else as text.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub name: String,
    pub value: Value,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{0}` is not a setting: write NAME=VALUE, e.g. bloom_bits=10 or compression=lz4")]
pub struct SettingError(String);

impl std::str::FromStr for Setting {
    type Err = SettingError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, text) = s.split_once('=').ok_or_else(|| SettingError(s.to_string()))?;
        let (name, text) = (name.trim(), text.trim());
        if name.is_empty() || text.is_empty() {
            return Err(SettingError(s.to_string()));
        }
        let value = match text {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => text
                .parse::<i64>()
                .map(Value::Int)
                .or_else(|_| text.parse::<f64>().map(Value::Float))
                .unwrap_or_else(|_| Value::Str(text.to_string())),
        };
        Ok(Setting { name: name.to_string(), value })
    }
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.name, self.value)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(v.min(i64::MAX as u64) as i64)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Bool(v) => write!(f, "{v}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{}", (v * 1e6).round() / 1e6),
            Value::Str(v) => write!(f, "{v}"),
        }
    }
}

/// The range of a parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Domain {
    Int {
        min: i64,
        max: i64,
        #[serde(default)]
        log: bool,
    },
    Float {
        min: f64,
        max: f64,
        #[serde(default)]
        log: bool,
    },
    Choice {
        values: Vec<Value>,
    },
}

/// A parameter as declared in a search-space file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    #[serde(skip_deserializing)]
    pub name: String,
    #[serde(flatten)]
    pub domain: Domain,
    /// The levels a grid search tries; choices default to all their values.
    #[serde(default)]
    pub grid: Option<Vec<Value>>,
    /// One line for the report: what the parameter does.
    #[serde(default)]
    pub help: String,
    /// Values that mean something on their own (0 = off, the engine's
    /// default): sampled often, since a uniform draw would rarely hit them.
    #[serde(default)]
    pub special: Vec<Value>,
}

/// How often a sampled parameter takes one of its special values.
pub const SPECIAL_SHARE: f64 = 0.2;

/// Where in a number's encoded range a one-knob step puts it.
const STEP_POINTS: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

impl Param {
    /// Why the declaration is unusable, if it is.
    pub fn problem(&self) -> Option<String> {
        match &self.domain {
            Domain::Int { min, max, log } => {
                range_problem(*min as f64, *max as f64, *log).or_else(|| self.grid_problem())
            }
            Domain::Float { min, max, log } => {
                range_problem(*min, *max, *log).or_else(|| self.grid_problem())
            }
            Domain::Choice { values } if values.is_empty() => {
                Some("`values` is empty: list at least one choice".into())
            }
            Domain::Choice { .. } => self.grid_problem(),
        }
        .or_else(|| {
            let outside = self.special.iter().find(|v| !self.contains(v))?;
            Some(format!("special value {outside} is outside the parameter's range"))
        })
    }

    fn grid_problem(&self) -> Option<String> {
        let levels = self.grid.as_ref()?;
        if levels.is_empty() {
            return Some("`grid` is empty: list at least one level or leave it out".into());
        }
        levels
            .iter()
            .find(|level| !self.contains(level))
            .map(|level| format!("grid level {level} is outside the parameter's range"))
    }

    /// Whether `value` is a value this parameter can take.
    pub fn contains(&self, value: &Value) -> bool {
        match (&self.domain, value) {
            (Domain::Int { min, max, .. }, Value::Int(v)) => (min..=max).contains(&v),
            (Domain::Float { min, max, .. }, v) => v.as_f64().is_some_and(|v| (*min..=*max).contains(&v)),
            (Domain::Choice { values }, v) => values.contains(v),
            _ => false,
        }
    }

    /// The levels a grid search walks through.
    pub fn grid_levels(&self) -> Vec<Value> {
        match (&self.grid, &self.domain) {
            (Some(levels), _) => levels.clone(),
            (None, Domain::Choice { values }) => values.clone(),
            (None, Domain::Int { min, max, .. }) => dedup(vec![Value::Int(*min), Value::Int(*max)]),
            (None, Domain::Float { min, max, .. }) => dedup(vec![Value::Float(*min), Value::Float(*max)]),
        }
    }

    /// The values a one-knob step tries (besides the one it starts from):
    /// every choice; a number at the ends, quarters and middle of its
    /// encoded range, and its special values. Coarse on purpose: a step
    /// asks which region of the knob pays, racing settles it.
    pub fn step_levels(&self) -> Vec<Value> {
        let mut levels = match &self.domain {
            Domain::Choice { values } => values.clone(),
            _ => STEP_POINTS.iter().map(|u| self.decode(*u)).chain(self.special.iter().cloned()).collect(),
        };
        let mut distinct = Vec::with_capacity(levels.len());
        for level in levels.drain(..) {
            if !distinct.contains(&level) {
                distinct.push(level);
            }
        }
        distinct
    }

    /// A value drawn uniformly over the encoded range (log-uniform for log
    /// scales), or one of its special values with probability [`SPECIAL_SHARE`].
    pub fn sample(&self, rng: &mut impl Rng) -> Value {
        let u = rng.random::<f64>();
        if !self.special.is_empty() && rng.random::<f64>() < SPECIAL_SHARE {
            return self.special[(u * self.special.len() as f64) as usize % self.special.len()].clone();
        }
        self.decode(u)
    }

    /// Maps a value to [0, 1], log-scaled where declared so.
    pub fn encode(&self, value: &Value) -> f64 {
        match &self.domain {
            // Each integer owns the stretch of the unit range that decodes
            // to it (as in `decode`), and encodes to the point of it that
            // decodes back: a log-scaled 8 in 2..16 had come back as 7.
            Domain::Int { min, max, log } => {
                unit(value.as_f64().unwrap_or(0.0), *min as f64 - 0.5, *max as f64 + 0.5, *log && *min > 0)
            }
            Domain::Float { min, max, log } => unit(value.as_f64().unwrap_or(0.0), *min, *max, *log),
            Domain::Choice { values } => {
                let index = values.iter().position(|v| v == value).unwrap_or(0);
                (index as f64 + 0.5) / values.len() as f64
            }
        }
    }

    /// Maps a point of [0, 1] back to a value, the inverse of [`Param::encode`].
    pub fn decode(&self, u: f64) -> Value {
        let u = u.clamp(0.0, 1.0);
        match &self.domain {
            Domain::Int { min, max, log } => {
                let v = from_unit(u, *min as f64 - 0.5, *max as f64 + 0.5, *log && *min > 0);
                Value::Int((v.round() as i64).clamp(*min, *max))
            }
            // The ends exactly (a log scale's exp(ln(max)) can land a hair
            // beyond them), so a point at an end is the declared bound.
            Domain::Float { min, .. } if u == 0.0 => Value::Float(*min),
            Domain::Float { max, .. } if u == 1.0 => Value::Float(*max),
            Domain::Float { min, max, log } => Value::Float(from_unit(u, *min, *max, *log).clamp(*min, *max)),
            Domain::Choice { values } => {
                let index = ((u * values.len() as f64) as usize).min(values.len() - 1);
                values[index].clone()
            }
        }
    }
}

fn range_problem(min: f64, max: f64, log: bool) -> Option<String> {
    if min > max {
        Some(format!("min {min} is above max {max}"))
    } else if log && min <= 0.0 {
        Some(format!("log = true needs min > 0, but min is {min}"))
    } else {
        None
    }
}

fn unit(v: f64, min: f64, max: f64, log: bool) -> f64 {
    if max <= min {
        return 0.5;
    }
    let u = if log { (v.ln() - min.ln()) / (max.ln() - min.ln()) } else { (v - min) / (max - min) };
    u.clamp(0.0, 1.0)
}

fn from_unit(u: f64, min: f64, max: f64, log: bool) -> f64 {
    if log && min > 0.0 {
        (min.ln() + u * (max.ln() - min.ln())).exp()
    } else {
        min + u * (max - min)
    }
}

fn dedup(mut values: Vec<Value>) -> Vec<Value> {
    values.dedup();
    values
}
