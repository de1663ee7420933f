//! The command-line options the examples share: which configuration to run with.

use std::path::PathBuf;

use burn_profiled::config::{Preset, RuntimeConfig};

/// `--preset` or `--config`, else `$BURN_PROFILED`, else the `profile` preset.
#[derive(clap::Args)]
pub struct ConfigArgs {
    /// A preset: train, eval, profile or debug (default: `$BURN_PROFILED`, else profile).
    #[arg(long, conflicts_with = "config")]
    pub preset: Option<Preset>,
    /// A configuration file (.toml or .json).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

impl ConfigArgs {
    /// The configuration asked for; on an unreadable one, says why and exits with status 2.
    pub fn runtime_config(&self) -> RuntimeConfig {
        let config = match (self.preset, &self.config) {
            (Some(preset), _) => Ok(RuntimeConfig::preset(preset)),
            (None, Some(file)) => RuntimeConfig::from_file(file),
            (None, None) => RuntimeConfig::from_env_or(Preset::Profile),
        };
        config.unwrap_or_else(|error| {
            eprintln!("{error}");
            std::process::exit(2)
        })
    }
}
