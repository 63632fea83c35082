//! The harness's commands that fit in one file each: `run`, `sequence run`, `merge`,
//! `label`, `stats-bench`, and the `engine` level (Sens's own commands beside the
//! engine's evaluations). The commands with rooms of their own (`validate`, `gate`,
//! `review`, `calibrate`) sit beside this one.

pub mod engine;
pub mod label;
pub mod merge;
pub mod run;
pub mod sequence;
pub mod stats_bench;
