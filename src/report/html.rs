//! `report.html`: the Markdown report as one self-contained page (no
//! network, no scripts) with its figures beside the sections they picture.
//! The words and tables are the Markdown report's, so each figure is stated
//! once; while a study runs the page reloads itself every 30 s.

use pulldown_cmark::{html, Event, Options, Parser};

use super::{markdown, plots};
use crate::outcome::{Progress, StudyOutcome};
use crate::space::Space;

/// Slice plots drawn: the most important parameters.
const SLICES: usize = 4;

const STYLE: &str = "body{font-family:sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}\
th{background:#f3f3f3}code{background:#f3f3f3;padding:0 3px}figure{margin:1em 0}svg{max-width:100%;height:auto}\
.slices{display:grid;grid-template-columns:1fr 1fr;gap:0.5em}.live{background:#fff4cc;padding:0.6em 1em;border:1px solid #e6c84f}";

pub fn report(outcome: &StudyOutcome, space: &Space) -> String {
    let mut body = String::new();
    for (i, section) in to_html(&markdown::report(outcome)).split("<h2>").enumerate() {
        if i > 0 {
            body.push_str("<h2>");
        }
        body.push_str(section);
        body.push_str(&figures(figures_of(outcome, space, heading(section))));
    }
    let title = format!(
        "kvtune: {} at {}",
        outcome.header.dataset.name,
        crate::budget::ByteSize(outcome.header.full_budget)
    );
    page(&title, &body, outcome.progress == Progress::Running)
}

/// Studies side by side: the table, then their searches on one chart.
pub fn versus(studies: &[(&str, &StudyOutcome)]) -> String {
    let body =
        to_html(&markdown::versus(studies)) + &figures(plots::histories(studies).into_iter().collect());
    page("kvtune: studies side by side", &body, false)
}

/// Markdown as HTML, with any HTML in it shown as text: trial errors,
/// dataset names and paths are not markup.
fn to_html(md: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    let events = Parser::new_ext(md, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    let mut html = String::new();
    html::push_html(&mut html, events);
    html
}

/// Text for inside an HTML element.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn figures(svgs: Vec<String>) -> String {
    svgs.into_iter().map(|svg| format!("<figure>{svg}</figure>\n")).collect()
}

/// A whole page around `body`; a live one reloads itself.
fn page(title: &str, body: &str, live: bool) -> String {
    let refresh = if live { "<meta http-equiv=\"refresh\" content=\"30\">" } else { "" };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{refresh}<title>{}</title>\
         <style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        escape(title)
    )
}

/// The text of a section's heading (what follows `<h2>` up to its end).
fn heading(section: &str) -> &str {
    section.split("</h2>").next().unwrap_or("")
}

/// The figures that go with the section headed `heading`.
fn figures_of(outcome: &StudyOutcome, space: &Space, heading: &str) -> Vec<String> {
    let shown = || outcome.verdict.as_ref().map(|v| markdown::shown_runs(outcome, v)).unwrap_or_default();
    match heading {
        "Answer" => outcome.verdict.as_ref().and_then(plots::confirmation).into_iter().collect(),
        h if h.starts_with("Memory") => {
            plots::memory(&shown(), outcome.header.scaled_budget()).into_iter().collect()
        }
        h if h.starts_with("Where the time goes") => plots::phases(&shown()),
        h if h.starts_with("Does it hold") => {
            outcome.transfer.as_ref().and_then(plots::transfer).into_iter().collect()
        }
        h if h.starts_with("The search") => {
            let mut figures: Vec<String> =
                [plots::history(outcome), plots::importances(outcome)].into_iter().flatten().collect();
            let slices = plots::slices(outcome, space, SLICES);
            if !slices.is_empty() {
                let cells: String = slices.into_iter().map(|(_, svg)| format!("<div>{svg}</div>")).collect();
                figures.push(format!("<div class=\"slices\">{cells}</div>"));
            }
            figures.extend(plots::speed_and_size(outcome));
            figures
        }
        _ => vec![],
    }
}
