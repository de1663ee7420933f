//! The training example under each preset writes exactly the artefacts the preset promises,
//! and a bad configuration file stops it with a message naming the key and the line.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

mod support;

fn run(args: &[&str], out: &Path) -> Output {
    let args: Vec<&str> = args.iter().copied().chain(["--batch", "2"]).collect();
    support::run_train_example(&args, out)
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn each_preset_writes_what_it_promises() {
    let dir = tempfile::tempdir().unwrap();

    let out = dir.path().join("train");
    let output = run(&["--steps", "4", "--preset", "train"], &out);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(files(&out), ["run.json"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("Stopwatch"), "train measures nothing");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "train asks for no ranges, so nothing is said of a tool"
    );
    let run_json = json(&out.join("run.json"));
    assert_eq!(run_json["steps"], 4);
    assert_eq!(run_json["burn_version"], "0.21.0");
    assert!(
        run_json["backend"]
            .as_str()
            .unwrap()
            .contains("profiled<ndarray>")
    );
    assert!(run_json.get("memory").is_none(), "train samples no memory");

    let out = dir.path().join("eval");
    let output = run(&["--steps", "5", "--preset", "eval"], &out);
    assert!(output.status.success());
    assert_eq!(files(&out), ["run.json"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("Num. measured iterations: 2"));
    let run_json = json(&out.join("run.json"));
    assert_eq!(run_json["stopwatch"]["state"]["iterations"], 2);
    assert_eq!(run_json["memory"]["steps"], serde_json::json!([3, 4]));
    assert_eq!(
        run_json["memory"]["host"]["rss_bytes"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .contains("memory at the ends of 2 measured steps: host RSS peak "),
        "the closing line"
    );

    let out = dir.path().join("profile");
    let output = run(&["--steps", "5", "--preset", "profile"], &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        stderr,
        "burn-profiled: no NVTX tool is attached to this process, so its NVTX ranges go nowhere \
         and cost nothing; run it under `nsys profile --trace=nvtx,cuda` to see them. The op \
         table and trace.json need no tool.\n",
        "outside nsys, profile's ranges are said to reach no tool, and nothing more"
    );
    assert_eq!(
        files(&out),
        [
            "ops.json",
            "ops_by_module.json",
            "report.html",
            "run.json",
            "trace.json"
        ]
    );
    let ops = json(&out.join("ops.json"));
    let rows = ops["rows"].as_array().unwrap();
    assert!(ops["total_calls"].as_u64().unwrap() > 0);
    for op in ["conv2d", "conv2d_x_backward", "float_matmul", "linear"] {
        assert!(
            rows.iter()
                .any(|r| r["op"] == op && r["calls"].as_u64().unwrap() > 0),
            "{op} in ops.json"
        );
    }
    assert!(
        rows.iter()
            .any(|r| r["op"] == "linear" && r["phase"] == "head"),
        "the Ranged head is a phase"
    );
    let trace = json(&out.join("trace.json"));
    let events = trace["traceEvents"].as_array().unwrap();
    let spans: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(
        spans.iter().any(|e| e["cat"] == "cpu_op")
            && spans.iter().any(|e| e["cat"] == "user_annotation")
    );
    assert!(
        spans
            .iter()
            .any(|e| e["cat"] == "stopwatch" && e["name"] == "forward")
    );
    assert!(spans.iter().all(|e| e["dur"].as_f64().unwrap() >= 0.0));
    assert!(
        spans.iter().all(|e| e["args"]["Input Dims"].is_null()),
        "profile keeps no shapes"
    );
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"data loader"), "{names:?}");
    let host_rss: Vec<&Value> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "host memory")
        .collect();
    assert_eq!(host_rss.len(), 2, "a counter sample per measured step");
    assert!(host_rss[0]["args"]["rss_bytes"].as_f64().unwrap() > 0.0);

    let out = dir.path().join("debug");
    let output = run(&["--steps", "4", "--preset", "debug"], &out);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        files(&out),
        [
            "dumps",
            "graph.json",
            "numerics.jsonl",
            "ops.json",
            "ops_by_call_site.json",
            "ops_by_forward_call_site.json",
            "ops_by_module.json",
            "ops_by_shapes.json",
            "report.html",
            "run.json",
            "stacks.folded",
            "trace.json"
        ]
    );
    // The graph of the first measured step: each convolution backward op names the `conv2d`
    // call of that step it works for, called at the model's lines.
    let graph = json(&out.join("graph.json"));
    assert_eq!(graph["frees"], "host_allocator");
    let graph_ops = graph["ops"].as_array().unwrap();
    let conv_backward: Vec<&Value> = graph_ops
        .iter()
        .filter(|op| op["op"] == "conv2d_x_backward")
        .collect();
    assert!(!conv_backward.is_empty(), "{graph_ops:#?}");
    for op in conv_backward {
        let forward = &graph_ops[op["forward"]["index"].as_u64().unwrap() as usize];
        assert_eq!(forward["op"], "conv2d", "{op}");
        let site = forward["call_site"].as_str().unwrap();
        assert!(site.contains("examples/common/vision.rs:"), "{site}");
    }
    // Backward ops linked to their forward ops: nearly all backward time has a forward phase,
    // and by forward call site the convolutions' backward time is at the model's lines.
    let ops = json(&out.join("ops.json"));
    let backward: Vec<&Value> = ops["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["phase"] == "backward")
        .collect();
    let time =
        |rows: &[&Value]| -> u64 { rows.iter().map(|r| r["total_ns"].as_u64().unwrap()).sum() };
    let linked: Vec<&Value> = backward
        .iter()
        .copied()
        .filter(|row| {
            row["forward_phase"]
                .as_str()
                .is_some_and(|phase| phase != "-")
        })
        .collect();
    assert!(
        time(&linked) as f64 >= 0.95 * time(&backward) as f64,
        "{} of {} ns linked",
        time(&linked),
        time(&backward)
    );
    let by_site = json(&out.join("ops_by_forward_call_site.json"));
    let conv_lines: Vec<&str> = by_site["modules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["backward_ns"].as_u64().unwrap() > 0)
        .filter_map(|m| m["module"].as_str())
        .filter(|site| site.contains("examples/common/vision.rs:"))
        .collect();
    assert!(!conv_lines.is_empty(), "{by_site}");
    // In the flame graph's stacks, the convolutions' backward is under the model code that
    // called the convolutions, not under `loss.backward()`.
    let folded = std::fs::read_to_string(out.join("stacks.folded")).unwrap();
    let conv_backward: Vec<&str> = (folded.lines())
        .filter(|line| line.contains(";conv2d_x_backward "))
        .collect();
    assert!(!conv_backward.is_empty(), "{folded}");
    assert!(
        (conv_backward.iter())
            .all(|line| line.contains(";vision::VisionModel::forward;conv2d;[backward];")),
        "{conv_backward:?}"
    );
    // Every op of every step, warm-up included, each with its call site.
    let records = burn_profiled::numerics::file::read(&out).expect("numerics.jsonl reads");
    let steps: std::collections::BTreeSet<u64> = records.iter().map(|r| r.step).collect();
    assert_eq!(steps, (0..4).collect(), "every step, warm-up included");
    assert!(
        records
            .iter()
            .any(|r| r.op == "conv2d" && r.phase == "forward")
    );
    let forward_convs = records
        .iter()
        .filter(|r| r.op == "conv2d" && r.call_site.is_some());
    assert!(forward_convs.count() > 0);
    assert!(json(&out.join("run.json")).get("non_finite").is_none());
    let by_shapes = json(&out.join("ops_by_shapes.json"));
    assert!(
        by_shapes["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["op"] == "conv2d" && row["input_shapes"].is_string()),
        "{by_shapes}"
    );
    // With shapes kept, each op in the trace has them as Kineto's `Input Dims`: the same
    // shapes as the op's rows by shapes.
    let conv_shapes: std::collections::BTreeSet<String> = by_shapes["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["op"] == "conv2d")
        .map(|row| {
            let shapes: Value = serde_json::from_str(row["input_shapes"].as_str().unwrap())
                .expect("input_shapes reads as JSON");
            shapes.to_string()
        })
        .collect();
    let trace = json(&out.join("trace.json"));
    let conv_dims: std::collections::BTreeSet<String> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "cpu_op" && e["name"] == "conv2d")
        .map(|e| e["args"]["Input Dims"].to_string())
        .collect();
    assert_eq!(conv_dims, conv_shapes);
    let ops = json(&out.join("ops.json"));
    let conv = ops["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["op"] == "conv2d")
        .unwrap();
    assert!(
        conv["alloc_bytes"].as_u64().unwrap() > 0 && conv["peak_bytes"].as_u64().unwrap() > 0,
        "debug has per-op memory, the example a tracking allocator: {conv}"
    );
    assert!(ops.get("host_allocations_tracked").is_none());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("memory peak by phase: "), "{stdout}");
    assert_eq!(files(&out.join("dumps")), ["0"], "one batch dumped");
    let tensors = json(&out.join("dumps/0/tensors.json"));
    let grads = json(&out.join("dumps/0/grads.json"));
    for key in ["features", "attention", "logits"] {
        assert!(tensors["activations"][key].is_array(), "activation {key}");
        assert!(
            grads["activations"][key].is_array(),
            "gradient of activation {key}"
        );
    }
    assert_eq!(tensors["batch"]["labels"].as_array().unwrap().len(), 2);
    assert!(
        grads["parameters"]["head.weight"].is_array()
            || grads["parameters"]["head"]["weight"].is_array()
    );

    // A second debug run compares against the first: same seed, same data, consistent.
    let config = dir.path().join("compare.toml");
    let dumps = out.join("dumps");
    std::fs::write(
        &config,
        format!(
            "[dump]\nenabled = true\ncompare = true\ndir = {:?}\n",
            dumps.to_str().unwrap()
        ),
    )
    .unwrap();
    let output = run(
        &["--steps", "4", "--config", config.to_str().unwrap()],
        &dir.path().join("again"),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "`TensorDumper:` Tensor data is consistent with previously dumped data for dump 0."
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "`TensorDumper:` Grad data is consistent with previously dumped data for dump 0."
        ),
        "{stdout}"
    );
}

#[test]
fn a_run_stopped_by_the_memory_guard_says_why_on_stderr_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("guard.toml");
    std::fs::write(
        &config,
        "[host]\nmemory_limit_mib = 1\n[report]\nhtml = true\n",
    )
    .unwrap();
    let out = dir.path().join("guard");
    // Not a terminal: the progress bar draws nothing.
    let output = run(
        &["--steps", "5", "--config", config.to_str().unwrap()],
        &out,
    );
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("burn-profiled: host memory limit reached: this process uses ")
            && stderr.contains(
                " MiB of resident memory, more than the limit of 1 MiB; stopping the run"
            ),
        "{stderr}"
    );
    let run_json = json(&out.join("run.json"));
    assert_eq!(run_json["steps"], 1, "stopped after one step");
    assert!(
        run_json["stopped_by"]
            .as_str()
            .unwrap()
            .starts_with("host memory limit reached")
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        report.contains(
            "<p id=\"stopped\"><b>The run was stopped early:</b> host memory limit reached: "
        ),
        "the report says so too"
    );
}

#[test]
fn the_leak_option_shows_the_growth_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("leak");
    let output = run(&["--steps", "10", "--preset", "eval", "--leak"], &out);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("burn-profiled: memory grew by ")
            && stderr.contains(" per step on host over 7 measured steps"),
        "{stderr}"
    );
    let run_json = json(&out.join("run.json"));
    let growth = &run_json["memory"]["growth"][0];
    assert_eq!(growth["memory"], "host", "the tracking allocator's count");
    assert_eq!(growth["growing"], true);
}

#[test]
fn the_leak_option_under_debug_names_the_op_and_call_site_that_keep_the_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("leak");
    let output = run(&["--steps", "10", "--preset", "debug", "--leak"], &out);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warning = stderr
        .lines()
        .find(|line| line.contains(" per step on host over 7 measured steps"))
        .unwrap_or_else(|| panic!("a growth warning for the host: {stderr}"));
    // The example keeps a 256x1024 f32 tensor of zeros a step, made outside any user range.
    let source = std::fs::read_to_string("examples/train.rs").unwrap();
    let line = 1
        + (source.lines())
            .position(|line| line.contains("leaked.push(Tensor::<B, 2>::zeros("))
            .expect("the example's leak");
    let site = format!("train (examples/train.rs:{line})");
    assert!(
        warning.contains(&format!(
            "; made in one step and still alive at the end: 1.00 MiB/step by float_zeros at \
             {site} (in 6 of 6 steps)"
        )),
        "{warning}"
    );
    let run_json = json(&out.join("run.json"));
    let kept = &run_json["memory"]["kept_alive"][0];
    assert_eq!(kept["op"], "float_zeros");
    assert_eq!(kept["call_site"], site.as_str());
    assert_eq!(kept["bytes_per_step"], 1 << 20);
}

#[test]
fn a_bad_configuration_file_names_the_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("run.toml");
    std::fs::write(
        &config,
        "[stopwatch]\nenabled = true\nwarmup_iterations = 2\n",
    )
    .unwrap();
    let output = run(
        &["--config", config.to_str().unwrap()],
        &dir.path().join("out"),
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("run.toml")
            && stderr.contains("warmup_iterations")
            && stderr.contains("line 3"),
        "{stderr}"
    );
}

#[test]
fn device_time_without_cupti_says_so_once_and_keeps_host_times() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("device.toml");
    std::fs::write(&config, "[stats]\nenabled = true\ndevice_time = true\n").unwrap();
    let out = dir.path().join("out");
    let output = run(
        &["--steps", "4", "--config", config.to_str().unwrap()],
        &out,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("device time"))
        .collect();
    assert_eq!(
        said,
        [
            "burn-profiled: device time per op needs burn-profiled's `cupti` cargo feature (CUDA); \
             the op table has host times only"
        ]
    );
    assert_eq!(files(&out), ["ops.json", "run.json"]);
    let ops = json(&out.join("ops.json"));
    let rows = ops["rows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["op"] == "conv2d"));
    for row in rows {
        assert!(row["calls"].as_u64().unwrap() > 0);
        assert!(row.get("kernels").is_none() && row.get("device_total_ns").is_none());
    }
    assert!(ops.get("total_kernels").is_none());
    assert!(json(&out.join("run.json")).get("device_time").is_none());
}
