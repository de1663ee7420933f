//! Loading a `RuntimeConfig`: presets, TOML and JSON files, the environment, and errors that
//! name the key or the line.

use burn_profiled::config::{ConfigError, Preset, RuntimeConfig};

#[test]
fn presets_switch_what_they_promise() {
    let train = RuntimeConfig::preset(Preset::Train);
    assert_eq!(train, RuntimeConfig::default());
    assert!(
        !train.stopwatch.enabled
            && !train.nvtx.op_ranges
            && !train.stats.enabled
            && !train.dump.enabled
    );

    let eval = RuntimeConfig::preset(Preset::Eval);
    assert!(
        eval.stopwatch.enabled
            && !eval.nvtx.user_ranges
            && !eval.nvtx.op_ranges
            && !eval.trace.enabled
    );

    let profile = RuntimeConfig::preset(Preset::Profile);
    assert!(profile.stopwatch.enabled && profile.nvtx.user_ranges && profile.nvtx.op_ranges);
    assert!(profile.stats.enabled && profile.trace.enabled && profile.capture.after_warmup);
    assert!(!profile.nvtx.keep_track_of_range_order && !profile.dump.enabled);

    let debug = RuntimeConfig::preset(Preset::Debug);
    assert!(debug.nvtx.keep_track_of_range_order && debug.dump.enabled && debug.trace.enabled);

    // Memory per step from eval on, per op in debug; no device limit in any preset.
    assert!(!train.memory.per_step && !train.memory.per_op);
    assert!(eval.memory.per_step && !eval.memory.per_op);
    assert!(profile.memory.per_step && !profile.memory.per_op);
    assert!(debug.memory.per_step && debug.memory.per_op);
    assert!(
        [&train, &eval, &profile, &debug]
            .iter()
            .all(|config| config.memory.device_limit_mib.is_none())
    );
}

#[test]
fn memory_keys_that_cannot_be_are_errors_naming_the_key() {
    let memory = RuntimeConfig::from_toml_str(
        "[stats]\nenabled = true\n[memory]\nper_step = true\nper_op = true\ndevice_limit_mib = 20000\n",
    )
    .unwrap();
    assert!(memory.memory.per_step && memory.memory.per_op);
    assert_eq!(
        memory.memory.device_limit_mib.map(|mib| mib.get()),
        Some(20_000)
    );

    let unknown = RuntimeConfig::from_toml_str("[memory]\nper_stp = true\n")
        .unwrap_err()
        .to_string();
    assert!(
        unknown.contains("per_stp") && unknown.contains("line 2"),
        "{unknown}"
    );

    let zero = RuntimeConfig::from_toml_str("[memory]\ndevice_limit_mib = 0\n")
        .unwrap_err()
        .to_string();
    assert!(
        zero.contains("device_limit_mib") && zero.contains("nonzero"),
        "{zero}"
    );

    assert_eq!(
        RuntimeConfig::from_toml_str("[memory]\nper_op = true\n")
            .unwrap_err()
            .to_string(),
        "invalid configuration: `memory.per_op` needs `stats.enabled = true`: per-op memory is columns of the op table"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.json");
    std::fs::write(&file, r#"{"memory": {"per_op": true}}"#).unwrap();
    let message = RuntimeConfig::from_file(&file).unwrap_err().to_string();
    assert!(
        message.starts_with("invalid configuration in ")
            && message.contains("memory.json: `memory.per_op`"),
        "{message}"
    );
}

#[test]
fn files_round_trip_and_partial_files_take_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let debug = RuntimeConfig::preset(Preset::Debug);
    let toml_path = dir.path().join("debug.toml");
    std::fs::write(&toml_path, debug.to_toml()).unwrap();
    assert_eq!(RuntimeConfig::from_file(&toml_path).unwrap(), debug);

    let json_path = dir.path().join("partial.json");
    std::fs::write(&json_path, r#"{"stats": {"enabled": true}}"#).unwrap();
    let partial = RuntimeConfig::from_file(&json_path).unwrap();
    assert!(partial.stats.enabled && !partial.stopwatch.enabled);
    assert_eq!(
        RuntimeConfig::from_name_or_path(json_path.to_str().unwrap()).unwrap(),
        partial
    );
    assert_eq!(
        RuntimeConfig::from_name_or_path("eval").unwrap(),
        RuntimeConfig::preset(Preset::Eval)
    );
}

#[test]
fn errors_name_the_key_the_line_or_the_file() {
    let unknown = RuntimeConfig::from_toml_str("[stopwatch]\nenabled = true\nwarmup = 3\n")
        .unwrap_err()
        .to_string();
    assert!(
        unknown.contains("warmup") && unknown.contains("line 3"),
        "{unknown}"
    );

    let bad_value = RuntimeConfig::from_toml_str("[trace]\nmax_events = \"many\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        bad_value.contains("max_events") || bad_value.contains("line 2"),
        "{bad_value}"
    );

    let zero = RuntimeConfig::from_toml_str("[stopwatch]\nprint_every = 0\n")
        .unwrap_err()
        .to_string();
    assert!(
        zero.contains("print_every") && zero.contains("line 2") && zero.contains("nonzero"),
        "{zero}"
    );

    let unknown_section = RuntimeConfig::from_json_str("{\n  \"stopwach\": {}\n}")
        .unwrap_err()
        .to_string();
    assert!(
        unknown_section.contains("stopwach") && unknown_section.contains("line 2"),
        "{unknown_section}"
    );

    let missing = RuntimeConfig::from_file("/nonexistent/run.toml").unwrap_err();
    assert!(matches!(missing, ConfigError::Read { .. }));
    assert!(missing.to_string().contains("/nonexistent/run.toml"));

    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "[nvtx]\nop_ranges = yes\n").unwrap();
    let message = RuntimeConfig::from_file(&broken).unwrap_err().to_string();
    assert!(
        message.contains("broken.toml") && message.contains("line 2"),
        "{message}"
    );

    assert_eq!(
        RuntimeConfig::from_name_or_path("fast")
            .unwrap_err()
            .to_string(),
        "unknown preset `fast`: expected train, eval, profile or debug, or the path of a .toml or .json file"
    );
    assert!(matches!(
        RuntimeConfig::from_file(dir.path().join("x.yaml")),
        Err(ConfigError::Read { .. }) | Err(ConfigError::Extension(_))
    ));
}

#[test]
fn the_roofline_example_configuration_is_the_profile_preset_with_the_roofline_measured() {
    let file = RuntimeConfig::from_file("examples/roofline.toml").unwrap();
    let mut expected = RuntimeConfig::preset(Preset::Profile);
    expected.stats.device_time = false;
    expected.roofline.calibrate = true;
    expected.roofline.in_table = true;
    assert_eq!(file, expected);
}

#[test]
fn roofline_keys_that_cannot_go_together_are_refused_by_name() {
    let refused = |toml: &str| RuntimeConfig::from_toml_str(toml).unwrap_err().to_string();
    assert_eq!(
        refused("[roofline]\ncounts = true"),
        "invalid configuration: `roofline.counts` needs `stats.enabled = true`: an op's work is columns of the op table"
    );
    assert_eq!(
        refused("[stats]\nenabled = true\n[roofline]\ncounts = true\npeak_tflops = 1.0"),
        "invalid configuration: `roofline.peak_tflops` goes with `roofline.peak_gbps`: a roofline has both roofs"
    );
    assert_eq!(
        refused(
            "[stats]\nenabled = true\n[roofline]\ncounts = true\npeak_tflops = -1.0\npeak_gbps = 5.0"
        ),
        "invalid configuration: `roofline.peak_tflops` must be a positive number"
    );
    assert_eq!(
        refused("[stats]\nenabled = true\n[roofline]\ncalibrate = true"),
        "invalid configuration: `roofline.calibrate` needs `roofline.counts = true`: the roofline places each op by its counts"
    );
    assert_eq!(
        refused(
            "[stats]\nenabled = true\n[roofline]\ncounts = true\ncalibrate = true\npeak_tflops = 1.0\npeak_gbps = 5.0"
        ),
        "invalid configuration: `roofline.calibrate` measures what `roofline.peak_tflops` and `peak_gbps` give: set one or the other"
    );
}

/// `[numerics]`: its keys read back, a check mode that is not one is named with the ones that
/// are, and `steps` that cannot be are refused by name.
#[test]
fn numerics_keys_that_cannot_be_are_errors_naming_the_key() {
    let numerics = RuntimeConfig::from_toml_str(
        "[numerics]\nfingerprints = true\ncheck_finite = \"stop\"\nsteps = [2, 5]\n",
    )
    .unwrap();
    assert!(numerics.numerics.fingerprints);
    assert_eq!(
        numerics.numerics.check_finite,
        burn_profiled::config::CheckFinite::Stop
    );
    assert_eq!(numerics.numerics.steps, Some([2, 5]));

    let mode = RuntimeConfig::from_toml_str("[numerics]\ncheck_finite = \"panic\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        mode.contains("check_finite") || mode.contains("panic"),
        "{mode}"
    );
    assert!(
        mode.contains("`off`") && mode.contains("`warn`") && mode.contains("`stop`"),
        "{mode}"
    );
    assert_eq!(
        RuntimeConfig::from_toml_str("[numerics]\nfingerprints = true\nsteps = [5, 2]\n")
            .unwrap_err()
            .to_string(),
        "invalid configuration: `numerics.steps` is [first, last]: the first step cannot come after the last"
    );
    assert_eq!(
        RuntimeConfig::from_toml_str("[numerics]\nsteps = [0, 3]\n")
            .unwrap_err()
            .to_string(),
        "invalid configuration: `numerics.steps` bounds `numerics.fingerprints` and `numerics.check_finite`: set one of them"
    );
    let capture =
        RuntimeConfig::from_toml_str("[numerics]\nfingerprints = true\ncapture = [1, 40]\n");
    assert_eq!(capture.unwrap().numerics.capture, Some([1, 40]));
    assert_eq!(
        RuntimeConfig::from_toml_str("[numerics]\ncheck_finite = \"warn\"\ncapture = [1, 40]\n")
            .unwrap_err()
            .to_string(),
        "invalid configuration: `numerics.capture` names an op call by its `seq` in numerics.jsonl, which `numerics.fingerprints` numbers: set it"
    );
    assert_eq!(
        RuntimeConfig::from_toml_str(
            "[numerics]\nfingerprints = true\nsteps = [2, 3]\ncapture = [1, 40]\n"
        )
        .unwrap_err()
        .to_string(),
        "invalid configuration: `numerics.capture` names a step outside `numerics.steps`, whose ops are not recorded"
    );
    let debug = RuntimeConfig::preset(burn_profiled::config::Preset::Debug);
    assert!(debug.numerics.fingerprints);
    assert_eq!(
        debug.numerics.check_finite,
        burn_profiled::config::CheckFinite::Warn
    );
    assert!(
        !RuntimeConfig::preset(burn_profiled::config::Preset::Profile)
            .numerics
            .enabled()
    );
}
