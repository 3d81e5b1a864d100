use std::time::Instant;
const SECRET_WORDS: &str = concat!(
    r"password|passwd|secret[_-]?key|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|",
    r"PASSWORD|PASSWD|SECRET[_-]?KEY|SECRET|TOKEN|API[_-]?KEY|APIKEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CREDENTIALS?|",
    r"Password|Passwd|Secret[_-]?Key|secretKey|Secret|Token|Api[_-]?Key|apiKey|Access[_-]?Key|accessKey|Private[_-]?Key|privateKey|Credentials?",
);
fn main() {
    let data = std::fs::read(std::env::args().nth(1).unwrap()).unwrap();
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let joined: Vec<String> = smart_tee::redact::PATTERNS
        .iter()
        .map(|(_, p)| format!("(?:{p})"))
        .collect();
    let any = regex::bytes::Regex::new(&format!("(?-u){}", joined.join("|"))).unwrap();
    let words = regex::bytes::Regex::new(&format!("(?-u){}", SECRET_WORDS)).unwrap();
    for _ in 0..2 {
        let t = Instant::now();
        let n: usize = lines.iter().map(|l| any.find_iter(l).count()).sum();
        println!("any {:?} {n}", t.elapsed());
        let t = Instant::now();
        let n: usize = lines.iter().map(|l| words.find_iter(l).count()).sum();
        println!("words {:?} {n}", t.elapsed());
        for (k, p) in smart_tee::redact::PATTERNS {
            let re = regex::bytes::Regex::new(&format!("(?-u){p}")).unwrap();
            let t = Instant::now();
            let n: usize = lines.iter().map(|l| re.find_iter(l).count()).sum();
            println!("  {k} {:?} {n}", t.elapsed());
        }
    }
}
