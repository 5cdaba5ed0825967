//! Scale: the power-of-two fraction that shrinks both the budget and the
//! dataset, so a study fits this machine and a trial takes about `--trial-seconds`
//! while the ratio of data to memory (cache hit rates, write amplification)
//! stays that of the full-size system.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::budget::{ByteSize, MIB};

/// `1 / 2^shift`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Scale {
    pub shift: u32,
}

impl Scale {
    pub fn apply(self, bytes: u64) -> u64 {
        bytes >> self.shift
    }

    /// How many times larger `larger` is than this scale (1 where it is not): a
    /// run there takes about that many times as long.
    pub fn times_to(self, larger: Scale) -> f64 {
        (1u64 << self.shift.saturating_sub(larger.shift)) as f64
    }
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shift {
            0 => write!(f, "1"),
            s => write!(f, "1/{}", 1u64 << s),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{0}` is not a scale: give a power-of-two fraction such as 1, 1/2, 1/256, 0.125 or 2^-8 (for --verify-scale also `off` or a multiple such as 4x)")]
pub struct ScaleError(String);

impl FromStr for Scale {
    type Err = ScaleError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ScaleError(s.to_string());
        let text = s.trim();
        let factor = if let Some(exp) = text.strip_prefix("2^") {
            2f64.powi(exp.parse::<i32>().map_err(|_| err())?)
        } else if let Some((num, den)) = text.split_once('/') {
            let num: f64 = num.trim().parse().map_err(|_| err())?;
            let den: f64 = den.trim().parse().map_err(|_| err())?;
            num / den
        } else {
            text.parse::<f64>().map_err(|_| err())?
        };
        if !(factor > 0.0 && factor <= 1.0) {
            return Err(err());
        }
        let shift = (-factor.log2()).round();
        if (2f64.powf(-shift) - factor).abs() > 1e-12 * factor.max(1e-300) || shift > 40.0 {
            return Err(err());
        }
        Ok(Scale { shift: shift as u32 })
    }
}

/// How the automatic scale was chosen, for the user and the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleChoice {
    pub scale: Scale,
    pub reason: String,
    /// The seconds a run of the defaults takes there, as the calibration
    /// measured or predicted it (`None` for a scale given, not calibrated).
    pub trial_secs: Option<f64>,
}

/// The smallest scale any study uses: a budget of at least this many bytes.
pub const MIN_SCALED_BUDGET: u64 = 64 * MIB;

/// Why a budget or scale cannot be measured on this machine.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FitError {
    #[error("--budget {budget} is below the smallest budget kvtune can measure, {}: the engine and the trial process need that much before any cache or memtable", ByteSize(MIN_SCALED_BUDGET))]
    BudgetTooSmall { budget: ByteSize },
    #[error("--scale {scale} gives a budget of {scaled}, below the smallest kvtune can measure ({}): give a larger --scale", ByteSize(MIN_SCALED_BUDGET))]
    ScaledTooSmall { scale: Scale, scaled: ByteSize },
    #[error("--scale {scale} gives a budget of {scaled} but this machine has {memory} of memory, and a trial needs its budget plus room for kvtune: \
             give a smaller --scale such as {suggested} (budget and data shrink alike, so the ratio that decides the results is kept)")]
    TooLargeForMachine { scale: Scale, scaled: ByteSize, memory: ByteSize, suggested: Scale },
}

/// Whether a full budget can be measured at all.
pub fn check_budget(full_budget: u64) -> Result<(), FitError> {
    match full_budget < MIN_SCALED_BUDGET {
        true => Err(FitError::BudgetTooSmall { budget: ByteSize(full_budget) }),
        false => Ok(()),
    }
}

/// Whether `scale` of `full_budget` can be measured on a machine with
/// `memory` bytes: a trial needs its budget plus room for kvtune and the page
/// cache, so at most half the machine.
pub fn check(scale: Scale, full_budget: u64, memory: u64) -> Result<(), FitError> {
    let scaled = scale.apply(full_budget);
    if scaled < MIN_SCALED_BUDGET {
        return Err(FitError::ScaledTooSmall { scale, scaled: ByteSize(scaled) });
    }
    if scaled > memory / 2 {
        return Err(FitError::TooLargeForMachine {
            scale,
            scaled: ByteSize(scaled),
            memory: ByteSize(memory),
            suggested: scale_for(full_budget, memory / 2),
        });
    }
    Ok(())
}

/// The scale that puts the budget at or just under `bytes`.
pub fn scale_for(full_budget: u64, bytes: u64) -> Scale {
    let mut shift = 0;
    while full_budget >> shift > bytes && shift < 40 {
        shift += 1;
    }
    Scale { shift }
}

/// The smallest scale whose budget is still at least the smallest kvtune
/// measures (a budget that is not a power of two rounds up, not down).
pub fn smallest(full_budget: u64) -> Scale {
    let mut shift = 0;
    while full_budget >> (shift + 1) >= MIN_SCALED_BUDGET && shift < 40 {
        shift += 1;
    }
    Scale { shift }
}

/// Picks the largest scale whose budget fits the machine (at most half its
/// memory, leaving room for the page cache and kvtune) and whose trial,
/// predicted from two measured calibration runs, takes about `target_secs`;
/// a choice past them is run once more where it was made, and one scale
/// smaller where it took longer than the target.
/// `measure(scale)` replays the defaults at that scale and returns seconds.
pub fn choose(
    full_budget: u64,
    machine_memory: u64,
    target_secs: f64,
    measure: &mut dyn FnMut(Scale) -> anyhow::Result<f64>,
) -> anyhow::Result<ScaleChoice> {
    let memory_scale = scale_for(full_budget, machine_memory / 2);
    let small = smallest(full_budget).max(memory_scale);
    let larger = Scale { shift: small.shift.saturating_sub(1) }.max(memory_scale);
    let t_small = measure(small)?;
    let t_larger = if larger == small { t_small } else { measure(larger)? };
    // Time grows at least linearly with the data: fit t = a + b * budget,
    // with b no less than the larger run's seconds per byte.
    let (b_small, b_larger) = (small.apply(full_budget) as f64, larger.apply(full_budget) as f64);
    let slope = if b_larger > b_small { (t_larger - t_small) / (b_larger - b_small) } else { 0.0 };
    let slope = slope.max(t_larger / b_larger);
    let intercept = (t_larger - slope * b_larger).max(0.0);
    let predict = |s: Scale| intercept + slope * s.apply(full_budget) as f64;
    let mut scale = small;
    while scale.shift > memory_scale.shift && predict(Scale { shift: scale.shift - 1 }) <= target_secs {
        scale.shift -= 1;
    }
    let checked = checked_at_the_choice(scale, larger, target_secs, measure)?;
    let mut reason = format!(
        "calibration: RocksDB's defaults replayed the workload at budget {} in {:.1} s and at {} in {:.1} s; scale {} (budget {}) predicts {:.0} s a trial against a target of {:.0} s",
        ByteSize(small.apply(full_budget)),
        t_small,
        ByteSize(larger.apply(full_budget)),
        t_larger,
        scale,
        ByteSize(scale.apply(full_budget)),
        predict(scale),
        target_secs
    );
    let mut trial_secs = predict(scale);
    match checked {
        Some((measured, true)) => {
            trial_secs = measured;
            reason.push_str(&format!("; measured there: {measured:.1} s"))
        }
        Some((measured, false)) => {
            scale.shift += 1;
            trial_secs = predict(scale);
            reason.push_str(&format!(
                "; measured there it took {measured:.1} s, over the target, so scale {scale} (budget {})",
                ByteSize(scale.apply(full_budget))
            ));
        }
        None => {}
    }
    if scale == memory_scale && memory_scale.shift > 0 {
        reason.push_str(&format!(
            "; the machine's {} of memory allows no larger scale",
            ByteSize(machine_memory)
        ));
    }
    Ok(ScaleChoice { scale, reason, trial_secs: Some(trial_secs) })
}

/// A choice predicted past the calibration's larger scale, measured where
/// it was made: the seconds there and whether they are within the target
/// (`None` where the calibration measured the choice itself). Two runs at
/// the smallest scales extrapolate short: on spork the main job's choice
/// of 1/128 predicted 18 s a trial and its trials took 20-25 s, which left
/// 13 search trials of 30 minutes; one step back halves the trial.
fn checked_at_the_choice(
    scale: Scale,
    larger: Scale,
    target_secs: f64,
    measure: &mut dyn FnMut(Scale) -> anyhow::Result<f64>,
) -> anyhow::Result<Option<(f64, bool)>> {
    if scale >= larger {
        return Ok(None);
    }
    let measured = measure(scale)?;
    Ok(Some((measured, measured <= target_secs)))
}

/// Where a study re-measures its contenders after the verdict: `off`, a
/// multiple of the study's scale (`4x`), or a scale (`1/32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyAt {
    Off,
    Times(u32),
    At(Scale),
}

impl FromStr for VerifyAt {
    type Err = ScaleError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        if text == "off" {
            return Ok(VerifyAt::Off);
        }
        if let Some(times) = text.strip_suffix('x') {
            return match times.parse::<u32>() {
                Ok(k) if k >= 2 && k.is_power_of_two() => Ok(VerifyAt::Times(k)),
                _ => Err(ScaleError(s.to_string())),
            };
        }
        text.parse().map(VerifyAt::At)
    }
}

impl VerifyAt {
    /// The scale to verify at for a study at `study`, or `None`, with the
    /// reason either way for the report.
    pub fn resolve(self, study: Scale, full_budget: u64, memory: u64) -> (Option<Scale>, String) {
        let larger = match self {
            VerifyAt::Off => return (None, "off (--verify-scale off)".into()),
            VerifyAt::Times(k) if k.trailing_zeros() > study.shift => {
                return (
                    None,
                    format!("skipped: the study ran at scale {study}, so there is no scale {k}x larger"),
                );
            }
            VerifyAt::Times(k) => Scale { shift: study.shift - k.trailing_zeros() },
            VerifyAt::At(scale) => scale,
        };
        if larger >= study {
            return (None, format!("skipped: scale {larger} is not larger than the study's {study}"));
        }
        match check(larger, full_budget, memory) {
            Ok(()) => {
                (Some(larger), format!("scale {larger} (budget {})", ByteSize(larger.apply(full_budget))))
            }
            Err(why) => (None, format!("skipped: {why}")),
        }
    }
}

/// What a study's `--time` holds, as the calibration sees it before the
/// first trial: the limit, the calibration's own seconds, a run's seconds
/// at the study's scale, and the runs of the confirmation and of the
/// larger-scale check.
#[derive(Debug, Clone, Copy)]
pub struct TimePlan {
    pub limit_secs: f64,
    pub calibration_secs: f64,
    pub trial_secs: f64,
    pub confirm_runs: usize,
    pub check_runs: usize,
}

impl TimePlan {
    /// Why the larger-scale check at `larger`, for a study at `study`,
    /// would crowd out the search, if it would: its runs, each `k` times a
    /// trial at `k` times the scale, would leave the search less than half
    /// of `--time`. The search is what the user came for, and the check
    /// can run afterwards. Seen on ycsb-e at twice the budget: trials of
    /// 25-37 s at the smallest scale there is, the confirmation and the
    /// check reserved 18 of 30 minutes, and the study stopped after 4
    /// search trials, too short to confirm. `preset` is the study's preset
    /// file, for the command that checks afterwards.
    pub fn check_crowds_out_search(&self, study: Scale, larger: Scale, preset: &str) -> Option<String> {
        let k = study.times_to(larger);
        let check = k * self.check_runs as f64 * self.trial_secs;
        let confirm = self.confirm_runs as f64 * self.trial_secs;
        let search = self.limit_secs - self.calibration_secs - confirm - check;
        (search < self.limit_secs / 2.0).then(|| {
            format!(
                "skipped: at scale {larger} its {} runs would take about {:.1} min ({k:.0} times a run of {:.0} s, the \
                 calibration's), leaving the search {:.1} of --time's {:.0} min; `kvtune compare {preset} defaults \
                 --scale {larger} --repeat 3` checks afterwards (--verify-scale 4x keeps it in the study)",
                self.check_runs,
                check / 60.0,
                self.trial_secs,
                search.max(0.0) / 60.0,
                self.limit_secs / 60.0
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::GIB;

    #[test]
    fn a_larger_scale_check_that_would_crowd_out_the_search_is_left_out() {
        // ycsb-e at twice the budget: 27 s a run at 1/2048, the check at 1/512.
        let plan = |trial_secs| TimePlan {
            limit_secs: 1800.0,
            calibration_secs: 86.0,
            trial_secs,
            confirm_runs: 20,
            check_runs: 3,
        };
        let (study, larger) = (Scale { shift: 11 }, Scale { shift: 9 });
        let why = plan(27.0).check_crowds_out_search(study, larger, "out/e/preset.toml").expect("left out");
        assert!(why.contains("its 3 runs would take about 5.4 min"), "{why}");
        assert!(
            why.contains("compare out/e/preset.toml defaults --scale 1/512"),
            "how to check afterwards: {why}"
        );
        // Runs of 10 s (tbs's contenders run 5-7 s) leave the search most of --time.
        assert_eq!(plan(10.0).check_crowds_out_search(study, larger, "p"), None);
    }

    #[test]
    fn parses_power_of_two_fractions() {
        for (text, shift) in [("1", 0), ("1/2", 1), ("1/256", 8), ("0.125", 3), ("2^-8", 8)] {
            assert_eq!(text.parse::<Scale>(), Ok(Scale { shift }), "{text}");
        }
        for text in ["0", "2", "1/3", "0.3", "x", "-1/2"] {
            assert!(text.parse::<Scale>().is_err(), "{text}");
        }
        assert_eq!(Scale { shift: 8 }.to_string(), "1/256");
    }

    #[test]
    fn scales_the_machine_cannot_measure_are_refused() {
        assert!(check(Scale { shift: 7 }, 128 * GIB, 24 * GIB).is_ok());
        let err = check(Scale { shift: 2 }, 128 * GIB, 24 * GIB).unwrap_err();
        assert_eq!(
            err,
            FitError::TooLargeForMachine {
                scale: Scale { shift: 2 },
                scaled: ByteSize(32 * GIB),
                memory: ByteSize(24 * GIB),
                suggested: Scale { shift: 4 }
            }
        );
        assert!(err.to_string().contains("such as 1/16"), "{err}");
        assert!(matches!(
            check(Scale { shift: 12 }, 128 * GIB, 24 * GIB),
            Err(FitError::ScaledTooSmall { .. })
        ));
        assert!(check_budget(32 * MIB).is_err() && check_budget(64 * MIB).is_ok());
        // 100 GiB: 1/1024 is 100 MiB, 1/2048 would be 50 MiB, below the smallest.
        assert_eq!(smallest(100 * GIB), Scale { shift: 10 });
        assert_eq!(smallest(128 * GIB).apply(128 * GIB), 64 * MIB);
    }

    #[test]
    fn verification_is_at_a_larger_scale_this_machine_can_hold() {
        assert_eq!("4x".parse(), Ok(VerifyAt::Times(4)));
        assert_eq!("off".parse(), Ok(VerifyAt::Off));
        assert_eq!("1/32".parse(), Ok(VerifyAt::At(Scale { shift: 5 })));
        assert!("3x".parse::<VerifyAt>().is_err());
        let study = Scale { shift: 7 };
        assert_eq!(VerifyAt::Times(4).resolve(study, 128 * GIB, 24 * GIB).0, Some(Scale { shift: 5 }));
        // 128 GiB at 1/2 is more than half of 24 GiB.
        let (none, why) = VerifyAt::At(Scale { shift: 1 }).resolve(study, 128 * GIB, 24 * GIB);
        assert!(none.is_none() && why.contains("machine has"), "{why}");
        assert!(VerifyAt::Times(4).resolve(Scale { shift: 1 }, 128 * GIB, 24 * GIB).0.is_none());
    }

    #[test]
    fn choice_follows_the_measured_time_and_the_memory() {
        // 1 s per 16 MiB of budget: a 40 s target allows 640 MiB, so 512 MiB.
        let mut per_16mib = |s: Scale| Ok(s.apply(128 * GIB) as f64 / (16 * MIB) as f64);
        let choice = choose(128 * GIB, 24 * GIB, 40.0, &mut per_16mib).unwrap();
        assert_eq!(choice.scale.apply(128 * GIB), 512 * MIB, "{}", choice.reason);
        // A fast machine is held back by its memory: at most half of 24 GiB.
        let mut fast = |s: Scale| Ok(s.apply(128 * GIB) as f64 / (1024.0 * GIB as f64));
        let choice = choose(128 * GIB, 24 * GIB, 40.0, &mut fast).unwrap();
        assert_eq!(choice.scale.apply(128 * GIB), 8 * GIB, "{}", choice.reason);
        assert!(choice.reason.contains("allows no larger scale"));
    }

    #[test]
    fn a_choice_past_the_calibration_is_measured_and_stepped_back_if_slow() {
        // 2 s at 64 MiB and 4 s at 128 MiB predict 16 s at 512 MiB, under a
        // 20 s target; measured there, it takes `at_512` seconds.
        let calibrated = |at_512: f64| {
            let mut measured = vec![];
            let mut measure = |s: Scale| {
                measured.push(s.apply(128 * GIB) / MIB);
                Ok(match s.apply(128 * GIB) / MIB {
                    64 => 2.0,
                    128 => 4.0,
                    512 => at_512,
                    other => panic!("not measured at {other} MiB"),
                })
            };
            let choice = choose(128 * GIB, 24 * GIB, 20.0, &mut measure).unwrap();
            (choice, measured)
        };
        let (kept, measured) = calibrated(18.0);
        assert_eq!(measured, [64, 128, 512]);
        assert_eq!(kept.scale.apply(128 * GIB), 512 * MIB, "{}", kept.reason);
        assert!(kept.reason.contains("measured there: 18.0 s"), "{}", kept.reason);
        assert_eq!(kept.trial_secs, Some(18.0), "a run's seconds as measured at the choice");
        let (stepped, _) = calibrated(25.0);
        assert_eq!(stepped.trial_secs, Some(8.0), "stepped back, as predicted at 256 MiB");
        assert_eq!(stepped.scale.apply(128 * GIB), 256 * MIB, "{}", stepped.reason);
        assert!(
            stepped.reason.contains("took 25.0 s, over the target, so scale 1/512"),
            "{}",
            stepped.reason
        );
    }
}
