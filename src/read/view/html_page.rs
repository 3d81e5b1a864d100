//! The frame of the HTML report: its head (a Content-Security-Policy that lets only the page's
//! own style and script run, by their hashes, and fetches nothing), the header (the run's
//! summary, as `--summary` computes it, and two inline SVG charts), the filter bar, and the
//! one inline script.
//!
//! The script holds no log data: it reads the rows' `data-kind` attributes and text, which are
//! escaped. Without it the page still reads whole, and "errors only" still works (CSS).

use serde_json::Value;

use super::html_row::{escape_lines, escape_text, size_text};

/// The page's style. Its hash is in [`STYLE_HASH`].
pub(super) const STYLE: &str = r#"
:root{color-scheme:light dark;--bg:#fff;--fg:#1d1f21;--mut:#6a737d;--line:#e6e8eb;--err:#c62828;--errbg:#fdecea;--res:#2e7d32;--tool:#00838f;--fin:#7b1fa2;--hl:#f9a825}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mut:#8b949e;--line:#21262d;--err:#ff7b72;--errbg:#3b1518;--res:#7ee787;--tool:#79c0ff;--fin:#d2a8ff}}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif}
header{padding:14px 24px;border-bottom:1px solid var(--line)}
h1{font-size:18px;margin:0 0 10px}
h1 small{color:var(--mut);font-weight:normal}
dl{display:grid;grid-template-columns:max-content minmax(12em,1fr) max-content minmax(12em,1fr);gap:2px 14px;margin:0}
dt{color:var(--mut)}dd{margin:0;overflow-wrap:anywhere}
.errs{margin:8px 0 0;padding-left:20px;color:var(--err);font:12px/1.4 ui-monospace,monospace}
.charts{display:flex;gap:28px;flex-wrap:wrap;margin-top:12px}
figure{margin:0}figcaption{color:var(--mut);font-size:12px}
svg text{font:11px system-ui,sans-serif;fill:var(--fg)}
svg .ax{stroke:var(--mut);stroke-width:1}svg .ln{fill:none;stroke:var(--tool);stroke-width:2}svg .bar{fill:var(--tool)}
#bar{position:sticky;top:0;z-index:1;display:flex;gap:18px;align-items:center;padding:8px 24px;background:var(--bg);border-bottom:1px solid var(--line)}
#bar output{color:var(--mut)}
body:has(#only-errors:checked) .ev:not(.err){display:none}
.ev{display:grid;grid-template-columns:5em 12em 14em 1fr;gap:0 10px;padding:2px 24px;border-bottom:1px solid var(--line);font:12.5px/1.45 ui-monospace,monospace}
.ev>details{grid-column:2/-1}
.ev.d1{margin-left:28px;border-left:3px solid var(--line)}.ev.d2{margin-left:56px;border-left:3px solid var(--line)}.ev.d3{margin-left:84px;border-left:3px solid var(--line)}.ev.d4{margin-left:112px;border-left:3px solid var(--line)}
.ev a{color:var(--mut);text-decoration:none}.ev a:hover{text-decoration:underline}
.ev time{color:var(--mut);white-space:nowrap}.ev .g,.ev .k{overflow-wrap:anywhere;min-width:0}
.tb{font-weight:700}.t30,.t90{color:var(--mut)}.t31,.t91{color:var(--err)}.t32,.t92{color:var(--fin)}.t33,.t93{color:#b08800}.t34,.t94{color:var(--tool)}.t35,.t95{color:#a0a}.t36,.t96{color:var(--res)}
.k-msg .k{font-weight:700}.k-res .k{color:var(--res)}.k-tool .k{color:var(--tool)}.k-fin .k{color:var(--fin)}.k-oth .k{color:var(--mut)}
.ev.err{background:var(--errbg)}.ev.err .k,.ev .bad{color:var(--err)}
.pair a{margin-left:12px;white-space:nowrap}
.tok{margin-left:10px;color:var(--mut);white-space:nowrap}
.md{font:13px/1.5 system-ui,sans-serif;padding:4px 10px;border-radius:8px;background:rgba(127,127,127,.07)}
.md p,.md ul,.md ol,.md pre,.md blockquote,.md table{margin:0 0 6px}.md h4,.md h5,.md h6{margin:4px 0}
.md code{font:12px ui-monospace,monospace}.md blockquote{border-left:3px solid var(--line);padding-left:8px;color:var(--mut)}
.md table{border-collapse:collapse}.md th,.md td{border:1px solid var(--line);padding:1px 6px}
details summary{cursor:pointer;color:var(--mut);font-size:11px}
pre{margin:2px 0 6px;padding:6px 8px;max-height:32em;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;background:rgba(127,127,127,.08);border-radius:4px}
.ev:target{outline:2px solid var(--hl)}
.omitted{padding:8px 24px;color:var(--mut);font-style:italic;border-bottom:1px solid var(--line)}
"#;

/// The page's script: the type filter's choices from the rows' kinds, the filters, and a
/// `data-ready` mark on `<html>` (the row count) once it ran. Its hash is in [`SCRIPT_HASH`].
pub(super) const SCRIPT: &str = r#"
(function () {
  var d = document, t = d.getElementById('type'), q = d.getElementById('q'),
      e = d.getElementById('only-errors'), o = d.getElementById('shown'),
      rows = d.querySelectorAll('main .ev'), kinds = Object.create(null), i;
  for (i = 0; i < rows.length; i++) kinds[rows[i].getAttribute('data-kind')] = 1;
  Object.keys(kinds).sort().forEach(function (k) {
    var x = d.createElement('option'); x.value = k; x.textContent = k; t.appendChild(x);
  });
  function apply() {
    var k = t.value, s = q.value.toLowerCase(), n = 0;
    for (i = 0; i < rows.length; i++) {
      var r = rows[i], ok = (!k || r.getAttribute('data-kind') === k) &&
        (!e.checked || r.classList.contains('err')) &&
        (!s || r.textContent.toLowerCase().indexOf(s) >= 0);
      r.hidden = !ok; if (ok) n++;
    }
    o.textContent = n + ' of ' + rows.length + ' rows shown';
  }
  t.addEventListener('change', apply); q.addEventListener('input', apply);
  e.addEventListener('change', apply);
  d.getElementById('ctl').hidden = false; apply();
  d.documentElement.setAttribute('data-ready', String(rows.length));
})();
"#;

/// `sha256-` and the base64 of [`STYLE`]'s SHA-256, for the CSP (checked by a test).
pub(super) const STYLE_HASH: &str = "sha256-7HyGLyZWpznph+8pYihUdyfVQ6HbgaCoGWan7fpALac=";
/// `sha256-` and the base64 of [`SCRIPT`]'s SHA-256, for the CSP (checked by a test).
pub(super) const SCRIPT_HASH: &str = "sha256-6eGhawRDH++38Cae7nOjqil4K2P87GTDCB8FO0Ubnv4=";

/// The policy: nothing is fetched, only the page's own style and script apply.
pub(super) fn csp() -> String {
    format!(
        "default-src 'none'; style-src '{STYLE_HASH}'; script-src '{SCRIPT_HASH}'; \
         img-src 'none'; base-uri 'none'; form-action 'none'"
    )
}

/// The page up to the header: doctype, policy, title, style.
pub(super) fn head(title: &str, out: &mut String) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    out.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n",
        csp()
    ));
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n<title>");
    escape_text(title, out);
    out.push_str("</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style></head>\n<body>\n");
}

/// What the page says of its events.
pub(super) struct Counts {
    /// Events selected from the logs, counted as `--view` counts them.
    pub events: u64,
    /// Rows shown.
    pub shown: u64,
}

/// The header: the title, the summary's answers, its first errors and the charts.
pub(super) fn header(
    title: &str,
    s: &Value,
    counts: &Counts,
    series: &[(f64, f64)],
    out: &mut String,
) {
    out.push_str("<header><h1>");
    escape_text(title, out);
    out.push_str(" <small>smart-tee report</small></h1>\n<dl>");
    let text = |k: &str| s.get(k).and_then(Value::as_str).map(str::to_string);
    let num = |k: &str| s.get(k).and_then(Value::as_u64);
    let agent = text("agent").map(|a| match text("agent_version") {
        Some(v) => format!("{a} {v}"),
        None => a,
    });
    let span = match (text("first_event"), text("last_event")) {
        (Some(a), Some(b)) => Some(format!("{a} → {b}")),
        _ => None,
    };
    let duration = num("duration_ms").map(|d| format!("{:.1} s", d as f64 / 1000.0));
    // An estimate is marked as one, with the date of its prices (#48).
    let estimated = s.get("cost_estimated").and_then(Value::as_bool) == Some(true);
    let cost = s.get("cost_usd").and_then(Value::as_f64).map(|c| {
        if estimated {
            let date = text("prices_date").unwrap_or_else(|| "-".into());
            format!("~${c:.4} (estimated, prices of {date})")
        } else {
            format!("${c:.4}")
        }
    });
    // The summary's own words: `in 1,769,237 (uncached 10,552, cache read …, write …) out 12,944`.
    let tokens = crate::read::summary::Tokens::from_json(s).text();
    let calls = num("tool_calls")
        .filter(|&c| c > 0)
        .map(|c| format!("{c}, failed {}", num("tool_failures").unwrap_or(0)));
    let finished = matches!(text("state").as_deref(), None | Some("finished"));
    let state = text("state").map(|st| match s.get("ok").and_then(Value::as_bool) {
        Some(true) => format!("{st}, ok"),
        Some(false) => format!("{st}, failed"),
        None => st,
    });
    let events = format!("{}, {} shown", counts.events, counts.shown);
    let items: [(&str, Option<String>, &str); 12] = [
        ("agent", agent, ""),
        ("model", text("model"), ""),
        ("session", text("session_id"), ""),
        ("time", span, ""),
        ("duration", duration, ""),
        ("turns", num("turns").map(|t| t.to_string()), ""),
        ("cost", cost, ""),
        ("tokens", Some(tokens), ""),
        ("tool calls", calls, ""),
        ("state", state, ""),
        // How the run ended, when it did (the state says the rest, as in `--summary`).
        ("ended", text("ended").filter(|_| finished), ""),
        ("events", Some(events), " id=\"events\""),
    ];
    for (name, value, attrs) in items {
        let Some(value) = value else { continue };
        out.push_str(&format!("<dt>{name}</dt><dd{attrs}>"));
        escape_text(&crate::read::summary::clip(&value, VALUE_CAP), out);
        out.push_str("</dd>");
    }
    out.push_str(&format!(
        "<dt>errors</dt><dd id=\"errors\">{}</dd></dl>\n",
        num("errors").unwrap_or(0)
    ));
    let first_errors: Vec<&str> = s
        .get("first_errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .take(5)
        .collect();
    if !first_errors.is_empty() {
        out.push_str("<ul class=\"errs\">");
        for e in first_errors {
            out.push_str("<li>");
            super::html_row::escape_styled(e, out);
            out.push_str("</li>");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<div class=\"charts\">");
    tokens_chart(series, out);
    tools_chart(s.get("tools"), out);
    out.push_str("</div></header>\n");
}

/// The most bytes of a summary value shown in the header (before escaping): the tokens' line
/// at its longest (five 20-digit counts, grouped) fits.
const VALUE_CAP: usize = 200;

/// Chart size.
const W: f64 = 420.0;
const H: f64 = 120.0;
/// Room for labels.
const PAD: f64 = 40.0;

/// Cumulative tokens (in + out) over the events' times, or their order when they carry none.
fn tokens_chart(series: &[(f64, f64)], out: &mut String) {
    let Some(&(_, top)) = series.last() else {
        return;
    };
    if series.len() < 2 || top <= 0.0 {
        return;
    }
    let (x0, x1) = (series[0].0, series[series.len() - 1].0);
    let span = if x1 > x0 { x1 - x0 } else { 1.0 };
    let ymax = series.iter().map(|p| p.1).fold(0.0, f64::max);
    let mut points = String::new();
    for &(x, y) in series {
        let px = PAD + (x - x0) / span * (W - PAD - 8.0);
        let py = H - 16.0 - y / ymax * (H - 28.0);
        points.push_str(&format!("{px:.1},{py:.1} "));
    }
    out.push_str(&format!(
        "<figure><svg width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" \
         aria-label=\"cumulative tokens\">\
         <line class=\"ax\" x1=\"{PAD}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/>\
         <line class=\"ax\" x1=\"{PAD}\" y1=\"10\" x2=\"{PAD}\" y2=\"{b}\"/>\
         <polyline class=\"ln\" points=\"{p}\"/>\
         <text x=\"2\" y=\"16\">{top}</text><text x=\"2\" y=\"{b}\">0</text></svg>\
         <figcaption>tokens (in + out), cumulative, by event time</figcaption></figure>",
        b = H - 16.0,
        r = W - 8.0,
        p = points.trim_end(),
        top = short_number(ymax),
    ));
}

/// Tool calls by tool: the ten most used, as bars.
fn tools_chart(tools: Option<&Value>, out: &mut String) {
    let Some(Value::Object(tools)) = tools else {
        return;
    };
    let bars: Vec<(&String, u64)> = tools
        .iter()
        .filter_map(|(k, v)| Some((k, v.as_u64()?)))
        .take(10)
        .collect();
    let Some(most) = bars.iter().map(|b| b.1).max().filter(|&m| m > 0) else {
        return;
    };
    let row = 16.0;
    let h = row * bars.len() as f64 + 4.0;
    let label = 130.0;
    out.push_str(&format!(
        "<figure><svg width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" role=\"img\" \
         aria-label=\"tool calls by tool\">"
    ));
    for (i, (name, n)) in bars.iter().enumerate() {
        let y = i as f64 * row;
        let w = (*n as f64 / most as f64 * (W - label - 50.0)).max(1.0);
        let (mut shown, mut full) = (String::new(), String::new());
        escape_text(&shorten_middle(name, 20), &mut shown);
        escape_text(name, &mut full);
        out.push_str(&format!(
            "<text x=\"{x}\" y=\"{ty}\" text-anchor=\"end\"><title>{full}</title>{shown}</text>\
             <rect class=\"bar\" x=\"{label}\" y=\"{ry}\" width=\"{w:.1}\" height=\"{bh}\"/>\
             <text x=\"{nx:.1}\" y=\"{ty}\">{n}</text>",
            x = label - 6.0,
            ty = y + 12.0,
            ry = y + 2.0,
            bh = row - 4.0,
            nx = label + w + 4.0,
        ));
    }
    out.push_str("</svg><figcaption>tool calls by tool</figcaption></figure>");
}

/// `name` in at most `max` characters, shortened from the middle (`mcp__playwright__browser_click`
/// as `mcp__playw…ser_click`), so that tools that share a prefix stay distinct.
pub(super) fn shorten_middle(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= max {
        return name.to_string();
    }
    let tail = (max - 1) / 2;
    let head = max - 1 - tail;
    let mut out: String = name.chars().take(head).collect();
    out.push('…');
    out.extend(name.chars().skip(n - tail));
    out
}

/// `29121851` as `29,121,851`.
pub fn grouped(n: u64) -> String {
    crate::read::summary::grouped(Some(n))
}

/// `1234567` as `1.2M`, `45000` as `45k`.
fn short_number(n: f64) -> String {
    match n {
        n if n >= 1e6 => format!("{:.1}M", n / 1e6),
        n if n >= 1e4 => format!("{:.0}k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

/// The filter bar: "errors only" (works without the script), and the type filter and text
/// search, shown once the script runs.
pub(super) fn filter_bar(out: &mut String) {
    out.push_str(
        "<nav id=\"bar\"><label><input type=\"checkbox\" id=\"only-errors\"> errors only</label>\
         <span id=\"ctl\" hidden><label>type <select id=\"type\"><option value=\"\">all</option>\
         </select></label> <label>search <input type=\"search\" id=\"q\"></label> \
         <output id=\"shown\"></output></span></nav>\n",
    );
}

/// The line that says what the page left out, and how to read it.
pub(super) fn omitted(n: u64, why: &str, how: &str, out: &mut String) {
    out.push_str(&format!(
        "<p class=\"omitted\" id=\"omitted\" data-omitted=\"{n}\">… {n} events left out here {why}"
    ));
    if !how.is_empty() {
        out.push_str("; read them with <code>");
        escape_text(how, out);
        out.push_str("</code>");
    }
    out.push_str("</p>\n");
}

/// The end of the page: the script.
pub(super) fn tail(out: &mut String) {
    out.push_str("<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body></html>\n");
}

/// A note on an original that was not embedded, or was cut.
pub(super) fn original_html(text: &str, len: u64, shown: usize, out: &mut String) {
    out.push_str(&format!(
        "<details class=\"orig\"><summary>original from the archive ({}{})</summary><pre>",
        size_text(len as usize),
        if (shown as u64) < len {
            format!(", first {} shown", size_text(shown))
        } else {
            String::new()
        }
    ));
    escape_lines(text, out);
    out.push_str("</pre></details>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// #50: four playwright tools all showed as `mcp__playwright__bro`.
    #[test]
    fn tool_names_are_shortened_from_the_middle_and_stay_distinct() {
        let names = [
            "mcp__playwright__browser_click",
            "mcp__playwright__browser_navigate",
            "mcp__playwright__browser_snapshot",
            "mcp__playwright__browser_type",
        ];
        let shown: Vec<String> = names.iter().map(|n| shorten_middle(n, 20)).collect();
        for s in &shown {
            assert_eq!(s.chars().count(), 20, "{s}");
        }
        let mut distinct = shown.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{shown:?}");
        assert_eq!(shorten_middle("Read", 20), "Read");
    }

    fn base64(bytes: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for c in bytes.chunks(3) {
            let n = c
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..4 {
                if i <= c.len() {
                    s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    s.push('=');
                }
            }
        }
        s
    }

    /// The policy lets the page's own style and script run, and nothing else: their hashes
    /// must be those of the text the page holds.
    #[test]
    fn the_policy_hashes_are_the_style_and_script_hashes() {
        let hash = |s: &str| format!("sha256-{}", base64(&Sha256::digest(s.as_bytes())));
        assert_eq!(STYLE_HASH, hash(STYLE));
        assert_eq!(SCRIPT_HASH, hash(SCRIPT));
    }
}
