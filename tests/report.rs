//! `burn-profiled report`: one HTML file that opens from disk. Its rows and totals are those
//! of `ops.json`, every string of the run is escaped, nothing is loaded from the network, and
//! input it cannot use exits 2. `rendered_in_chromium` opens it in a real browser (ignored
//! here: it needs Debian's `chromium`, which `.ci/run` installs and runs it with).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

mod support;

fn report(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(support::cli("burn-profiled"))
        .arg("report")
        .args(args)
        .output()
        .expect("burn-profiled runs")
}

/// A run of the example under `profile`: it writes `report.html` itself.
fn example_run(out: &Path) {
    support::train_example_succeeds(
        &["--steps", "8", "--batch", "2", "--preset", "profile"],
        out,
    );
}

fn ops_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("ops.json")).unwrap()).unwrap()
}

/// `ops.json`'s rows, calls and total as the report's totals line says them.
fn totals_line(ops: &Value) -> (usize, u64) {
    let rows = ops["rows"].as_array().unwrap();
    (
        rows.len(),
        rows.iter().map(|r| r["calls"].as_u64().unwrap()).sum(),
    )
}

#[test]
fn the_session_writes_the_report_and_the_command_writes_the_same() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    example_run(&run);
    let written = std::fs::read_to_string(run.join("report.html")).unwrap();
    let again = root.path().join("again.html");
    let output = report(&[run.as_os_str(), "--out".as_ref(), again.as_os_str()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(&again).unwrap(), written);

    let (rows, calls) = totals_line(&ops_json(&run));
    assert_eq!(written.matches("<tr data-phase=").count(), rows);
    assert!(written.contains(&format!("<p id=\"totals\">{rows} rows, {calls} calls, ")));
    for chart in ["step-times", "phases", "top-ops", "memory-0"] {
        assert!(written.contains(&format!("<svg id=\"{chart}\"")), "{chart}");
    }
    // The profile preset links backward ops to forward ones: the time per module is there,
    // its modules the paths of the example's ranges.
    let modules = &written[written
        .find("<table id=\"modules\">")
        .expect("a module table")..];
    for module in [
        "step/forward",
        "step/forward/attention",
        "step/forward/head",
    ] {
        assert!(
            modules.contains(&format!("<td class=\"name\">{module}</td>")),
            "{module}"
        );
    }
    assert!(
        !written.contains("-device\"") && !written.contains("<td>device time</td>"),
        "no device time without device time"
    );
    assert!(
        !written.contains("id=\"stopped\""),
        "the run ran to its end"
    );
    // 8 steps, 3 of them warm-up: the line charts run from step 3 to step 7, each point
    // with its step on hover.
    for chart in ["step-times", "memory-0"] {
        let svg = &written[written.find(&format!("<svg id=\"{chart}\"")).unwrap()..];
        let svg = &svg[..svg.find("</svg>").unwrap()];
        assert!(
            svg.contains(">step 3</text>") && svg.contains(">step 7</text>"),
            "{svg}"
        );
        let hovered: Vec<&str> = svg
            .split("<title>")
            .skip(1)
            .map(|title| title.split(':').next().unwrap())
            .collect();
        assert_eq!(
            hovered,
            ["step 3", "step 4", "step 5", "step 6", "step 7"],
            "{chart}"
        );
    }
    assert!(
        !written.contains("http://") && !written.contains("https://") && !written.contains(" src="),
        "self-contained: nothing loaded from elsewhere"
    );
}

/// The report `burn-profiled report` writes of a run directory holding `run_json` and, if
/// given, `ops_json`.
fn report_of(run_json: Value, ops_json: Option<Value>) -> String {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("run.json"), run_json.to_string()).unwrap();
    if let Some(ops) = ops_json {
        std::fs::write(run.join("ops.json"), ops.to_string()).unwrap();
    }
    let output = report(&[run.as_os_str()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(run.join("report.html")).unwrap()
}

#[test]
fn the_header_gives_the_wall_time_in_its_unit_the_device_time_why_the_run_stopped_and_its_first_nan()
 {
    let html = report_of(
        json!({
            "format_version": 1, "backend": "autodiff<profiled<ndarray>>", "device": "Cpu",
            "steps": 8, "measured_steps": 2, "wall_seconds": 0.370808758, "step_seconds": [0.01, 0.02],
            "device_time": {"kernels": 40, "device_ns": 11000000, "seconds_per_step": 0.0055,
                            "unattributed_kernels": 2, "unattributed_ns": 3000, "incomplete_kernels": 0,
                            "tagged_api_calls": 40, "dropped_records": 0, "tag_errors": 0},
            "stopped_by": "burn-profiled: host memory limit of 1 MiB <exceeded>",
            "non_finite": {"step": 3, "op": "float_log", "phase": "forward", "call_site": null,
                           "thread": "main", "inputs_finite": true,
                           "inputs": [{"dtype": "f32", "shape": [2], "elements": 2, "nan": 0,
                                       "pos_inf": 0, "neg_inf": 0, "min": -1.0, "max": 1.0,
                                       "sum": 0.0, "sum_squares": 2.0, "sum_abs": 2.0,
                                       "weighted_sum": 1.0}],
                           "outputs": [{"dtype": "f32", "shape": [2], "elements": 2, "nan": 1,
                                        "pos_inf": 0, "neg_inf": 0, "min": 0.0, "max": 0.0,
                                        "sum": 0.0, "sum_squares": 0.0, "sum_abs": 0.0,
                                        "weighted_sum": 0.0}]},
        }),
        None,
    );
    assert!(
        html.contains("<p id=\"non-finite\"><b>First NaN or Inf:</b> step 3: `float_log` in phase `forward` made 1 NaN, 0 +Inf, 0 -Inf of 2 elements from finite inputs [2]</p>"),
        "{html}"
    );
    assert!(
        html.contains("<tr><td>wall time</td><td>370.809 ms</td></tr>"),
        "{html}"
    );
    assert!(
        html.contains(
            "<tr><td>device time</td><td>5.500 ms per step, 40 kernels in their ops, 2 under no op</td></tr>"
        ),
        "{html}"
    );
    assert!(
        html.contains("<p id=\"stopped\"><b>The run was stopped early:</b> burn-profiled: host memory limit of 1 MiB &lt;exceeded&gt;</p>"),
        "{html}"
    );
}

/// The labels and values of the bar chart `id` in `html`, in order.
fn bars(html: &str, id: &str) -> Vec<String> {
    let svg = &html[html
        .find(&format!("<svg id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"))..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    svg.split("<text ")
        .skip(1)
        .map(|text| text[text.find('>').unwrap() + 1..text.find("</text>").unwrap()].to_owned())
        .collect()
}

#[test]
fn with_device_time_the_report_shows_where_the_kernels_time_goes_before_the_host_time() {
    // On a GPU the launches are cheap and the host waits in `sync`: host and device time
    // tell different stories.
    let row = |op: &str, phase: &str, host_us: u64, device_us: Option<u64>| {
        json!({"op": op, "phase": phase, "calls": 2, "total_ns": host_us * 1000,
               "device_total_ns": device_us.map(|us| us * 1000)})
    };
    let html = report_of(
        json!({"format_version": 1, "backend": "autodiff<profiled<cuda>>", "measured_steps": 2,
               "step_seconds": [0.01, 0.01]}),
        Some(json!({"format_version": 1, "rows": [
            row("sync", "step", 9000, None),
            row("float_matmul", "forward", 40, Some(6000)),
            row("conv2d", "forward", 60, Some(2000)),
            row("conv2d_x_backward", "backward", 50, Some(3000)),
        ]})),
    );
    assert_eq!(
        bars(&html, "phases-device"),
        ["forward", "4.000 ms", "backward", "1.500 ms"]
    );
    assert_eq!(
        bars(&html, "top-ops-device"),
        [
            "float_matmul",
            "3.000 ms",
            "conv2d_x_backward",
            "1.500 ms",
            "conv2d",
            "1.000 ms"
        ]
    );
    assert_eq!(
        bars(&html, "phases"),
        [
            "step", "4.500 ms", "forward", "50.0 us", "backward", "25.0 us"
        ]
    );
    assert!(
        html.find("id=\"phases-device\"") < html.find("id=\"phases\""),
        "device time comes first"
    );
}

#[test]
fn every_string_of_the_run_is_escaped() {
    let evil = "<script>alert('op')</script>";
    let html = report_of(
        json!({
            "format_version": 1, "backend": "<img src=x onerror=alert(1)>", "device": "\"><b>",
            "measured_steps": 2, "step_seconds": [0.01, 0.02], "config": {"x": "</pre><script>evil()"},
            "stopwatch": {"state": {"entries": [{"name": evil, "per_iteration": 0.1, "total": 0.2, "intervals": 2}]}},
        }),
        Some(json!({"format_version": 1, "rows": [
            {"op": evil, "phase": "<i>phase</i>", "calls": 2, "total_ns": 1000}
        ]})),
    );
    for raw in [evil, "<img src=x", "\"><b>", "<script>evil", "<i>phase</i>"] {
        assert!(!html.contains(raw), "{raw} reached the page unescaped");
    }
    assert!(html.contains("&lt;script&gt;alert(&#39;op&#39;)&lt;/script&gt;"));
    assert_eq!(
        html.matches("<script>").count(),
        1,
        "only the report's own script"
    );
}

const EVIL_OP: &str = "<script>alert('roof')</script>";

/// The report of a run with counted work and peaks, one op named [`EVIL_OP`] in phase `<b>`.
fn roofline_report() -> (tempfile::TempDir, std::path::PathBuf) {
    let evil = EVIL_OP;
    let roofline = |intensity: f64, flops_per_s: f64, share: f64, limit: &str| {
        json!({"time": "host", "intensity": intensity, "flops_per_s": flops_per_s,
               "bytes_per_s": flops_per_s / intensity, "bound_flops_per_s": flops_per_s / share,
               "share": share, "limit": limit})
    };
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let run_json = json!({"format_version": 2, "backend": "ndarray", "measured_steps": 2,
               "step_seconds": [0.01, 0.01], "config": {}});
    let ops_json = json!({"format_version": 2, "rows": [
            {"op": "float_matmul", "phase": "forward", "calls": 2, "total_ns": 8_000_000,
             "flops": 2_000_000_000u64, "bytes": 12_000_000,
             "roofline": roofline(166.7, 2.5e11, 0.25, "compute")},
            {"op": evil, "phase": "<b>", "calls": 2, "total_ns": 2_000_000,
             "flops": 1_000_000, "bytes": 12_000_000,
             "roofline": roofline(0.083, 5e8, 0.06, "memory")},
            {"op": "float_sort", "phase": "forward", "calls": 2, "total_ns": 1_000_000,
             "flops": null, "bytes": null},
        ], "work": {"counted_percent": 90.9, "unknown_ops": ["float_sort"], "unknown_percent": 9.1,
                     "peaks": {"flops_per_s": 1e12, "bytes_per_s": 1e11},
                     "host_times_are_launches": false}});
    std::fs::write(run.join("run.json"), run_json.to_string()).unwrap();
    std::fs::write(run.join("ops.json"), ops_json.to_string()).unwrap();
    reported(root, &run)
}

/// The roofline chart places each op with a time of its own, under the two roofs, its hover
/// text escaped; the op table has the roofline's columns.
#[test]
fn the_roofline_places_the_ops_under_the_roofs_with_their_names_escaped() {
    let evil = EVIL_OP;
    let (_root, page) = roofline_report();
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        html.contains("<p id=\"work\">Work counted for 90.9% of op time; no formula for float_sort (9.1%).</p>"),
        "{html}"
    );
    assert!(html.contains(
        "<p id=\"peaks\">Roofs: 1.0 TFLOP/s and 100.0 GB/s (given in the configuration).</p>"
    ));
    let chart = &html[html.find("<svg id=\"roofline\"").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert_eq!(
        chart.matches("<circle ").count(),
        2,
        "the sort has no place: {chart}"
    );
    assert!(chart.contains("<polyline id=\"roofs\""));
    assert!(chart.contains(
        "<title>float_matmul (forward): 250.0 GFLOP/s at 166.70 FLOP/B over host time 8.000 ms, 25.0% of the roofline, compute-bound</title>"
    ), "{chart}");
    assert!(!html.contains(evil) && !html.contains("(<b>)"), "escaped");
    assert!(chart.contains("&lt;script&gt;alert(&#39;roof&#39;)&lt;/script&gt; (&lt;b&gt;)"));
    assert!(html.contains(
        "<th>FLOP/s</th><th>FLOP/B</th><th>roofline %</th><th class=\"name\">limit</th>"
    ));
    assert!(
        html.contains(
            "<td data-v=\"25\">25.0%</td><td class=\"name\" data-v=\"compute\">compute</td>"
        ),
        "{html}"
    );
}

#[test]
fn input_it_cannot_use_exits_2_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("garbage");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("run.json"),
        "{\"format_version\": 1, \"backend\": ",
    )
    .unwrap();
    let output = report(&[run.as_os_str()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "burn-profiled report: {}: not a burn-profiled run.json: ",
            run.join("run.json").display()
        )),
        "{stderr}"
    );
    assert!(!run.join("report.html").exists());
    let output = report(&[root.path().join("nothing").as_os_str()]);
    assert_eq!(output.status.code(), Some(2));
}

/// The DOM of `page` once headless chromium has loaded it from disk and run its script.
fn chromium_dom(page: &Path) -> String {
    let output = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs (apt-get install -y chromium)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
#[ignore = "needs Debian's chromium: `.ci/run` installs it and runs this test"]
fn rendered_in_chromium() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    example_run(&run);
    let page = run.join("report.html");
    let dom = chromium_dom(&page);
    // The script ran to its end: no script error on the way.
    assert!(
        dom.contains("data-ready=\"true\""),
        "the script did not finish"
    );
    let (rows, calls) = totals_line(&ops_json(&run));
    assert_eq!(dom.matches("<tr data-phase=").count(), rows);
    assert!(dom.contains(&format!("<p id=\"totals\">{rows} rows, {calls} calls, ")));
    assert!(
        dom.matches("<rect ").count() >= 2,
        "the bar charts are drawn"
    );
    assert!(dom.contains("<polyline "), "the step-time chart is drawn");
    // The profile preset counts work. NdArray's host times are its ops' own, so its ops with
    // FLOPs are placed (no peaks in the preset: no roofs); the example built with `wgpu` has
    // launch times only, which the section says instead.
    assert!(
        dom.contains("<p id=\"work\">Work counted for "),
        "the roofline section"
    );
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    if run["backend"].as_str().unwrap().contains("ndarray") {
        let chart = &dom[dom
            .find("<svg id=\"roofline\"")
            .expect("the roofline is drawn")..];
        let chart = &chart[..chart.find("</svg>").unwrap()];
        assert!(
            chart.matches("<circle ").count() > 0,
            "its ops are placed: {chart}"
        );
    } else {
        assert!(dom.contains("<p id=\"launches\">"), "why no op is placed");
    }
}

#[test]
#[ignore = "needs Debian's chromium: `.ci/run` installs it and runs this test"]
fn the_roofline_renders_in_chromium_with_hostile_op_names_as_text() {
    let (_root, page) = roofline_report();
    let dom = chromium_dom(&page);
    assert!(
        dom.contains("data-ready=\"true\""),
        "the script did not finish"
    );
    let chart = &dom[dom
        .find("<svg id=\"roofline\"")
        .expect("the roofline is drawn")..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert_eq!(chart.matches("<circle ").count(), 2, "{chart}");
    assert!(chart.contains("<polyline id=\"roofs\""), "{chart}");
    // The name is the hover text, not markup: no script element came of it.
    assert!(
        chart.contains("&lt;script&gt;alert('roof')&lt;/script&gt; (&lt;b&gt;)"),
        "{chart}"
    );
    assert_eq!(
        dom.matches("<script>").count(),
        1,
        "only the report's own script"
    );
}

/// `burn-profiled report` of `run` (in `root`), which succeeds: its page.
fn reported(root: tempfile::TempDir, run: &Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let output = report(&[run.as_os_str()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (root, run.join("report.html"))
}

/// A run with call sites: its ops, and its stacks folded, one frame a hostile symbol name.
fn flame_graph_report() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let run_json = json!({"format_version": 3, "backend": "ndarray", "measured_steps": 2,
               "step_seconds": [0.01, 0.01], "config": {}});
    let ops_json = json!({"format_version": 3, "rows": [
            {"op": "float_matmul", "phase": "forward", "calls": 2, "total_ns": 6_000_000},
            {"op": "float_add", "phase": "backward", "calls": 2, "total_ns": 2_000_000}]});
    std::fs::write(run.join("run.json"), run_json.to_string()).unwrap();
    std::fs::write(run.join("ops.json"), ops_json.to_string()).unwrap();
    std::fs::write(
        run.join("stacks.folded"),
        format!(
            "main;train;Model::forward;float_matmul 6000\nmain;train;{EVIL_OP};float_add 2000\n"
        ),
    )
    .unwrap();
    reported(root, &run)
}

#[test]
fn device_time_stacks_have_a_graph_of_their_own_and_unreadable_stacks_say_so() {
    let (root, page) = flame_graph_report();
    let run = page.parent().unwrap();
    std::fs::write(
        run.join("stacks_device.folded"),
        "main;train;Model::forward;float_matmul 3000\n",
    )
    .unwrap();
    std::fs::write(run.join("stacks.folded"), "not a stack\n").unwrap();
    let (_root, page) = reported(root, run);
    let html = std::fs::read_to_string(page).unwrap();
    let device = &html[html
        .find("<iframe id=\"flamegraph-device\"")
        .expect("the device graph")..];
    assert!(
        device.contains("Model::forward (3,000 µs, 100.00%)"),
        "{device}"
    );
    assert!(
        html.contains("<p>Host time: no flame graph ("),
        "the host graph's stacks could not be read, and the page says so: {html}"
    );
}

#[test]
fn a_run_with_call_sites_has_a_flame_graph_with_its_frames_escaped() {
    let (_root, page) = flame_graph_report();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>Where in your code</h2>"), "{html}");
    let frame = &html[html.find("<iframe id=\"flamegraph\"").expect("the graph")..];
    let frame = &frame[..frame.find("</iframe>").unwrap()];
    assert!(
        frame.contains("Model::forward (6,000 µs, 75.00%)"),
        "each frame's hover text: its time and share: {frame}"
    );
    assert!(
        !frame.contains("<script>alert") && !frame.contains("&lt;script&gt;alert"),
        "a frame's name is text twice escaped inside the frame's document: {frame}"
    );
    assert!(
        !html.contains("id=\"flamegraph-device\""),
        "no device time, no device graph"
    );
}

#[test]
#[ignore = "needs Debian's chromium: `.ci/run` installs it and runs this test"]
fn the_flame_graph_hovers_and_zooms_in_chromium() {
    let (_root, page) = flame_graph_report();
    // What a user does, played into the graph's own document once its script has set it up.
    let probe = r#"<script>
window.addEventListener("load", () => setTimeout(() => {
  const doc = document.getElementById("flamegraph").contentDocument;
  const group = [...doc.getElementById("frames").children]
    .find((g) => g.querySelector("title").textContent.startsWith("Model::forward"));
  const rect = group.querySelector("rect");
  rect.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
  document.body.dataset.hovered = doc.getElementById("details").textContent;
  const before = rect.getAttribute("width");
  rect.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  document.body.dataset.zoomed = `${before} -> ${rect.getAttribute("width")}`;
  document.body.dataset.unzoom = doc.getElementById("unzoom").getAttribute("class");
  document.body.dataset.scripts = doc.querySelectorAll("script").length;
}, 500));
</script></body>"#;
    let html = std::fs::read_to_string(&page)
        .unwrap()
        .replace("</body>", probe);
    let played = page.with_file_name("played.html");
    std::fs::write(&played, html).unwrap();
    let dom = chromium_dom(&played);
    assert!(
        dom.contains("data-hovered=\"Function: Model::forward (6,000 µs, 75.00%)\""),
        "hover names the frame: {dom}"
    );
    assert!(
        dom.contains("data-zoomed=\"75.0000% -&gt; 100.0000%\""),
        "a click zooms into the frame: {dom}"
    );
    assert!(
        dom.contains("data-unzoom=\"\""),
        "the zoom shows its reset button: {dom}"
    );
    assert!(
        dom.contains("data-scripts=\"1\""),
        "only inferno's script in the graph: the hostile frame is text"
    );
}

/// A run directory with `run.json`, one row of `ops.json` and `modules` as
/// `ops_by_module.json`'s text.
fn run_with_modules(modules: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let run_json = json!({"format_version": 6, "backend": "ndarray", "measured_steps": 2,
        "step_seconds": [0.01, 0.01]});
    let ops_json = json!({"format_version": 6, "rows": [
        {"op": "conv2d", "phase": "conv", "calls": 2, "total_ns": 4000}
    ]});
    std::fs::write(run.join("run.json"), run_json.to_string()).unwrap();
    std::fs::write(run.join("ops.json"), ops_json.to_string()).unwrap();
    std::fs::write(run.join("ops_by_module.json"), modules).unwrap();
    (root, run)
}

#[test]
fn with_forward_links_the_report_has_the_time_per_module_per_step_escaped() {
    let modules = json!({"format_version": 6, "time": "host", "modules": [
        {"module": "<b>conv</b>", "forward_ns": 4000, "backward_ns": 12000, "optimizer_ns": 2000,
         "total_ns": 18000, "total_percent": 100.0}
    ]});
    let (_root, run) = run_with_modules(&modules.to_string());
    let output = report(&[run.as_os_str()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    let table = &html[html
        .find("<table id=\"modules\">")
        .expect("the module table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(
        table.contains(
            "<tr><td class=\"name\">&lt;b&gt;conv&lt;/b&gt;</td><td data-v=\"4000\">2.0 us</td>\
             <td data-v=\"12000\">6.0 us</td><td data-v=\"2000\">1.0 us</td>\
             <td data-v=\"18000\">9.0 us</td></tr>"
        ),
        "{table}"
    );
    assert!(html.contains("(host time per measured step)"));
}

#[test]
fn a_malformed_ops_by_module_json_exits_2_naming_it() {
    let (_root, run) = run_with_modules("{\"format_version\": 6, \"modules\": 3}");
    let output = report(&[run.as_os_str()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "burn-profiled report: {}: not a burn-profiled ops_by_module.json: ",
            run.join("ops_by_module.json").display()
        )),
        "{stderr}"
    );
    assert!(!run.join("report.html").exists());
}

#[test]
fn the_report_lists_what_stays_alive_escaped() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let run_json = json!({"format_version": 7, "backend": "ndarray", "measured_steps": 3,
        "step_seconds": [0.01, 0.01, 0.01],
        "memory": {"steps": [1, 2, 3], "host": {"rss_bytes": [1, 2, 3], "peak_rss_bytes": 3},
            "devices": [], "growth": [],
            "kept_alive": [{"memory": "host", "op": "float_zeros", "phase": "<i>head</i>",
                "call_site": "train (examples/train.rs:186)", "input_shapes": null,
                "bytes_per_step": 1048576, "made_in_steps": 2, "of_steps": 2}]}});
    std::fs::write(run.join("run.json"), run_json.to_string()).unwrap();
    let output = report(&[run.as_os_str()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains(
            "<tr><td>host</td><td class=\"name\">float_zeros</td><td>&lt;i&gt;head&lt;/i&gt;</td>\
             <td>train (examples/train.rs:186)</td><td>-</td><td data-v=\"1048576\">1.00 MiB</td>\
             <td>2 of 2</td></tr>"
        ),
        "{html}"
    );
}
