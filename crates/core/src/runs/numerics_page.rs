//! Two runs' numerics compared, as one self-contained HTML page (`burn-profiled numerics
//! --html`) and as a section of the diff's page: the verdict, the culprit with its inputs as
//! paired on both sides and the statistics that moved, the paired regions side by side by step
//! and phase (the culprit marked, its propagators after it), and the records left unpaired.
//! No network: the style and the script are in the file; every string from the runs is
//! escaped.

use std::fmt::Write as _;

use super::html_text::escape;
use crate::numerics::{self, Agreement, Comparison, OpRecord, StatValue};

/// The regions shown at most; the rest are counted.
const ROWS: usize = 5000;
/// The records left unpaired shown at most per side.
const UNPAIRED: usize = 1000;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}\
th{background:#f4f4f4;position:sticky;top:0}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
pre{background:#f8f8f8;padding:8px;overflow:auto}td.num{text-align:right}\
tr.identical td.verdict{color:#060}tr.within td.verdict{color:#460}tr.diverged td.verdict{color:#a00}\
tr.unobserved td.verdict{color:#777}tr.culprit{background:#fdd;font-weight:bold}\
tr.propagator{background:#fff4f4}.inside{color:#666}";

/// Shows only the diverged regions when asked, and marks the page ready.
const SCRIPT: &str = r#"(function(){
var box=document.getElementById('diverged-only');var table=document.getElementById('regions');
if(box&&table){box.addEventListener('change',function(){var rows=table.tBodies[0].rows;
for(var i=0;i<rows.length;i++){var r=rows[i];
r.style.display=(!box.checked||r.classList.contains('diverged'))?'':'none';}});}
document.body.setAttribute('data-ready','true');})();"#;

/// The page comparing `reference` (`before`, its name) with `current` (`after`).
pub fn page(
    comparison: &Comparison,
    reference: &[OpRecord],
    current: &[OpRecord],
    (before, after): (&str, &str),
) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>burn-profiled numerics: {} \
         against {}</title><style>{STYLE}</style></head><body><h1>Numerics: {} against {}</h1>\
         {}<script>{SCRIPT}</script></body></html>",
        escape(after),
        escape(before),
        escape(after),
        escape(before),
        section(comparison, reference, current, ROWS),
    )
}

/// The comparison's verdict, culprit, paired regions (at most `rows`) and unpaired records, as
/// HTML to place in a page.
pub fn section(
    comparison: &Comparison,
    reference: &[OpRecord],
    current: &[OpRecord],
    rows: usize,
) -> String {
    let mut html = String::new();
    let text = numerics::render(comparison, reference, current, 0);
    let verdict: Vec<&str> = text
        .lines()
        .take_while(|line| !line.starts_with("culprit") && !line.starts_with("first diverged"))
        .collect();
    let _ = write!(
        html,
        "<pre id=\"verdict\">{}</pre>",
        escape(&verdict.join("\n"))
    );
    if let Some(culprit) = comparison.culprit {
        culprit_card(&mut html, comparison, reference, current, culprit);
    }
    regions_table(&mut html, comparison, reference, current, rows);
    unpaired(&mut html, comparison, reference, current);
    html
}

/// The records of pair `index`'s region and its own, on one side, as `op (seq)` texts.
fn region_ops(
    comparison: &Comparison,
    index: usize,
    records: &[OpRecord],
    reference: bool,
) -> String {
    let pair = &comparison.pairs[index];
    let region = comparison.alignment.regions.get(index);
    let (inside, own) = match reference {
        true => (region.map(|region| &region.reference), pair.reference),
        false => (region.map(|region| &region.current), pair.current),
    };
    let mut cell = String::new();
    for &at in inside.into_iter().flatten() {
        let _ = write!(
            cell,
            "<span class=\"inside\">{} ({})</span><br>",
            escape(&records[at].op),
            records[at].seq
        );
    }
    let _ = write!(cell, "{} ({})", escape(&records[own].op), records[own].seq);
    cell
}

fn culprit_card(
    html: &mut String,
    comparison: &Comparison,
    reference: &[OpRecord],
    current: &[OpRecord],
    culprit: numerics::Culprit,
) {
    let pair = &comparison.pairs[culprit.pair];
    let before = &reference[pair.reference];
    let what = match before.is_value() {
        true => "First diverged value",
        false => "Culprit",
    };
    let _ = write!(
        html,
        "<h2>{what}</h2><table id=\"culprit\"><tbody>\
         <tr><td>step</td><td>{}</td></tr><tr><td>phase</td><td>{}</td></tr>\
         <tr><td>call site</td><td>{}</td></tr>\
         <tr><td>before</td><td>{}</td></tr><tr><td>after</td><td>{}</td></tr>\
         <tr><td>inputs agreed</td><td>{}</td></tr></tbody></table>",
        before.step,
        escape(&before.phase),
        escape(before.call_site.as_deref().unwrap_or("-")),
        region_ops(comparison, culprit.pair, reference, true),
        region_ops(comparison, culprit.pair, current, false),
        match (culprit.inputs_agreed, culprit.moved_within_tolerance) {
            (true, false) => "yes",
            (true, true) =>
                "yes; its outputs moved within the tolerance, beyond their own magnitude's",
            (false, _) => "could not be shown: the first diverged op",
        },
    );
    if !comparison.culprit_inputs.is_empty() {
        html.push_str(
            "<h3>Its inputs, paired</h3><table id=\"culprit-inputs\"><thead><tr>\
             <th>before</th><th>after</th><th>agreement</th></tr></thead><tbody>",
        );
        let side = |records: &[OpRecord], at: Option<usize>| match at {
            Some(at) => format!("{} ({})", escape(&records[at].op), records[at].seq),
            None => "-".to_owned(),
        };
        for input in &comparison.culprit_inputs {
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                side(reference, input.reference),
                side(current, input.current),
                input
                    .agreement
                    .map_or("no recorded op made it", agreement_text),
            );
        }
        html.push_str("</tbody></table>");
    }
    if !comparison.agreeing_ancestors.is_empty() {
        html.push_str("<p id=\"agreeing-ancestors\">The nearest inputs that agreed: ");
        let names: Vec<String> = comparison
            .agreeing_ancestors
            .iter()
            .map(|&at| region_ops(comparison, at, reference, true))
            .collect();
        html.push_str(&names.join(", "));
        html.push_str("</p>");
    }
    if !pair.differences.is_empty() {
        html.push_str(
            "<h3>What moved</h3><table id=\"culprit-stats\"><thead><tr><th>output</th>\
             <th>statistic</th><th>before</th><th>after</th><th>abs</th><th>rel</th></tr>\
             </thead><tbody>",
        );
        for diff in &pair.differences {
            let (abs, rel) = match (&diff.before, &diff.after) {
                (StatValue::Number(x), StatValue::Number(y)) => (
                    format!("{:.3e}", (y - x).abs()),
                    format!("{:.3e}", (y - x).abs() / x.abs()),
                ),
                _ => ("-".to_owned(), "-".to_owned()),
            };
            let _ = write!(
                html,
                "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{abs}</td><td class=\"num\">{rel}</td></tr>",
                diff.output,
                diff.stat,
                escape(&diff.before.to_string()),
                escape(&diff.after.to_string()),
            );
        }
        html.push_str("</tbody></table>");
    }
}

fn agreement_text(agreement: Agreement) -> &'static str {
    match agreement {
        Agreement::Identical => "identical",
        Agreement::WithinTolerance => "within tolerance",
        Agreement::Diverged => "diverged",
        Agreement::NotObserved => "not observed",
    }
}

fn regions_table(
    html: &mut String,
    comparison: &Comparison,
    reference: &[OpRecord],
    current: &[OpRecord],
    rows: usize,
) {
    let _ = write!(
        html,
        "<h2>Paired regions, by step and phase</h2><p><label><input type=\"checkbox\" \
         id=\"diverged-only\"> diverged only</label></p><table id=\"regions\"><thead><tr>\
         <th>step</th><th>phase</th><th>before</th><th>after</th><th>outputs</th>\
         <th>differs in</th><th>call site</th></tr></thead><tbody>"
    );
    let culprit = comparison.culprit.map(|culprit| culprit.pair);
    for (index, pair) in comparison.pairs.iter().enumerate().take(rows) {
        let before = &reference[pair.reference];
        let mut class = match pair.agreement {
            Agreement::Identical => "identical",
            Agreement::WithinTolerance => "within",
            Agreement::Diverged => "diverged",
            Agreement::NotObserved => "unobserved",
        }
        .to_owned();
        match culprit {
            Some(at) if at == index => class.push_str(" culprit"),
            Some(at) if at < index && pair.agreement == Agreement::Diverged => {
                class.push_str(" propagator")
            }
            _ => {}
        }
        let mut stats: Vec<&str> = pair.differences.iter().map(|diff| diff.stat).collect();
        stats.dedup();
        let _ = write!(
            html,
            "<tr class=\"{class}\"{}><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"verdict\">{}</td><td>{}</td><td>{}</td></tr>",
            if culprit == Some(index) {
                " id=\"culprit-row\""
            } else {
                ""
            },
            before.step,
            escape(&before.phase),
            region_ops(comparison, index, reference, true),
            region_ops(comparison, index, current, false),
            agreement_text(pair.agreement),
            stats.join(", "),
            escape(before.call_site.as_deref().unwrap_or("-")),
        );
    }
    html.push_str("</tbody></table>");
    if comparison.pairs.len() > rows {
        let _ = write!(
            html,
            "<p id=\"regions-left-out\">{} more pairs not shown.</p>",
            comparison.pairs.len() - rows
        );
    }
}

fn unpaired(
    html: &mut String,
    comparison: &Comparison,
    reference: &[OpRecord],
    current: &[OpRecord],
) {
    let alignment = &comparison.alignment;
    let lists = [
        (
            "only-before",
            "Only before",
            &alignment.only_reference,
            reference,
        ),
        ("only-after", "Only after", &alignment.only_current, current),
        (
            "repeats-before",
            "Repeats before (autotune's trial runs)",
            &alignment.repeats_reference,
            reference,
        ),
        (
            "repeats-after",
            "Repeats after (autotune's trial runs)",
            &alignment.repeats_current,
            current,
        ),
    ];
    for (id, title, indices, records) in lists {
        if indices.is_empty() {
            continue;
        }
        let _ = write!(
            html,
            "<h2>{title}: {}</h2><table id=\"{id}\"><thead><tr><th>step</th><th>seq</th>\
             <th>op</th><th>phase</th><th>call site</th></tr></thead><tbody>",
            indices.len()
        );
        for &at in indices.iter().take(UNPAIRED) {
            let record = &records[at];
            let _ = write!(
                html,
                "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td></tr>",
                record.step,
                record.seq,
                escape(&record.op),
                escape(&record.phase),
                escape(record.call_site.as_deref().unwrap_or("-")),
            );
        }
        html.push_str("</tbody></table>");
    }
}
