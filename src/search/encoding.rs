//! The models' view of a space: a number per integer or float parameter (the
//! space's unit encoding, log-scaled where declared), one number per choice
//! among numbers (its values in order, evenly spaced: 2, 4, 8 are near
//! neighbours, so what is learnt at 4 informs 8) and one coordinate per value
//! of any other choice (one-hot). `snap` maps any point to the point of the
//! candidate it decodes to, so a model sees integers and choices as they run
//! (Garrido-Merchán and Hernández-Lobato's transformation).

use rand::Rng;

use crate::space::{Candidate, Domain, Space};

/// Coordinates of one parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dim {
    /// One coordinate in [0, 1].
    Scalar { param: usize, at: usize },
    /// One coordinate for a choice among numbers: the value's rank among
    /// them, over the ranks in all. `order[rank]` is the value's index.
    Ordered { param: usize, at: usize, order: Vec<usize> },
    /// One coordinate per choice; the largest wins.
    OneHot { param: usize, at: usize, len: usize },
}

#[derive(Debug, Clone)]
pub struct Encoding {
    dims: Vec<Dim>,
    len: usize,
}

impl Encoding {
    pub fn new(space: &Space) -> Self {
        let mut dims = vec![];
        let mut at = 0;
        for (param, p) in space.params.iter().enumerate() {
            match &p.domain {
                Domain::Choice { values }
                    if values.len() > 1 && values.iter().all(|v| v.as_f64().is_some()) =>
                {
                    let mut order: Vec<usize> = (0..values.len()).collect();
                    let number = |i: usize| values[i].as_f64().unwrap_or(0.0);
                    order.sort_by(|&a, &b| number(a).total_cmp(&number(b)));
                    dims.push(Dim::Ordered { param, at, order });
                    at += 1;
                }
                Domain::Choice { values } => {
                    dims.push(Dim::OneHot { param, at, len: values.len() });
                    at += values.len();
                }
                _ => {
                    dims.push(Dim::Scalar { param, at });
                    at += 1;
                }
            }
        }
        Encoding { dims, len: at }
    }

    /// Coordinates in all.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The coordinates of `candidate` (parameters it lacks sit mid-range).
    pub fn encode(&self, space: &Space, candidate: &Candidate) -> Vec<f64> {
        let unit = space.encode(candidate);
        let mut x = vec![0.0; self.len];
        for dim in &self.dims {
            match *dim {
                Dim::Scalar { param, at } => x[at] = unit[param],
                Dim::Ordered { param, at, ref order } => {
                    let index = ((unit[param] * order.len() as f64) as usize).min(order.len() - 1);
                    let rank = order.iter().position(|&i| i == index).unwrap_or(0);
                    x[at] = rank as f64 / (order.len() - 1) as f64;
                }
                Dim::OneHot { param, at, len } => {
                    let index = ((unit[param] * len as f64) as usize).min(len - 1);
                    x[at + index] = 1.0;
                }
            }
        }
        x
    }

    /// The candidate a point stands for.
    pub fn decode(&self, space: &Space, x: &[f64]) -> Candidate {
        let unit: Vec<f64> = self
            .dims
            .iter()
            .map(|dim| match *dim {
                Dim::Scalar { at, .. } => x[at].clamp(0.0, 1.0),
                Dim::Ordered { at, ref order, .. } => {
                    let rank = (x[at].clamp(0.0, 1.0) * (order.len() - 1) as f64).round() as usize;
                    (order[rank] as f64 + 0.5) / order.len() as f64
                }
                Dim::OneHot { at, len, .. } => {
                    let best = (0..len).max_by(|&a, &b| x[at + a].total_cmp(&x[at + b])).unwrap_or(0);
                    (best as f64 + 0.5) / len as f64
                }
            })
            .collect();
        space.decode(&unit)
    }

    /// The point of the candidate `x` decodes to.
    pub fn snap(&self, space: &Space, x: &[f64]) -> Vec<f64> {
        self.encode(space, &self.decode(space, x))
    }

    /// A random point (a random candidate's, special values included).
    pub fn random(&self, space: &Space, rng: &mut impl Rng) -> Vec<f64> {
        self.encode(space, &space.sample(rng))
    }

    /// Which parameter each coordinate belongs to.
    pub fn param_of(&self, coordinate: usize) -> usize {
        self.dims
            .iter()
            .find_map(|dim| match *dim {
                Dim::Scalar { param, at } | Dim::Ordered { param, at, .. } if at == coordinate => Some(param),
                Dim::OneHot { param, at, len } if (at..at + len).contains(&coordinate) => Some(param),
                _ => None,
            })
            .expect("a coordinate of this encoding")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::space::Value;

    const SPACE: &str = r#"
        [params.share]
        kind = "float"
        min = 0.01
        max = 0.5
        log = true

        [params.count]
        kind = "int"
        min = 2
        max = 8

        [params.mode]
        kind = "choice"
        values = ["pread", "mmap", "direct"]

        [params.trigger]
        kind = "choice"
        values = [8, 2, 4]
    "#;

    #[test]
    fn choices_are_one_hot_or_ordered_and_points_snap_to_what_runs() {
        let space = Space::parse("t", SPACE, &["share", "count", "mode", "trigger"]).unwrap();
        let enc = Encoding::new(&space);
        // Parameters in name order: count, mode (one-hot), share, trigger
        // (a choice among numbers: one coordinate).
        assert_eq!(enc.len(), 1 + 3 + 1 + 1);
        let mut rng = rand::rng();
        for _ in 0..100 {
            let c = space.sample(&mut rng);
            let x = enc.encode(&space, &c);
            assert_eq!(x[1..4].iter().sum::<f64>(), 1.0);
            assert_eq!(enc.decode(&space, &x)["mode"], c["mode"]);
            assert_eq!(enc.decode(&space, &x)["count"], c["count"]);
            assert_eq!(enc.decode(&space, &x)["trigger"], c["trigger"]);
            // Any point snaps to the encoding of the candidate it decodes to.
            let noisy: Vec<f64> = x.iter().map(|v| v + rng.random_range(-0.04..0.04)).collect();
            let snapped = enc.snap(&space, &noisy);
            assert_eq!(snapped, enc.snap(&space, &snapped));
        }
        // The ordered choice sits at its value's rank: 2, 4, 8 at 0, 0.5, 1.
        for (value, at) in [(2, 0.0), (4, 0.5), (8, 1.0)] {
            let mut c = space.sample(&mut rng);
            c.insert("trigger".into(), Value::Int(value));
            assert_eq!(enc.encode(&space, &c)[5], at);
            assert_eq!(enc.decode(&space, &enc.encode(&space, &c))["trigger"], Value::Int(value));
        }
        assert_eq!((0..6).map(|i| enc.param_of(i)).collect::<Vec<_>>(), [0, 1, 1, 1, 2, 3]);
    }
}
