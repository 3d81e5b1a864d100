//! Reading a compressed log back: the one decoder every reader uses (`--view`, `--summary`,
//! `--compact`, the report, MCP `read_log`, originals from the archive).
//!
//! The compression is told by the file's first bytes, whatever its name: gzip (`1f 8b`), zstd
//! (a frame, `28 b5 2f fd`, or a skippable frame first, magic `0x184D2A50..=0x184D2A5F` little
//! endian, as pzstd writes). Every frame of a zstd file is read (`cat a.zst b.zst`, `zstd >>`,
//! pzstd) and skippable frames are passed over; every member of a gzip file is read. A stream
//! that ends inside a frame or member is told apart from a damaged one in the error.

use std::fs::File;
use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

/// How a log file is compressed, told by its first bytes whatever its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
}

/// The magic number of a zstd frame, as its first four bytes.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// True when `head` starts with a zstd skippable frame's magic (0x184D2A50..=0x184D2A5F,
/// little endian).
fn skippable(head: &[u8]) -> bool {
    head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18]
}

impl Compression {
    /// The compression a file starting with `head` is in, or `None` for a plain file.
    pub fn of_head(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&ZSTD_MAGIC) || skippable(head) {
            Some(Compression::Zstd)
        } else {
            None
        }
    }

    /// The file's compression, or `None` for a plain file.
    pub fn of(file: &File) -> io::Result<Option<Compression>> {
        let mut head = [0u8; 4];
        let mut n = 0;
        while n < head.len() {
            match file.read_at(&mut head[n..], n as u64)? {
                0 => break,
                k => n += k,
            }
        }
        Ok(Compression::of_head(&head[..n]))
    }

    /// The name a user knows it by.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// True when `file` is gzip or zstd, told by its first bytes whatever its name.
pub fn is_compressed(file: &File) -> io::Result<bool> {
    Ok(Compression::of(file)?.is_some())
}

/// The decompressed bytes of `file`, from its start, read as `compression`. Its errors say
/// whether the stream was cut short ([`io::ErrorKind::UnexpectedEof`]) or is damaged
/// ([`io::ErrorKind::InvalidData`]).
pub fn decoder(mut file: File, compression: Compression) -> io::Result<Box<dyn Read + Send>> {
    file.seek(SeekFrom::Start(0))?;
    let inner: Box<dyn Read + Send> = match compression {
        Compression::Gzip => Box::new(GzMembers::new(io::BufReader::with_capacity(
            256 * 1024,
            file,
        ))),
        // Reads every frame and passes over skippable ones (unlike `single_frame`).
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(file)?),
    };
    Ok(Box::new(Explained { inner, compression }))
}

/// The bytes of `file` from its start: decompressed when it is gzip or zstd, else as they are.
pub fn open(file: File) -> io::Result<Box<dyn Read + Send>> {
    match Compression::of(&file)? {
        Some(c) => decoder(file, c),
        None => {
            let mut file = file;
            file.seek(SeekFrom::Start(0))?;
            Ok(Box::new(file))
        }
    }
}

/// Every member of a gzip stream in turn (as `flate2`'s `MultiGzDecoder`), where bytes after a
/// member that do not begin another (`1f 8b`) are damage: `MultiGzDecoder` reads a few stray
/// bytes (`echo >> a.gz`) as a member header cut short, and called the stream truncated.
struct GzMembers<R: BufRead> {
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: BufRead> GzMembers<R> {
    fn new(r: R) -> GzMembers<R> {
        GzMembers {
            member: Some(flate2::bufread::GzDecoder::new(r)),
        }
    }
}

impl<R: BufRead> Read for GzMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This member ended: the file ends too, or another member begins.
            let Some(mut r) = self.member.take().map(|m| m.into_inner()) else {
                return Ok(0);
            };
            let next = r.fill_buf()?;
            if next.is_empty() {
                return Ok(0);
            }
            // One byte may be all that is buffered: the next member's header judges it.
            if next[0] != 0x1f || next.get(1).is_some_and(|&b| b != 0x8b) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the bytes after a whole gzip member do not begin another",
                ));
            }
            self.member = Some(flate2::bufread::GzDecoder::new(r));
        }
    }
}

/// A decoder whose errors say what went wrong in words a user can act on.
struct Explained<R> {
    inner: R,
    compression: Compression,
}

impl<R: Read> Read for Explained<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner
            .read(buf)
            .map_err(|e| explain(e, self.compression))
    }
}

/// A decoder's error as a truncated or damaged stream.
fn explain(e: io::Error, compression: Compression) -> io::Error {
    let name = compression.name();
    match e.kind() {
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => e,
        io::ErrorKind::UnexpectedEof => io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "its {name} stream is truncated: it ends inside a {} (cut short by a copy, a \
                 full disk or a kill?) ({e})",
                unit(compression)
            ),
        ),
        // A valid frame written with a window past the decoder's 128 MiB (`zstd --long=28` and
        // up), which `zstd -d` refuses too without `--long=31`: not damage.
        _ if compression == Compression::Zstd && e.to_string().contains("too much memory") => {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "its zstd frames need a window larger than 128 MiB to decode (written with \
                     zstd --long=28 or more), more memory than a reader may take; decompress it \
                     with zstd -d --long=31 ({e})"
                ),
            )
        }
        _ => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("its {name} stream is damaged: the bytes are not valid {name} ({e})"),
        ),
    }
}

fn unit(compression: Compression) -> &'static str {
    match compression {
        Compression::Gzip => "gzip member",
        Compression::Zstd => "zstd frame",
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "test fixtures, not a surface")]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(name: &str, bytes: &[u8]) -> File {
        let dir = std::env::temp_dir().join(format!("smart-tee-decompress-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        File::create(&path).unwrap().write_all(bytes).unwrap();
        File::open(&path).unwrap()
    }

    fn zst(data: &[u8]) -> Vec<u8> {
        zstd::stream::encode_all(data, 3).unwrap()
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn skippable_frame(n: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![0x50 | n, 0x2a, 0x4d, 0x18];
        v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        v.extend_from_slice(payload);
        v
    }

    fn read_all(file: File) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        open(file)?.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn every_frame_and_member_is_read() {
        let zs = [zst(b"a\nb\n"), zst(b"c\nd\n")].concat();
        assert_eq!(read_all(file_of("m.zst", &zs)).unwrap(), b"a\nb\nc\nd\n");
        let gs = [gz(b"a\nb\n"), gz(b"c\nd\n")].concat();
        assert_eq!(read_all(file_of("m.gz", &gs)).unwrap(), b"a\nb\nc\nd\n");
    }

    #[test]
    fn a_leading_skippable_frame_is_zstd() {
        let bytes = [skippable_frame(0xa, b"pzstd"), zst(b"x\n"), zst(b"y\n")].concat();
        let f = file_of("skip.zst", &bytes);
        assert_eq!(Compression::of(&f).unwrap(), Some(Compression::Zstd));
        assert_eq!(read_all(f).unwrap(), b"x\ny\n");
        assert_eq!(Compression::of_head(b"{\"a\":1}"), None);
    }

    /// `echo >> a.gz`: a stray byte after the last member was called a truncated stream.
    #[test]
    fn stray_bytes_after_a_gzip_member_are_damage_not_a_cut() {
        let whole = [gz(b"a\n"), gz(b""), gz(b"b\n")].concat();
        assert_eq!(read_all(file_of("ok.gz", &whole)).unwrap(), b"a\nb\n");
        for stray in [&b"\n"[..], b"xy", b"\0\0\0\0", b"hello", b"\x1f\x00"] {
            let e = read_all(file_of("stray.gz", &[&whole[..], stray].concat())).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{stray:?}: {e}");
            assert!(e.to_string().contains("damaged"), "{e}");
        }
        // The first bytes of another member's header are a cut.
        let e = read_all(file_of("cut.gz", &[&whole[..], b"\x1f\x8b\x08"].concat())).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
    }

    /// A frame with a 1 GiB window (`zstd --long=30` of a stream) was called damaged.
    #[test]
    fn a_frame_past_the_window_limit_is_not_called_damaged() {
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        enc.set_parameter(zstd::stream::raw::CParameter::WindowLog(30))
            .unwrap();
        enc.write_all(b"{\"a\":1}\n").unwrap();
        let bytes = enc.finish().unwrap();
        let e = read_all(file_of("long.zst", &bytes)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{e}");
        assert!(
            e.to_string().contains("--long=31") && !e.to_string().contains("damaged"),
            "{e}"
        );
    }

    #[test]
    fn truncated_and_damaged_are_told_apart() {
        let data: Vec<u8> = (0..4000u32)
            .flat_map(|i| format!("{{\"n\":{}}}\n", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        for (name, whole) in [("t.zst", zst(&data)), ("t.gz", gz(&data))] {
            let cut = &whole[..whole.len() / 2];
            let e = read_all(file_of(name, cut)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{name}: {e}");
            assert!(e.to_string().contains("truncated"), "{e}");
            let mut bad = whole.clone();
            for b in &mut bad[12..40] {
                *b ^= 0x5a;
            }
            let e = read_all(file_of(name, &bad)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{name}: {e}");
            assert!(e.to_string().contains("damaged"), "{e}");
        }
    }
}
