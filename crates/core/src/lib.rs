//! The core of [burn-profiled](https://crates.io/crates/burn-profiled): what does not depend on
//! a Burn version, shared by its editions.
//!
//! Use it through an edition, which re-exports these modules in its own namespace: for Burn
//! 0.21, `burn-profiled` (`burn_profiled::config`, `burn_profiled::runs`, ...). This crate
//! depends on no burn crate, at any version.
//!
//! | module | what it does |
//! |---|---|
//! | [`config`] | a `RuntimeConfig` from a preset, a file or `BURN_PROFILED` |
//! | [`host`] | CPU usage, resident memory and a memory guard |
//! | [`runs`] | a run directory read back, its HTML report, and two runs compared (`burn-profiled diff`) |
#![warn(missing_docs)]

pub mod config;
pub mod formats;
pub mod host;
pub mod runs;

#[doc(hidden)]
pub mod cli_output;
#[doc(hidden)]
pub mod files;
#[doc(hidden)]
pub mod python;
#[doc(hidden)]
pub mod units;
