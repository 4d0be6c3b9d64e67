//! The servers that also take browsers over WebTransport: the
//! `--webtransport` spec that names one (its UDP address, its URL, where
//! its certificate hash comes from), the hash read afresh at each request,
//! and the rotation that picks the server a browser's token lists; and the
//! `--websocket` spec that gives such a server's WebSocket fallback.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::net::{AddrParseError, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most of a hash file read: the hash is 65 bytes, so anything much
/// longer is malformed whatever it holds.
const MAX_HASH_FILE_BYTES: u64 = 1024;

/// One `--webtransport` spec: the server whose public UDP address is
/// [`server`](Self::server) also takes browsers at [`url`](Self::url),
/// presenting a certificate whose hash comes from
/// [`certificate`](Self::certificate).
///
/// Written `UDP_ADDR=URL`, optionally followed by `#hash-file=PATH` or
/// `#hash=HEX64`:
///
/// ```text
/// 203.0.113.10:7000=https://eu1.example.com:7001/netcode
/// 127.0.0.1:40000=https://127.0.0.1:40001/netcode#hash-file=/run/netcode/40001.hash
/// [::1]:40000=https://[::1]:40001/netcode#hash=<64 hex digits>
/// ```
///
/// The URL ends at the first `#` (WebTransport URLs have no fragment), so
/// PATH may hold any character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebTransportSpec {
    /// The server's public UDP address, as its connect tokens list it.
    pub server: SocketAddr,
    /// The URL browsers open a WebTransport session at (`https://`).
    pub url: String,
    /// Where the SHA-256 hash of the endpoint's certificate comes from.
    pub certificate: CertificateHash,
}

/// Where a WebTransport endpoint's certificate hash comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertificateHash {
    /// None: the certificate is signed by an authority browsers trust.
    Trusted,
    /// Always this hash, 64 lowercase hex digits (a self-signed certificate
    /// that does not rotate).
    Fixed(String),
    /// The hash held in this file (64 hex digits and a newline), read at
    /// each request, so that rotations are followed: what
    /// `netcode_webtransport::WebTransportConfig::hash_file` writes.
    File(PathBuf),
}

/// Why a `--webtransport` spec is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// No `=` between the address and the URL.
    #[error("{0:?} is not UDP_ADDR=URL")]
    NotAddressAndUrl(String),
    /// What comes before the `=` is not a socket address.
    #[error("{text:?} is not a UDP address (such as 127.0.0.1:40000): {error}")]
    Address {
        /// The text before the `=`.
        text: String,
        /// Why it does not parse.
        error: AddrParseError,
    },
    /// The URL does not start with `https://`.
    #[error("{0:?} is not an https:// URL")]
    NotHttps(String),
    /// A WebSocket URL that does not start with `wss://` or `ws://`.
    #[error("{0:?} is not a wss:// or ws:// URL")]
    NotWebSocket(String),
    /// The URL holds spaces or characters outside printable ASCII.
    #[error("{0:?} holds spaces or other unprintable characters")]
    Unprintable(String),
    /// The URL has no host.
    #[error("{0:?} names no host")]
    NoHost(String),
    /// `#hash-file=` with nothing after it.
    #[error("#hash-file= names no file")]
    NoHashFile,
    /// Something after the URL's `#` that is neither form.
    #[error("{0:?} after the URL's # is neither hash-file=PATH nor hash=HEX64")]
    Suffix(String),
    /// `#hash=` followed by something else than 64 hex digits.
    #[error(transparent)]
    Hash(#[from] NotAHash),
}

/// Text that is not a SHA-256 hash written as 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a SHA-256 hash as 64 hex digits")]
pub struct NotAHash(pub String);

/// Why a certificate hash cannot be had now.
#[derive(Debug, thiserror::Error)]
pub enum HashFileError {
    /// The hash file cannot be read.
    #[error("cannot read the hash file {}: {error}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
    /// The hash file does not hold a hash.
    #[error("the hash file {}: {error}", .path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What it holds instead.
        error: NotAHash,
    },
}

impl CertificateHash {
    /// The hash to hand out now, as 64 lowercase hex digits (`None` for a
    /// trusted certificate), or why it cannot be had (an unreadable or
    /// malformed hash file).
    pub fn current(&self) -> Result<Option<String>, HashFileError> {
        match self {
            Self::Trusted => Ok(None),
            Self::Fixed(hex) => Ok(Some(hex.clone())),
            Self::File(path) => read_hash_file(path).map(Some),
        }
    }
}

impl WebTransportSpec {
    /// Parses `UDP_ADDR=URL[#hash-file=PATH | #hash=HEX64]`, or says what
    /// is wrong with it.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let (server, rest) = server_and_url(text)?;
        let (url, hash) = match rest.split_once('#') {
            Some((url, hash)) => (url, Some(hash)),
            None => (rest, None),
        };
        check_url(url)?;
        let certificate = match hash {
            None => CertificateHash::Trusted,
            Some(hash) => match hash.split_once('=') {
                Some(("hash-file", "")) => return Err(SpecError::NoHashFile),
                Some(("hash-file", path)) => CertificateHash::File(PathBuf::from(path)),
                Some(("hash", hex)) => CertificateHash::Fixed(parse_hash(hex)?),
                _ => return Err(SpecError::Suffix(hash.to_owned())),
            },
        };
        Ok(Self {
            server,
            url: url.to_owned(),
            certificate,
        })
    }
}

impl FromStr for WebTransportSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        Self::parse(text)
    }
}

impl fmt::Display for WebTransportSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.server, self.url)?;
        match &self.certificate {
            CertificateHash::Trusted => Ok(()),
            CertificateHash::Fixed(hex) => write!(f, "#hash={hex}"),
            CertificateHash::File(path) => write!(f, "#hash-file={}", path.display()),
        }
    }
}

/// One `--websocket` spec: the server whose public UDP address is
/// [`server`](Self::server), which also takes browsers over WebTransport,
/// has a WebSocket fallback at [`url`](Self::url) (`wss://`, or `ws://`
/// for local tries). Written `UDP_ADDR=URL`:
///
/// ```text
/// 203.0.113.10:7000=wss://eu1.example.com:7002/netcode
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSocketSpec {
    /// The server's public UDP address, as its connect tokens list it.
    pub server: SocketAddr,
    /// The URL browsers open the WebSocket at.
    pub url: String,
}

impl WebSocketSpec {
    /// Parses `UDP_ADDR=URL`, or says what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let (server, url) = server_and_url(text)?;
        check_url_of(url, &["wss://", "ws://"]).map_err(|e| match e {
            SpecError::NotHttps(url) => SpecError::NotWebSocket(url),
            other => other,
        })?;
        if url.contains('#') {
            return Err(SpecError::Unprintable(url.to_owned()));
        }
        Ok(Self {
            server,
            url: url.to_owned(),
        })
    }
}

impl fmt::Display for WebSocketSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.server, self.url)
    }
}

/// A spec's `UDP_ADDR` and what follows its `=`.
fn server_and_url(text: &str) -> Result<(SocketAddr, &str), SpecError> {
    let (server, rest) = text
        .split_once('=')
        .ok_or_else(|| SpecError::NotAddressAndUrl(text.to_owned()))?;
    let server = server.trim().parse().map_err(|error| SpecError::Address {
        text: server.to_owned(),
        error,
    })?;
    Ok((server, rest))
}

/// Whether `url` is one a browser can open a WebTransport session at:
/// `https://`, a host, printable ASCII without spaces (a WebTransport URL
/// has no fragment, so no `#` either: the spec's parser ends it there).
fn check_url(url: &str) -> Result<(), SpecError> {
    check_url_of(url, &["https://"])
}

/// Whether `url` starts with one of `schemes`, names a host, and is
/// printable ASCII without spaces.
fn check_url_of(url: &str, schemes: &[&str]) -> Result<(), SpecError> {
    let rest = schemes
        .iter()
        .find_map(|scheme| {
            url.get(..scheme.len())
                .filter(|start| start.eq_ignore_ascii_case(scheme))
                .map(|_| &url[scheme.len()..])
        })
        .ok_or_else(|| SpecError::NotHttps(url.to_owned()))?;
    if !url.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(SpecError::Unprintable(url.to_owned()));
    }
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if authority.is_empty() || authority.starts_with(':') {
        return Err(SpecError::NoHost(url.to_owned()));
    }
    Ok(())
}

/// 64 hex digits (either case), as 64 lowercase hex digits.
fn parse_hash(text: &str) -> Result<String, NotAHash> {
    if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(NotAHash(text.to_owned()))
    }
}

/// The hash in the file at `path`: 64 hex digits, surrounding whitespace
/// ignored.
fn read_hash_file(path: &Path) -> Result<String, HashFileError> {
    let mut text = String::new();
    File::open(path)
        .and_then(|file| file.take(MAX_HASH_FILE_BYTES).read_to_string(&mut text))
        .map_err(|error| HashFileError::Unreadable {
            path: path.to_owned(),
            error,
        })?;
    parse_hash(text.trim()).map_err(|error| HashFileError::Malformed {
        path: path.to_owned(),
        error,
    })
}

/// The browser-capable servers, and which one the next browser gets.
#[derive(Debug, Default)]
pub(crate) struct Browsers {
    specs: Vec<WebTransportSpec>,
    /// Where the next choice starts.
    next: AtomicUsize,
}

/// The server a browser's token lists, and what the browser needs to
/// reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chosen {
    pub(crate) server: SocketAddr,
    pub(crate) url: String,
    pub(crate) certificate_hash: Option<String>,
}

/// Why no browser-capable server was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoChoice {
    /// The fleet has none.
    NoneConfigured,
    /// Each has a certificate hash that cannot be had now.
    NoneAvailable,
}

impl Browsers {
    /// Browsers go to the servers of `specs`.
    pub(crate) fn new(specs: Vec<WebTransportSpec>) -> Self {
        Self {
            specs,
            next: AtomicUsize::new(0),
        }
    }

    /// Whether any server takes browsers.
    pub(crate) fn serves(&self, server: SocketAddr) -> bool {
        self.specs.iter().any(|spec| spec.server == server)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The next browser's server: one further along for each choice (so
    /// browsers spread over them), skipping those whose certificate hash
    /// cannot be had, each reported to `unavailable` with why.
    pub(crate) fn choose(
        &self,
        mut unavailable: impl FnMut(&WebTransportSpec, &HashFileError),
    ) -> Result<Chosen, NoChoice> {
        let count = self.specs.len();
        if count == 0 {
            return Err(NoChoice::NoneConfigured);
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed) % count;
        for i in 0..count {
            let spec = &self.specs[(start + i) % count];
            match spec.certificate.current() {
                Ok(certificate_hash) => {
                    return Ok(Chosen {
                        server: spec.server,
                        url: spec.url.clone(),
                        certificate_hash,
                    });
                }
                Err(why) => unavailable(spec, &why),
            }
        }
        Err(NoChoice::NoneAvailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";

    #[test]
    fn good_specs_parse_and_print_back() {
        let plain =
            WebTransportSpec::parse("127.0.0.1:40000=https://example.com:443/netcode").unwrap();
        assert_eq!(plain.server, "127.0.0.1:40000".parse().unwrap());
        assert_eq!(plain.url, "https://example.com:443/netcode");
        assert_eq!(plain.certificate, CertificateHash::Trusted);

        let fixed: WebTransportSpec =
            format!("[::1]:40000=https://[::1]:40001/netcode#hash={HASH}")
                .parse()
                .unwrap();
        assert_eq!(fixed.server, "[::1]:40000".parse().unwrap());
        assert_eq!(fixed.url, "https://[::1]:40001/netcode");
        assert_eq!(
            fixed.certificate,
            CertificateHash::Fixed(HASH.to_ascii_lowercase())
        );
        assert_eq!(
            fixed.certificate.current().unwrap(),
            Some(HASH.to_ascii_lowercase())
        );

        let file = WebTransportSpec::parse(
            "127.0.0.1:40000=HTTPS://127.0.0.1:40001/netcode?x=1#hash-file=/run/a=b#c.hash",
        )
        .unwrap();
        assert_eq!(file.url, "HTTPS://127.0.0.1:40001/netcode?x=1");
        assert_eq!(
            file.certificate,
            CertificateHash::File("/run/a=b#c.hash".into())
        );

        for spec in [plain, fixed, file] {
            assert_eq!(WebTransportSpec::parse(&spec.to_string()), Ok(spec));
        }
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        let cases = [
            ("", "not UDP_ADDR=URL"),
            ("127.0.0.1:40000", "not UDP_ADDR=URL"),
            ("127.0.0.1=https://a/netcode", "not a UDP address"),
            ("localhost:40000=https://a/netcode", "not a UDP address"),
            ("127.0.0.1:40000=", "not an https:// URL"),
            ("127.0.0.1:40000=http://a/netcode", "not an https:// URL"),
            ("127.0.0.1:40000=https://", "names no host"),
            ("127.0.0.1:40000=https:///netcode", "names no host"),
            ("127.0.0.1:40000=https://:4433/netcode", "names no host"),
            ("127.0.0.1:40000=https://a b/netcode", "unprintable"),
            ("127.0.0.1:40000=https://é/netcode", "unprintable"),
            ("127.0.0.1:40000=https://a/netcode#", "neither"),
            ("127.0.0.1:40000=https://a/netcode#hash-file", "neither"),
            (
                "127.0.0.1:40000=https://a/netcode#hash-file=",
                "names no file",
            ),
            ("127.0.0.1:40000=https://a/netcode#sha256=00", "neither"),
            ("127.0.0.1:40000=https://a/netcode#hash=", "64 hex digits"),
            (
                "127.0.0.1:40000=https://a/netcode#hash=00ff",
                "64 hex digits",
            ),
        ];
        for (spec, says) in cases {
            let error = WebTransportSpec::parse(spec).unwrap_err();
            assert!(error.to_string().contains(says), "{spec:?}: {error}");
        }
        let long = format!("127.0.0.1:40000=https://a/netcode#hash={HASH}0");
        let short = format!("127.0.0.1:40000=https://a/netcode#hash={}", &HASH[1..]);
        let not_hex = format!("127.0.0.1:40000=https://a/netcode#hash={}g", &HASH[1..]);
        for spec in [long, short, not_hex] {
            assert!(WebTransportSpec::parse(&spec).is_err(), "{spec}");
        }
    }

    #[test]
    fn hash_files_are_read_each_time_and_checked() {
        let dir = std::env::temp_dir().join(format!("matcher-hash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("hash");
        let source = CertificateHash::File(path.clone());
        let missing = source.current().unwrap_err();
        assert!(matches!(missing, HashFileError::Unreadable { .. }));
        assert!(missing.to_string().contains("cannot read"), "{missing}");
        std::fs::write(&path, format!("{HASH}\n")).unwrap();
        assert_eq!(source.current().unwrap(), Some(HASH.to_ascii_lowercase()));
        std::fs::write(&path, format!("  {}\r\n", "ab".repeat(32))).unwrap();
        assert_eq!(source.current().unwrap(), Some("ab".repeat(32)));
        for bad in [
            "",
            "\n",
            "ab",
            &"ab".repeat(33),
            &format!("{HASH}\n{HASH}\n"),
        ] {
            std::fs::write(&path, bad).unwrap();
            let error = source.current().unwrap_err();
            assert!(matches!(error, HashFileError::Malformed { .. }), "{bad:?}");
            assert!(error.to_string().contains("64 hex digits"), "{bad:?}");
        }
        std::fs::write(&path, [0xff; 64]).unwrap();
        assert!(source.current().is_err(), "not UTF-8");
        std::fs::write(&path, "a".repeat(1 << 20)).unwrap();
        assert!(source.current().is_err(), "far too long");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn spec(port: u16, certificate: CertificateHash) -> WebTransportSpec {
        WebTransportSpec {
            server: SocketAddr::from(([127, 0, 0, 1], port)),
            url: format!("https://127.0.0.1:{}/netcode", port + 1),
            certificate,
        }
    }

    #[test]
    fn choices_rotate_and_skip_servers_without_a_hash() {
        let none = Browsers::default();
        assert!(none.is_empty());
        assert_eq!(none.choose(|_, _| {}), Err(NoChoice::NoneConfigured));

        let missing = CertificateHash::File("/nonexistent/matcher/hash".into());
        let fixed = CertificateHash::Fixed("cd".repeat(32));
        let browsers = Browsers::new(vec![
            spec(40000, CertificateHash::Trusted),
            spec(40010, missing.clone()),
            spec(40020, fixed),
        ]);
        let mut skipped = Vec::new();
        let mut chosen = Vec::new();
        for _ in 0..6 {
            let choice = browsers
                .choose(|spec, why| skipped.push((spec.server.port(), why.to_string())))
                .unwrap();
            assert_eq!(
                choice.url,
                format!("https://127.0.0.1:{}/netcode", choice.server.port() + 1)
            );
            chosen.push((choice.server.port(), choice.certificate_hash));
        }
        let cd = Some("cd".repeat(32));
        let expected = [
            (40000, None),
            (40020, cd.clone()), // 40010's turn, but its hash file is missing
            (40020, cd.clone()),
            (40000, None),
            (40020, cd.clone()),
            (40020, cd),
        ];
        assert_eq!(chosen, expected);
        assert_eq!(skipped.len(), 2);
        assert!(
            skipped
                .iter()
                .all(|(port, why)| *port == 40010 && why.contains("cannot read"))
        );

        let broken = Browsers::new(vec![spec(40000, missing.clone()), spec(40010, missing)]);
        let mut reported = 0;
        assert_eq!(
            broken.choose(|_, _| reported += 1),
            Err(NoChoice::NoneAvailable)
        );
        assert_eq!(reported, 2);
    }

    #[test]
    fn websocket_specs_parse_and_refuse_what_they_must() {
        let spec = WebSocketSpec::parse("127.0.0.1:40000=ws://127.0.0.1:40002/netcode").unwrap();
        assert_eq!(spec.server, "127.0.0.1:40000".parse().unwrap());
        assert_eq!(
            spec.to_string(),
            "127.0.0.1:40000=ws://127.0.0.1:40002/netcode"
        );
        assert!(WebSocketSpec::parse("[::1]:7000=WSS://example.com/netcode").is_ok());
        for (bad, why) in [
            ("127.0.0.1:40000", "no ="),
            ("nowhere=wss://a/netcode", "no address"),
            ("127.0.0.1:40000=https://a/netcode", "not a WebSocket URL"),
            ("127.0.0.1:40000=wss:///netcode", "no host"),
            ("127.0.0.1:40000=wss://a b/netcode", "a space"),
            ("127.0.0.1:40000=wss://a/netcode#x", "a fragment"),
        ] {
            assert!(WebSocketSpec::parse(bad).is_err(), "{why}: {bad}");
        }
    }
}
