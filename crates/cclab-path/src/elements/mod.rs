//! The path elements, one file each.

mod delay;
mod droptail;
mod loss;

pub use delay::{Delay, DelayLine};
pub use droptail::DropTail;
pub use loss::{gilbert_to_bad, RandomLoss};
