//! `--redact` on every surface the library serves (#46): secrets of nine kinds put at offsets
//! the input chooses into a long string of its bytes; the log line of the redacting engine at
//! each budget, and the read side's line (`door::line_in`) of the line whole and of a log line
//! cut without `--redact` (its gist, its summary in text and JSON), never hold more than 8
//! bytes of a secret's body.
#![no_main]

use std::sync::{Mutex, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use libfuzzer_sys::fuzz_target;
use smart_tee::cut::redact::Secret;
use smart_tee::read::summary::Summary;
use smart_tee::{EngineConfig, LineEngine};

const ENV_VALUE: &str = "Q7kLGTgfbVtoRM2O2AjBTXx";
const DOTENV_VALUE: &str = "Vx93kq2LmPz81Rtw";

/// (as written, its body).
const SECRETS: &[(&str, &str)] = &[
    (ENV_VALUE, ENV_VALUE),
    (DOTENV_VALUE, DOTENV_VALUE),
    ("ghp_Q7klQErQX4AEkpXlNPNwnwa0bI21K5kuXjYi", "Q7klQErQX4AEkpXlNPNwnwa0bI21K5kuXjYi"),
    ("sk-ant-api03-Q7kPdoHaZI5VlPVFrCJh8km1xTNgW7biwHprCyF9", "Q7kPdoHaZI5VlPVFrCJh8km1xTNgW7biwHprCyF9"),
    ("AKIA57JGBV2TR5QF7DQX", "57JGBV2TR5QF7DQX"),
    (
        "AccountName=st;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    ),
    ("DB_PASSWORD=Q7kv8LpQ2zXw9RtYbN3m", "Q7kv8LpQ2zXw9RtYbN3m"),
    ("postgres://admin:Q7kd93jfLq0Zp2Wm1x@db:5432/app", "Q7kd93jfLq0Zp2Wm1x"),
    ("xoxb-Q7kAbCdEfGhIjKlMnOpQrStUvW", "Q7kAbCdEfGhIjKlMnOpQrStUvW"),
];

const BUDGETS: [usize; 3] = [1024, 2048, 5120];

struct Engines {
    redacting: Vec<LineEngine>,
    plain: Vec<LineEngine>,
}

fn engines() -> &'static Mutex<Engines> {
    static ENGINES: OnceLock<Mutex<Engines>> = OnceLock::new();
    ENGINES.get_or_init(|| {
        let secrets = vec![
            Secret::new("MY_API_TOKEN", ENV_VALUE.as_bytes()),
            Secret::new("WEIRDLY_NAMED", DOTENV_VALUE.as_bytes()),
        ];
        smart_tee::door::open(&secrets);
        let make = |redact: bool| -> Vec<LineEngine> {
            BUDGETS
                .iter()
                .map(|&b| {
                    LineEngine::new(EngineConfig {
                        max_line_bytes: b,
                        redact,
                        secrets: if redact { secrets.clone() } else { Vec::new() },
                        ..EngineConfig::default()
                    })
                })
                .collect()
        };
        Mutex::new(Engines {
            redacting: make(true),
            plain: make(false),
        })
    })
}

/// Every 9 bytes of every secret's body, searched for at once (one pass over a surface, where
/// a `contains` per window took most of a run).
fn windows() -> &'static AhoCorasick {
    static W: OnceLock<AhoCorasick> = OnceLock::new();
    W.get_or_init(|| {
        let windows: Vec<&str> = SECRETS
            .iter()
            .flat_map(|(_, b)| (0..=b.len() - 9).map(move |i| &b[i..i + 9]))
            .collect();
        AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::DFA))
            .build(windows)
            .unwrap()
    })
}

fn assert_clean(surface: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes).replace("\\/", "/");
    if let Some(m) = windows().find(&text) {
        panic!("{surface} shows {:?}: {text}", &text[m.range()]);
    }
}

/// The read side's surfaces of one log line.
fn read_side(what: &str, line: &[u8]) {
    let read = smart_tee::door::line_in(line);
    assert_clean(&format!("{what}: line_in"), &read);
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&read) {
        assert_clean(&format!("{what}: gist"), smart_tee::read::gist::gist(&v).as_bytes());
    }
    let mut summary = Summary::default();
    summary.add(&read);
    assert_clean(&format!("{what}: summary"), summary.to_text().as_bytes());
    assert_clean(&format!("{what}: summary json"), summary.to_json().to_string().as_bytes());
}

fuzz_target!(|data: &[u8]| {
    if data.len() < SECRETS.len() + 1 {
        return;
    }
    let (places, filler) = data.split_at(SECRETS.len() + 1);
    let filler = String::from_utf8_lossy(filler);
    // The fuzzer learns the secrets from the comparisons and writes them into the filler too,
    // where they need not start at a word boundary (`assistghp_…`), and a token that does not
    // is not one: only the secrets placed below are looked for.
    if windows().is_match(&filler.replace("\\/", "/")) {
        return;
    }
    // Secrets at offsets the input chooses, each between spaces (a token starts at a word
    // boundary), on character boundaries.
    let mut at: Vec<(usize, &str)> = SECRETS
        .iter()
        .enumerate()
        .map(|(i, (secret, _))| {
            let mut at = (places[i] as usize * 131) % (filler.len() + 1);
            while !filler.is_char_boundary(at) {
                at -= 1;
            }
            (at, *secret)
        })
        .collect();
    at.sort();
    let mut text = String::new();
    let mut from = 0;
    for (at, secret) in at {
        text.push_str(&filler[from..at]);
        text.push_str(&format!(" {secret} "));
        from = at;
    }
    text.push_str(&filler[from..]);
    let line = serde_json::json!({
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": text}]},
        "session_id": "s"
    })
    .to_string();
    let k = places[SECRETS.len()] as usize % BUDGETS.len();
    let mut engines = engines().lock().unwrap();
    let mut out = Vec::new();
    engines.redacting[k].process(line.as_bytes(), &mut out);
    assert_clean("the log line", &out);
    read_side("the redacted log line", &out);
    out.clear();
    engines.plain[k].process(line.as_bytes(), &mut out);
    read_side("a log line cut without --redact", &out);
    read_side("the line whole", line.as_bytes());
});
