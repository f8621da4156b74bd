use crate::Rng;

/// Random loss applied to packets entering the path.
#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    None,
    /// Each packet is lost independently with probability `p` (netem `loss p`).
    Bernoulli(f64),
}

impl LossModel {
    pub fn from_probability(p: f64) -> Self {
        if p > 0.0 {
            LossModel::Bernoulli(p)
        } else {
            LossModel::None
        }
    }

    /// Decide whether the next packet is lost.
    pub fn drop(&self, rng: &mut Rng) -> bool {
        match *self {
            LossModel::None => false,
            LossModel::Bernoulli(p) => rng.chance(p),
        }
    }
}
