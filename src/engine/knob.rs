//! An engine's parameter table, the form every engine declares its
//! parameters in: name, help, what values it takes, its default at a
//! budget, and how a value sets the engine's options. The defaults, the
//! help and the checking of a candidate come from the table.

use super::{bad_value, EngineError, ParamDoc, Scaling};
use crate::space::{Candidate, Value};

/// One searchable parameter of an engine whose options are built in a `T`.
pub struct Knob<T> {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    pub scaling: Scaling,
    /// Its value in the engine's defaults fitted to a budget of this many bytes.
    pub default: fn(u64) -> Value,
    /// Sets the engine's options for a value already checked against `kind`.
    pub apply: fn(&mut T, &Value),
}

/// Options being built from a candidate: what the knobs write into.
pub trait Settings {
    /// The candidate as asked, complete, as it is being recorded.
    fn asked(&mut self) -> &mut Candidate;
    /// Notes that a parameter runs at `ran` at every budget, and records it so.
    fn replace(&mut self, param: &str, ran: Value, why: String);
}

/// Every parameter's help and scaling.
pub fn docs<T>(knobs: &[Knob<T>]) -> Vec<ParamDoc> {
    knobs.iter().map(|k| ParamDoc { name: k.name, help: k.help, scaling: k.scaling }).collect()
}

/// The engine's defaults fitted to a budget of `budget` bytes.
pub fn defaults<T>(knobs: &[Knob<T>], budget: u64) -> Candidate {
    knobs.iter().map(|k| (k.name.to_string(), (k.default)(budget))).collect()
}

/// Applies every knob to `settings`, in table order: a later one may read
/// what an earlier one set. Parameters the candidate leaves out take the
/// defaults fitted to `budget`; a value outside what the engine takes is
/// brought into range and the candidate says so.
pub fn apply<T: Settings>(
    engine: &'static str,
    knobs: &[Knob<T>],
    candidate: &Candidate,
    budget: u64,
    settings: &mut T,
) -> Result<(), EngineError> {
    if let Some(unknown) = candidate.keys().find(|name| !knobs.iter().any(|k| k.name == name.as_str())) {
        return Err(EngineError::UnknownParam {
            engine,
            name: unknown.clone(),
            known: knobs.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
        });
    }
    for knob in knobs {
        let asked = candidate.get(knob.name).cloned().unwrap_or_else(|| (knob.default)(budget));
        let value = knob.kind.check(knob.name, &asked)?;
        settings.asked().insert(knob.name.to_string(), asked.clone());
        if value.as_f64() != asked.as_f64() {
            let why = format!("outside what {engine} takes ({})", knob.kind.describe());
            settings.replace(knob.name, value.clone(), why);
        }
        (knob.apply)(settings, &value);
    }
    Ok(())
}

/// What values a parameter takes.
pub enum Kind {
    /// A share of the budget, from 0 to 1.
    Share,
    /// A whole number, brought into the range the engine takes.
    Int {
        min: i64,
        max: i64,
    },
    /// A number from `min` to `max`.
    Float {
        min: f64,
        max: f64,
    },
    Flag,
    Choice(&'static [&'static str]),
}

impl Kind {
    pub fn describe(&self) -> String {
        match self {
            Kind::Share => "a share from 0 to 1".into(),
            Kind::Int { min, max } if *max == i64::MAX => format!("a whole number from {min}"),
            Kind::Int { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Float { min, max } if *max == f64::MAX => format!("a number from {min}"),
            Kind::Float { min, max } => format!("a number from {min} to {max}"),
            Kind::Flag => "true or false".into(),
            Kind::Choice(allowed) => format!("one of {}", allowed.join(", ")),
        }
    }

    /// `value` as this kind takes it: a number brought into range, or why not.
    pub fn check(&self, name: &str, value: &Value) -> Result<Value, EngineError> {
        let number = || value.as_f64().ok_or_else(|| bad_value(name, value, "a number"));
        match self {
            Kind::Share => match number()? {
                s if (0.0..=1.0).contains(&s) => Ok(Value::Float(s)),
                _ => Err(bad_value(name, value, "a share of the budget, from 0 to 1")),
            },
            Kind::Int { min, max } => Ok(Value::Int((number()?.round() as i64).clamp(*min, *max))),
            Kind::Float { min, max } => Ok(Value::Float(number()?.clamp(*min, *max))),
            Kind::Flag => match value {
                Value::Bool(_) => Ok(value.clone()),
                _ => Err(bad_value(name, value, "true or false")),
            },
            Kind::Choice(allowed) => match value {
                Value::Str(s) if allowed.contains(&s.as_str()) => Ok(value.clone()),
                _ => Err(bad_value(name, value, format!("one of {}", allowed.join(", ")))),
            },
        }
    }
}

pub fn int(v: &Value) -> i64 {
    v.as_f64().unwrap_or_default() as i64
}

pub fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or_default()
}

pub fn flag(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

pub fn text(v: &Value) -> &str {
    match v {
        Value::Str(s) => s,
        _ => "",
    }
}
