//! A run as one self-contained HTML page (`burn-profiled report`): the run, its step times as
//! a chart, where a step's time goes by phase, the top ops, the op table (sortable, filterable
//! by phase), the stopwatch report, and the memory series. No network: styles, the charts
//! (inline SVG) and the table's script are in the file. Every string from the run is escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::diff::{BeforeAfter, Diff, OpChange};
use super::{OpRow, Run, noise, time_text};
use crate::units::{bytes_text, rate_text};

pub use super::html_text::escape;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}\
th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}td.name,th.name{text-align:left}\
h2{margin-top:1.6em;border-bottom:1px solid #ccc}svg text{font-size:11px}.meta td{text-align:left}\
#stopped{color:#a00}\
pre{background:#f8f8f8;padding:8px;overflow:auto}\
iframe.flamegraph{width:100%;height:560px;border:1px solid #ddd}";

/// Sorts the op table by a clicked column, filters it by phase, and marks the page ready.
const SCRIPT: &str = r#"(function(){
var table=document.getElementById('ops');var body=table.tBodies[0];
var heads=table.tHead.rows[0].cells;var dir={};
for(var i=0;i<heads.length;i++){(function(col){heads[col].addEventListener('click',function(){
var rows=Array.prototype.slice.call(body.rows);var up=dir[col]=!dir[col];
rows.sort(function(a,b){var x=a.cells[col].getAttribute('data-v'),y=b.cells[col].getAttribute('data-v');
var nx=parseFloat(x),ny=parseFloat(y);var c=(isNaN(nx)||isNaN(ny))?x.localeCompare(y):nx-ny;return up?c:-c;});
rows.forEach(function(r){body.appendChild(r);});});})(i);}
var phase=document.getElementById('phase');phase.addEventListener('change',function(){
for(var i=0;i<body.rows.length;i++){var r=body.rows[i];
r.style.display=(phase.value===''||r.getAttribute('data-phase')===phase.value)?'':'none';}});
document.body.setAttribute('data-ready','true');})();"#;

/// A bar chart of `bars` (label, value), longest first, values shown with `text`.
fn bar_chart(id: &str, bars: &[(String, f64)], text: impl Fn(f64) -> String) -> String {
    let max = bars
        .iter()
        .map(|(_, v)| *v)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let height = 22 * bars.len() + 10;
    let mut svg =
        format!("<svg id=\"{id}\" class=\"chart\" width=\"760\" height=\"{height}\" role=\"img\">");
    for (at, (label, value)) in bars.iter().enumerate() {
        let y = 22 * at + 5;
        let width = (value / max * 420.0).max(1.0);
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\">{}</text><rect x=\"250\" y=\"{y}\" width=\"{width:.1}\" height=\"16\" fill=\"#4a7fb5\"/>\
             <text x=\"{:.1}\" y=\"{}\">{}</text>",
            y + 12,
            escape(&shorten(label, 40)),
            255.0 + width,
            y + 12,
            escape(&text(*value))
        );
    }
    svg.push_str("</svg>");
    svg
}

fn shorten(label: &str, chars: usize) -> String {
    match label.char_indices().nth(chars) {
        Some((at, _)) => format!("{}...", &label[..at]),
        None => label.to_owned(),
    }
}

/// The most points of a line chart that get a circle with their step and value on hover.
const MAX_HOVER_POINTS: usize = 2000;

/// A line chart of `values`, the value of each step of `steps` (as many), with the largest
/// value and 0 on the vertical axis, the first and last step on the horizontal one, and each
/// point's step and value on hover (up to [`MAX_HOVER_POINTS`] points).
fn line_chart(id: &str, values: &[f64], steps: &[u64], text: impl Fn(f64) -> String) -> String {
    let (width, height) = (760.0, 200.0);
    let max = values
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let spacing = match values.len() {
        0 | 1 => 0.0,
        n => (width - 80.0) / (n - 1) as f64,
    };
    let at = |index: usize, value: f64| {
        (
            70.0 + index as f64 * spacing,
            height - 30.0 - value / max * (height - 50.0),
        )
    };
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(index, v)| {
            let (x, y) = at(index, *v);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let mut chart = format!(
        "<svg id=\"{id}\" class=\"chart\" width=\"{width}\" height=\"{height}\" role=\"img\">\
         <text x=\"0\" y=\"24\">{}</text><text x=\"0\" y=\"{}\">0</text>\
         <polyline fill=\"none\" stroke=\"#4a7fb5\" stroke-width=\"1.5\" points=\"{}\"/>",
        escape(&text(max)),
        height - 30.0,
        points.join(" ")
    );
    if let (Some(first), Some(last)) = (steps.first(), steps.last()) {
        let _ = write!(
            chart,
            "<text x=\"70\" y=\"{height}\" dy=\"-6\">step {first}</text>\
             <text x=\"{}\" y=\"{height}\" dy=\"-6\" text-anchor=\"end\">step {last}</text>",
            width - 10.0
        );
    }
    if values.len() <= MAX_HOVER_POINTS {
        for (index, (value, step)) in values.iter().zip(steps).enumerate() {
            let (x, y) = at(index, *value);
            let _ = write!(
                chart,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2.5\" fill=\"#4a7fb5\">\
                 <title>step {step}: {}</title></circle>",
                escape(&text(*value))
            );
        }
    }
    chart.push_str("</svg>");
    chart
}

/// Of `rows`, the sum of `time` per `key` (rows without a time left out), per measured step
/// of `steps`, largest first.
fn per_step(
    rows: &[OpRow],
    steps: usize,
    key: impl Fn(&OpRow) -> String,
    time: impl Fn(&OpRow) -> Option<u64>,
) -> Vec<(String, f64)> {
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    for row in rows {
        if let Some(ns) = time(row) {
            *sums.entry(key(row)).or_default() += ns as f64;
        }
    }
    let mut bars: Vec<(String, f64)> = sums
        .into_iter()
        .map(|(key, ns)| (key, ns / steps.max(1) as f64))
        .collect();
    bars.sort_by(|a, b| b.1.total_cmp(&a.1));
    bars
}

/// The steps of `run`'s step times: the last `step_seconds.len()` of its steps (warm-up
/// steps come first and are not timed), counted from 0 with warm-up as `run.json` counts them.
fn step_numbers(run: &Run) -> Vec<u64> {
    let timed = run.step_seconds.len() as u64;
    let first = run.summary["steps"]
        .as_u64()
        .unwrap_or(timed)
        .saturating_sub(timed);
    (first..first + timed).collect()
}

/// `run.json`'s `device_time`, in a line: the device time per measured step, the kernels
/// matched to their op, and those launched under none; `None` without device time.
fn device_time_text(device_time: &Value) -> Option<String> {
    let kernels = device_time["kernels"].as_u64()?;
    let mut text = match device_time["seconds_per_step"].as_f64() {
        Some(seconds) => format!("{} per step, ", time_text(seconds * 1e9)),
        None => String::new(),
    };
    text.push_str(&format!("{kernels} kernels in their ops"));
    let unattributed = device_time["unattributed_kernels"].as_u64().unwrap_or(0);
    if unattributed > 0 {
        text.push_str(&format!(", {unattributed} under no op"));
    }
    let dropped = device_time["dropped_records"].as_u64().unwrap_or(0);
    if dropped > 0 {
        text.push_str(&format!(", {dropped} records CUPTI dropped"));
    }
    Some(text)
}

/// Writes the report of `run` to `path` (whole or not at all: through a temporary file).
pub fn write(run: &Run, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
    write_page(path, &html(run))
}

/// Writes `page` to `path`, whole or not at all.
pub fn write_page(path: impl AsRef<std::path::Path>, page: &str) -> std::io::Result<()> {
    crate::files::write_atomically(path.as_ref(), &[page.as_bytes()])
}

/// The report of `run`.
pub fn html(run: &Run) -> String {
    let summary = &run.summary;
    let field = |key: &str| match &summary[key] {
        Value::String(text) => text.clone(),
        Value::Null => "-".to_owned(),
        other => other.to_string(),
    };
    let mut page = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>burn-profiled: {}</title>\
         <style>{STYLE}</style></head><body><h1>burn-profiled run</h1><table class=\"meta\">",
        escape(&run.dir.display().to_string())
    );
    let wall_time = summary["wall_seconds"]
        .as_f64()
        .map_or_else(|| "-".to_owned(), |seconds| time_text(seconds * 1e9));
    let mut rows = vec![
        ("backend", field("backend")),
        ("device", field("device")),
        ("steps", field("steps")),
        ("measured steps", field("measured_steps")),
        ("wall time", wall_time),
    ];
    rows.extend(device_time_text(&summary["device_time"]).map(|text| ("device time", text)));
    rows.extend([
        ("burn-profiled", field("crate_version")),
        ("burn", field("burn_version")),
    ]);
    for (label, value) in rows {
        let _ = write!(page, "<tr><td>{label}</td><td>{}</td></tr>", escape(&value));
    }
    page.push_str("</table>");
    if let Some(why) = summary["stopped_by"].as_str() {
        let _ = write!(
            page,
            "<p id=\"stopped\"><b>The run was stopped early:</b> {}</p>",
            escape(why)
        );
    }

    // Read as the session wrote it; a `non_finite` of another shape is left out.
    if let Ok(found) =
        serde_json::from_value::<crate::numerics::NonFinite>(summary["non_finite"].clone())
    {
        let _ = write!(
            page,
            "<p id=\"non-finite\"><b>First NaN or Inf:</b> {}</p>",
            escape(&found.to_string())
        );
    }
    if let Ok(captured) =
        serde_json::from_value::<crate::numerics::CapturedOp>(summary["captured"].clone())
    {
        let _ = write!(
            page,
            "<p id=\"captured\"><b>Captured call:</b> {}</p>",
            escape(&captured.to_string())
        );
    }

    page.push_str("<h2>Step time</h2>");
    if run.step_seconds.is_empty() {
        page.push_str("<p>No measured steps.</p>");
    } else {
        let median = noise::median(&mut run.step_seconds.clone());
        let _ = write!(
            page,
            "<p>median {} over {} measured steps</p>{}",
            time_text(median * 1e9),
            run.step_seconds.len(),
            line_chart("step-times", &run.step_seconds, &step_numbers(run), |s| {
                time_text(s * 1e9)
            })
        );
    }

    if run.has_ops {
        let steps = run.measured_steps;
        let phase = |row: &OpRow| row.phase.clone();
        let op = |row: &OpRow| row.op.clone();
        let top_ten = |mut bars: Vec<(String, f64)>| {
            bars.truncate(10);
            bars
        };
        // On a GPU an op's host time is mostly its launch: where device time was recorded,
        // where the kernels' time goes comes first.
        if run.ops.iter().any(|row| row.device_total_ns.is_some()) {
            let device = |row: &OpRow| row.device_total_ns;
            let _ = write!(
                page,
                "<h2>Where a step's device time goes, by phase</h2><p>device time of the ops' \
                 kernels per measured step</p>{}<h2>Top ops by device time</h2>{}",
                bar_chart(
                    "phases-device",
                    &per_step(&run.ops, steps, phase, device),
                    time_text
                ),
                bar_chart(
                    "top-ops-device",
                    &top_ten(per_step(&run.ops, steps, op, device)),
                    time_text
                )
            );
        }
        let host = |row: &OpRow| Some(row.total_ns);
        let _ = write!(
            page,
            "<h2>Where a step's time goes, by phase</h2><p>host time of the ops per measured step</p>{}",
            bar_chart("phases", &per_step(&run.ops, steps, phase, host), time_text)
        );
        let _ = write!(
            page,
            "<h2>Top ops</h2>{}",
            bar_chart(
                "top-ops",
                &top_ten(per_step(&run.ops, steps, op, host)),
                time_text
            )
        );
        page.push_str(&modules_section(run));
        page.push_str(&roofline_section(&run.ops, &run.work));
        page.push_str(&flame_graph_section(run));
        page.push_str(&op_table(&run.ops));
    }

    if let Some(entries) = summary["stopwatch"]["state"]["entries"].as_array() {
        page.push_str("<h2>Stopwatch</h2><table><thead><tr><th class=\"name\">measurement</th><th>per iteration</th><th>total</th><th>intervals</th></tr></thead><tbody>");
        for entry in entries {
            let seconds = |key: &str| time_text(entry[key].as_f64().unwrap_or(0.0) * 1e9);
            let _ = write!(
                page,
                "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(entry["name"].as_str().unwrap_or("?")),
                seconds("per_iteration"),
                seconds("total"),
                entry["intervals"].as_u64().unwrap_or(0)
            );
        }
        page.push_str("</tbody></table>");
    }

    let memory = &summary["memory"];
    if memory.is_object() {
        page.push_str("<h2>Memory</h2>");
        let memory_steps: Vec<u64> = memory["steps"]
            .as_array()
            .map(|steps| steps.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        let mut series = vec![("host RSS".to_owned(), &memory["host"]["rss_bytes"])];
        if let Some(devices) = memory["devices"].as_array() {
            series.extend(devices.iter().map(|d| {
                (
                    format!("{} in use", d["device"].as_str().unwrap_or("?")),
                    &d["in_use_bytes"],
                )
            }));
        }
        for (at, (name, values)) in series.into_iter().enumerate() {
            let values: Vec<f64> = values
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            let peak = values.iter().copied().fold(0.0, f64::max);
            let _ = write!(
                page,
                "<h3>{} at each step's end: peak {}</h3>{}",
                escape(&name),
                bytes_text(peak as u64),
                line_chart(&format!("memory-{at}"), &values, &memory_steps, |b| {
                    bytes_text(b as u64)
                })
            );
        }
        for growth in memory["growth"].as_array().into_iter().flatten() {
            if growth["growing"] == true {
                let _ = write!(
                    page,
                    "<p><b>{} grew by {} per step</b></p>",
                    escape(growth["memory"].as_str().unwrap_or("?")),
                    bytes_text(growth["bytes_per_step"].as_f64().unwrap_or(0.0) as u64)
                );
            }
        }
        kept_alive_table(&mut page, &memory["kept_alive"]);
    }

    let _ = writeln!(
        page,
        "<h2>Configuration</h2><pre>{}</pre><script>{SCRIPT}</script></body></html>",
        escape(&serde_json::to_string_pretty(&summary["config"]).unwrap_or_default())
    );
    page
}

/// The flame graphs of the run's call stacks (`[stats] call_sites`): host time, and device
/// time where the run has it, each drawn by inferno as an SVG of its own (hover names a frame,
/// click zooms into it) in a frame of the page.
/// The time per module (`ops_by_module.json`) per measured step, as a table; nothing without
/// the file.
fn modules_section(run: &Run) -> String {
    let Some(modules) = run.modules.as_ref().filter(|m| !m.modules.is_empty()) else {
        return String::new();
    };
    let steps = run.measured_steps.max(1) as f64;
    let mut out = format!(
        "<h2>Time per module</h2><p>each forward phase's ops, with the backward and optimizer \
         ops linked to them ({} time per measured step)</p><table id=\"modules\"><thead><tr>\
         <th class=\"name\">module</th><th>forward</th><th>backward</th><th>optimizer</th>\
         <th>total</th></tr></thead><tbody>",
        escape(&modules.time)
    );
    for module in &modules.modules {
        let _ = write!(
            out,
            "<tr><td class=\"name\">{}</td>",
            escape(&module.module)
        );
        for ns in [
            module.forward_ns,
            module.backward_ns,
            module.optimizer_ns,
            module.total_ns,
        ] {
            let _ = write!(
                out,
                "<td data-v=\"{ns}\">{}</td>",
                time_text(ns as f64 / steps)
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

fn flame_graph_section(run: &Run) -> String {
    let graphs = [
        ("flamegraph", "Host time", run.stacks.as_deref()),
        (
            "flamegraph-device",
            "Device time",
            run.stacks_device.as_deref(),
        ),
    ];
    let mut section = String::new();
    for (id, time, folded) in graphs {
        let Some(folded) = folded.filter(|text| !text.trim().is_empty()) else {
            continue;
        };
        if section.is_empty() {
            section.push_str("<h2>Where in your code</h2><p>each op under the functions of your code it was called from (Burn's and the standard library's frames left out); hover for a frame's time, click to zoom</p>");
        }
        match flame_graph_svg(folded, &format!("{time} per call stack")) {
            Ok(svg) => {
                let _ = write!(
                    section,
                    "<iframe id=\"{id}\" class=\"flamegraph\" title=\"{time} per call stack\" srcdoc=\"{}\"></iframe>",
                    escape(&svg)
                );
            }
            Err(why) => {
                let _ = write!(section, "<p>{time}: no flame graph ({})</p>", escape(&why));
            }
        }
    }
    section
}

/// An interactive flame graph of `folded` stacks (microseconds), as inferno draws it.
fn flame_graph_svg(folded: &str, title: &str) -> Result<String, String> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_owned();
    options.count_name = "µs".to_owned();
    options.hash = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg)
        .map_err(|error| error.to_string())?;
    String::from_utf8(svg).map_err(|error| error.to_string())
}

/// The most decades an axis of the roofline chart spans: a grid line each.
const MAX_DECADES: f64 = 40.0;

/// The roofline: what was counted, the peaks, and a log-log chart of the ops placed by their
/// intensity and achieved FLOP/s, sized by their time, under the two roofs; empty when the run
/// counted no work.
fn roofline_section(rows: &[OpRow], work: &Value) -> String {
    if !work.is_object() {
        return String::new();
    }
    let mut out = String::from("<h2>Roofline</h2><p id=\"work\">");
    let _ = write!(
        out,
        "Work counted for {:.1}% of op time",
        work["counted_percent"].as_f64().unwrap_or(0.0)
    );
    let unknown: Vec<&str> = work["unknown_ops"]
        .as_array()
        .map(|ops| ops.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !unknown.is_empty() {
        let _ = write!(
            out,
            "; no formula for {} ({:.1}%)",
            escape(&unknown.join(", ")),
            work["unknown_percent"].as_f64().unwrap_or(0.0)
        );
    }
    out.push_str(".</p>");
    let peaks = (
        work["peaks"]["flops_per_s"].as_f64(),
        work["peaks"]["bytes_per_s"].as_f64(),
    );
    if let (Some(flops), Some(bytes)) = peaks {
        let how = match work["calibration"].as_object() {
            Some(calibration) => format!(
                "measured: {}; {}",
                calibration["arithmetic"].as_str().unwrap_or("?"),
                calibration["bandwidth"].as_str().unwrap_or("?")
            ),
            None => "given in the configuration".to_owned(),
        };
        let _ = write!(
            out,
            "<p id=\"peaks\">Roofs: {} and {} ({}).</p>",
            rate_text(flops, "FLOP/s"),
            rate_text(bytes, "B/s"),
            escape(&how)
        );
    }
    if work["host_times_are_launches"] == true {
        out.push_str(
            "<p id=\"launches\">No FLOP/s from these host times: on this asynchronous backend \
             an op's host time is its launch, and the wait lands in <code>sync</code>. Device \
             time or per-op sync gives each op its own time.</p>",
        );
    }
    let placed: Vec<(&OpRow, &super::RooflineRow)> = rows
        .iter()
        .filter_map(|row| Some((row, row.roofline.as_ref()?)))
        .filter(|(_, point)| {
            let drawable = |v: f64| v.is_finite() && v > 0.0;
            drawable(point.intensity) && drawable(point.flops_per_s)
        })
        .collect();
    if placed.is_empty() {
        out.push_str("<p>No op has both FLOPs and a time of its own to place.</p>");
        return out;
    }
    let own_ns = |row: &OpRow, point: &super::RooflineRow| match point.time.as_str() {
        "device" => row.device_total_ns.unwrap_or(0),
        _ => row.total_ns,
    };
    let longest = placed
        .iter()
        .map(|(row, point)| own_ns(row, point))
        .max()
        .unwrap_or(1)
        .max(1);
    // The axes, in decades around the points and the ridge.
    let mut xs: Vec<f64> = placed.iter().map(|(_, p)| p.intensity).collect();
    let mut ys: Vec<f64> = placed.iter().map(|(_, p)| p.flops_per_s).collect();
    if let (Some(flops), Some(bytes)) = peaks {
        xs.push(flops / bytes);
        ys.push(flops);
    }
    let decade = |values: &[f64], up: bool| {
        let extreme = values.iter().copied().fold(
            if up { f64::MIN } else { f64::MAX },
            if up { f64::max } else { f64::min },
        );
        if up {
            extreme.log10().ceil()
        } else {
            extreme.log10().floor()
        }
    };
    let (x0, x1) = (
        decade(&xs, false),
        decade(&xs, true).max(decade(&xs, false) + 1.0),
    );
    let (y0, y1) = (
        decade(&ys, false),
        decade(&ys, true).max(decade(&ys, false) + 1.0),
    );
    // A decade a grid line: the axes must be finite and span a drawable number of decades
    // (a peak of 0 or an infinite ridge would make the loops below run for 2^32 lines).
    let spans = [(x0, x1), (y0, y1)];
    if !spans
        .iter()
        .all(|(low, high)| low.is_finite() && high.is_finite() && high - low <= MAX_DECADES)
    {
        let _ = write!(
            out,
            "<p id=\"no-chart\">No chart: the points and roofs span more than {MAX_DECADES} \
             decades (FLOPs per byte {x0} to {x1}, FLOP/s {y0} to {y1}, as powers of 10).</p>"
        );
        return out;
    }
    let (width, height, left, bottom) = (760.0, 380.0, 70.0, 40.0);
    let px = |x: f64| left + (x.log10() - x0) / (x1 - x0) * (width - left - 20.0);
    let py = |y: f64| height - bottom - (y.log10() - y0) / (y1 - y0) * (height - bottom - 20.0);
    let mut svg = format!(
        "<svg id=\"roofline\" class=\"chart\" width=\"{width}\" height=\"{height}\" role=\"img\">"
    );
    for k in x0 as i32..=x1 as i32 {
        let x = px(10f64.powi(k));
        let _ = write!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"20\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">1e{k}</text>",
            height - bottom,
            height - bottom + 14.0
        );
    }
    for k in y0 as i32..=y1 as i32 {
        let y = py(10f64.powi(k));
        let _ = write!(
            svg,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            width - 20.0,
            left - 4.0,
            y + 4.0,
            escape(&rate_text(10f64.powi(k), ""))
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{height}\" dy=\"-4\" text-anchor=\"middle\">FLOPs per byte</text>\
         <text x=\"12\" y=\"14\">FLOP/s</text>",
        (left + width) / 2.0
    );
    if let (Some(flops), Some(bytes)) = peaks {
        let ridge = flops / bytes;
        let start = 10f64.powf(x0);
        let _ = write!(
            svg,
            "<polyline id=\"roofs\" fill=\"none\" stroke=\"#333\" stroke-width=\"2\" points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\"/>",
            px(start),
            py((start * bytes).max(10f64.powf(y0))),
            px(ridge),
            py(flops),
            px(10f64.powf(x1)),
            py(flops)
        );
    }
    for (row, point) in &placed {
        let share = own_ns(row, point) as f64 / longest as f64;
        let colour = match point.limit.as_deref() {
            Some("compute") => "#c0504d",
            Some("memory") => "#4a7fb5",
            _ => "#888",
        };
        let mut title = format!(
            "{} ({}): {} at {:.2} FLOP/B over {} time {}",
            row.op,
            row.phase,
            rate_text(point.flops_per_s, "FLOP/s"),
            point.intensity,
            point.time,
            time_text(own_ns(row, point) as f64)
        );
        if let (Some(share), Some(limit)) = (point.share, &point.limit) {
            let _ = write!(
                title,
                ", {:.1}% of the roofline, {limit}-bound",
                100.0 * share
            );
        }
        let _ = write!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{:.1}\" fill=\"{colour}\" fill-opacity=\"0.6\"><title>{}</title></circle>",
            px(point.intensity),
            py(point.flops_per_s),
            3.0 + 12.0 * share.sqrt(),
            escape(&title)
        );
    }
    svg.push_str("</svg>");
    out.push_str(&svg);
    out
}

/// The op table: every row of `ops.json`, a phase filter above it.
fn op_table(rows: &[OpRow]) -> String {
    let device = rows.iter().any(|r| r.device_total_ns.is_some());
    let memory = rows.iter().any(|r| r.alloc_bytes.is_some());
    let roofline = rows.iter().any(|r| r.roofline.is_some());
    let mut phases: Vec<&str> = rows.iter().map(|r| r.phase.as_str()).collect();
    phases.sort_unstable();
    phases.dedup();
    let mut out = String::from(
        "<h2>Ops</h2><p><label>phase <select id=\"phase\"><option value=\"\">all</option>",
    );
    for phase in &phases {
        let _ = write!(out, "<option>{}</option>", escape(phase));
    }
    out.push_str("</select></label> (click a column to sort)</p><table id=\"ops\"><thead><tr><th class=\"name\">op</th><th class=\"name\">phase</th><th>calls</th><th>total</th><th>total %</th><th>mean</th><th>p50</th><th>p95</th><th>max</th>");
    if device {
        out.push_str("<th>device total</th>");
    }
    if memory {
        out.push_str("<th>alloc</th><th>peak</th>");
    }
    if roofline {
        out.push_str(
            "<th>FLOP/s</th><th>FLOP/B</th><th>roofline %</th><th class=\"name\">limit</th>",
        );
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        let _ = write!(
            out,
            "<tr data-phase=\"{phase}\"><td class=\"name\" data-v=\"{op}\">{op}</td><td class=\"name\" data-v=\"{phase}\">{phase}</td><td data-v=\"{}\">{}</td>",
            row.calls,
            row.calls,
            op = escape(&row.op),
            phase = escape(&row.phase),
        );
        let time = |ns: u64| format!("<td data-v=\"{ns}\">{}</td>", time_text(ns as f64));
        out.push_str(&time(row.total_ns));
        let _ = write!(
            out,
            "<td data-v=\"{:.4}\">{:.2}%</td>",
            row.total_percent, row.total_percent
        );
        for ns in [row.mean_ns, row.p50_ns, row.p95_ns, row.max_ns] {
            out.push_str(&time(ns));
        }
        if device {
            let ns = row.device_total_ns.unwrap_or(0);
            let _ = write!(out, "<td data-v=\"{ns}\">{}</td>", time_text(ns as f64));
        }
        if memory {
            for bytes in [row.alloc_bytes, row.peak_bytes] {
                let bytes = bytes.unwrap_or(0);
                let _ = write!(out, "<td data-v=\"{bytes}\">{}</td>", bytes_text(bytes));
            }
        }
        if roofline {
            match &row.roofline {
                Some(point) => {
                    let _ = write!(
                        out,
                        "<td data-v=\"{}\">{}</td><td data-v=\"{}\">{:.2}</td>",
                        point.flops_per_s,
                        rate_text(point.flops_per_s, ""),
                        point.intensity,
                        point.intensity
                    );
                    let share = point.share.map(|s| 100.0 * s);
                    let _ = write!(
                        out,
                        "<td data-v=\"{}\">{}</td><td class=\"name\" data-v=\"{limit}\">{limit}</td>",
                        share.unwrap_or(-1.0),
                        share.map_or_else(|| "-".to_owned(), |s| format!("{s:.1}%")),
                        limit = escape(point.limit.as_deref().unwrap_or("-"))
                    );
                }
                None => out.push_str(
                    "<td data-v=\"-1\">-</td><td data-v=\"-1\">-</td><td data-v=\"-1\">-</td><td class=\"name\" data-v=\"-\">-</td>",
                ),
            }
        }
        out.push_str("</tr>");
    }
    // In 128 bits: rows built by hand are not checked as ops.json's are, and a sum past
    // 2^64 must not wrap to a small figure.
    let total: u128 = rows.iter().map(|r| u128::from(r.total_ns)).sum();
    let calls: u128 = rows.iter().map(|r| u128::from(r.calls)).sum();
    let _ = write!(
        out,
        "</tbody></table><p id=\"totals\">{} rows, {calls} calls, {} of op time</p>",
        rows.len(),
        time_text(total as f64)
    );
    out
}

/// Two runs compared (`burn-profiled diff --html`), as one self-contained page: the verdict,
/// then every op and phase, largest change first.
pub fn diff_html(diff: &Diff, before: &[Run], after: &[Run]) -> String {
    let side = |runs: &[Run]| {
        let dirs: Vec<String> = runs
            .iter()
            .map(|run| run.dir.display().to_string())
            .collect();
        let backend = runs.first().map_or("", |run| run.backend.as_str());
        (escape(&dirs.join(", ")), escape(backend))
    };
    let ((before_dirs, before_backend), (after_dirs, after_backend)) = (side(before), side(after));
    let mut page = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>burn-profiled diff</title>\
         <style>{STYLE}</style></head><body><h1>burn-profiled diff</h1><table class=\"meta\">\
         <tr><td>before</td><td>{before_dirs}</td><td>{before_backend}</td></tr><tr><td>after</td><td>{after_dirs}</td><td>{after_backend}</td></tr></table>\
         <h2>Step time</h2><p id=\"verdict\">{}</p>",
        escape(&diff.verdict.to_string())
    );
    if let Some((b, a)) = diff.step_seconds {
        let _ = write!(
            page,
            "<p>{} -> {} per step ({})</p>",
            time_text(b * 1e9),
            time_text(a * 1e9),
            diff.levels_text()
        );
    }
    if diff.one_run_a_side() {
        let _ = write!(
            page,
            "<p id=\"runs\">One run a side: the drift between processes goes unseen, so only a \
             change beyond {}% is claimed, and no op's change is. For a verdict, take 3 or more \
             runs a side in alternating order and give them all.</p>",
            diff.settings().noise_percent
        );
    }
    if !diff.differences.is_empty() {
        page.push_str("<h2>The runs differ in</h2><table id=\"differences\"><thead><tr><th class=\"name\">what</th><th class=\"name\">before</th><th class=\"name\">after</th></tr></thead><tbody>");
        for difference in &diff.differences {
            let _ = write!(
                page,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td></tr>",
                escape(&difference.what),
                escape(&difference.before),
                escape(&difference.after)
            );
        }
        page.push_str("</tbody></table>");
    }
    if diff.both_have_ops {
        let host: Vec<&OpChange> = diff.ops.iter().collect();
        page.push_str(&diff_ops_table(
            "ops",
            "Ops, host time per step",
            &host,
            OpChange::host,
            !diff.one_run_a_side(),
            true,
        ));
        let device = diff.device_ops();
        if !device.is_empty() {
            page.push_str(&diff_ops_table(
                "device-ops",
                "Ops, device time per step",
                &device,
                OpChange::device,
                false,
                false,
            ));
        }
    } else {
        page.push_str("<p>Ops not compared: a run has no ops.json.</p>");
    }
    for (name, b, a) in &diff.memory {
        let _ = write!(
            page,
            "<p>memory peak, {}: {} -> {}</p>",
            escape(name),
            bytes_text(*b),
            bytes_text(*a)
        );
    }
    if let (Some(b), Some(a)) = (before.first(), after.first()) {
        page.push_str(&numerics_section(b, a));
    }
    page.push_str("</body></html>\n");
    page
}

/// The paired regions the diff's page shows at most (`burn-profiled numerics --html` shows
/// more).
const DIFF_REGIONS: usize = 200;

/// Where both runs wrote `numerics.jsonl`: the two compared op by op
/// ([`numerics::compare`](crate::numerics::compare)), as `burn-profiled numerics` prints it with
/// its default tolerance; a file that cannot be read is named with why.
fn numerics_section(before: &Run, after: &Run) -> String {
    use crate::numerics::{self, NUMERICS_FILE};
    let (b, a) = (
        before.dir.join(NUMERICS_FILE),
        after.dir.join(NUMERICS_FILE),
    );
    if !b.exists() || !a.exists() {
        return String::new();
    }
    let (text, section) = match (numerics::file::read(&b), numerics::file::read(&a)) {
        (Ok(reference), Ok(current)) => {
            let comparison = numerics::compare(&reference, &current, Default::default());
            (
                numerics::render(&comparison, &reference, &current, 10),
                super::numerics_page::section(&comparison, &reference, &current, DIFF_REGIONS),
            )
        }
        (Err(error), _) | (_, Err(error)) => (format!("not compared: {error}"), String::new()),
    };
    format!(
        "<h2>Numerics, op by op (the first runs of each side)</h2><pre id=\"numerics\">{}</pre>{section}",
        escape(&text)
    )
}

/// The table `id` of the diff's `ops` under the heading `title`: per op and phase, `time`
/// before and after, its change and ratio, (`judged`) whether that is beyond the noise
/// between runs, and (`shares`, where a side placed an op on the roofline) its share of the
/// roofline before and after.
fn diff_ops_table(
    id: &str,
    title: &str,
    ops: &[&OpChange],
    time: fn(&OpChange) -> BeforeAfter,
    judged: bool,
    shares: bool,
) -> String {
    let shares = shares
        && ops
            .iter()
            .any(|op| op.before_share.is_some() || op.after_share.is_some());
    let mut table = format!(
        "<h2>{title}</h2><table id=\"{id}\"><thead><tr><th class=\"name\">op</th><th class=\"name\">phase</th><th>before</th><th>after</th><th>change</th><th>ratio</th>{}{}</tr></thead><tbody>",
        if judged { "<th>beyond noise</th>" } else { "" },
        if shares {
            "<th>roofline % before</th><th>roofline % after</th>"
        } else {
            ""
        }
    );
    let share_text =
        |share: Option<f64>| share.map_or_else(|| "-".to_owned(), |s| format!("{:.1}%", 100.0 * s));
    for op in ops {
        let [before, after, change, ratio] = time(op).texts();
        let beyond = match judged {
            true => format!("<td>{}</td>", op.beyond_noise_text().unwrap_or("-")),
            false => String::new(),
        };
        let placed = match shares {
            true => format!(
                "<td>{}</td><td>{}</td>",
                share_text(op.before_share),
                share_text(op.after_share)
            ),
            false => String::new(),
        };
        let _ = write!(
            table,
            "<tr data-phase=\"{phase}\"><td class=\"name\">{}</td><td class=\"name\">{phase}</td><td>{before}</td><td>{after}</td><td>{change}</td><td>{ratio}</td>{beyond}{placed}</tr>",
            escape(&op.op),
            phase = escape(&op.phase),
        );
    }
    table.push_str("</tbody></table>");
    table
}

/// `run.json`'s `memory.kept_alive` as a table: the ops whose outputs made in one step are
/// still alive at the run's end, most first.
fn kept_alive_table(page: &mut String, kept: &Value) {
    let Some(rows) = kept.as_array().filter(|rows| !rows.is_empty()) else {
        return;
    };
    page.push_str(
        "<h3>Made in one step and still alive at the end</h3><table id=\"kept-alive\"><thead>\
         <tr><th>Memory</th><th>Op</th><th>Phase</th><th>Call Site</th><th>Input Shapes</th>\
         <th>Per Step</th><th>Steps</th></tr></thead><tbody>",
    );
    let text = |value: &Value| escape(value.as_str().unwrap_or("-"));
    for row in rows {
        let bytes = row["bytes_per_step"].as_u64().unwrap_or(0);
        let steps = match (row["made_in_steps"].as_u64(), row["of_steps"].as_u64()) {
            (Some(made), Some(of)) => format!("{made} of {of}"),
            (None, Some(of)) => format!("of {of}"),
            _ => "-".to_owned(),
        };
        let _ = write!(
            page,
            "<tr><td>{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td data-v=\"{bytes}\">{}</td><td>{steps}</td></tr>",
            text(&row["memory"]),
            text(&row["op"]),
            text(&row["phase"]),
            text(&row["call_site"]),
            text(&row["input_shapes"]),
            bytes_text(bytes),
        );
    }
    page.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn every_markup_character_is_escaped() {
        assert_eq!(
            escape("<script>alert('x & \"y\"')</script>"),
            "&lt;script&gt;alert(&#39;x &amp; &quot;y&quot;&#39;)&lt;/script&gt;"
        );
    }
}
