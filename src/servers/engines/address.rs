//! Where a Docker engine is, written the way Docker users write it: `DOCKER_HOST`
//! (`unix://`, `tcp://` with `DOCKER_TLS_VERIFY`/`DOCKER_CERT_PATH`, `ssh://`), a Docker
//! context, an `--engine` value or an entry of a hosts file. A scheme rmatrix cannot use is
//! an error, never a silent fallback to the local socket.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::input::file::DOCKER_CONFIG;
use crate::input::untrusted::printable;

/// The socket Docker itself uses when nothing says otherwise.
pub(crate) const DEFAULT_SOCKET: &str = "unix:///var/run/docker.sock";

/// One engine: a name for messages, results and the manifest, and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EngineAddr {
    pub(crate) name: String,
    pub(crate) transport: Transport,
    /// Drive the load from a client container on the engine's host rather than from this
    /// process. True for every engine but the local default socket (`client:` in a hosts
    /// file overrides it).
    pub(crate) client_in_container: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    Unix(PathBuf),
    /// `host:port`, in plain HTTP or with mutual TLS.
    Tcp {
        authority: String,
        tls: Option<TlsFiles>,
    },
    /// `[user@]host[:port]`: the system's `ssh`, and `docker system dial-stdio` over there.
    Ssh(String),
}

/// Docker's client certificate files (`ca.pem`, `cert.pem`, `key.pem` in one folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsFiles {
    pub(crate) dir: PathBuf,
}

impl TlsFiles {
    pub(crate) fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
    pub(crate) fn cert(&self) -> PathBuf {
        self.dir.join("cert.pem")
    }
    pub(crate) fn key(&self) -> PathBuf {
        self.dir.join("key.pem")
    }

    /// All three files must be there: a missing one is named, not found out mid-handshake.
    fn check(&self) -> Result<(), String> {
        for f in [self.ca(), self.cert(), self.key()] {
            if !f.is_file() {
                return Err(format!(
                    "TLS file {} is missing (a TLS engine needs ca.pem, cert.pem and key.pem in {})",
                    f.display(),
                    self.dir.display()
                ));
            }
        }
        Ok(())
    }
}

impl EngineAddr {
    /// The address as a URL, without anything secret (there is nothing secret in it: TLS
    /// keys stay in their files).
    pub(crate) fn url(&self) -> String {
        match &self.transport {
            Transport::Unix(p) => format!("unix://{}", p.display()),
            Transport::Tcp { authority, tls } => match tls {
                Some(_) => format!("tcp://{authority} (TLS)"),
                None => format!("tcp://{authority}"),
            },
            Transport::Ssh(a) => format!("ssh://{a}"),
        }
    }

    /// The local default socket: the only engine whose clients run in this process unless
    /// told otherwise (its containers share this host's loopback).
    pub(crate) fn is_default_local(&self) -> bool {
        matches!(&self.transport, Transport::Unix(p)
            if p == Path::new("/var/run/docker.sock") || p == Path::new("/run/docker.sock"))
    }
}

/// Parse one engine URL. `tls` applies to `tcp://` only (Docker's `DOCKER_TLS_VERIFY`).
pub(crate) fn parse(name: &str, url: &str, tls: Option<TlsFiles>) -> Result<EngineAddr, String> {
    let url = url.trim();
    let bad = |why: &str| format!("engine address `{}`: {why}", printable(&redacted(url)));
    check_untrusted(url)?;
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad("expected unix://PATH, tcp://HOST:PORT or ssh://[USER@]HOST"))?;
    if tls.is_some() && !matches!(scheme, "tcp" | "https" | "http") {
        return Err(bad("TLS files go with a tcp:// engine only"));
    }
    let transport = match scheme {
        "unix" => {
            if !rest.starts_with('/') {
                return Err(bad("a unix socket needs an absolute path (unix:///path)"));
            }
            Transport::Unix(PathBuf::from(rest))
        }
        "tcp" | "https" | "http" => {
            let authority = rest.trim_end_matches('/');
            let (host, port) = authority
                .rsplit_once(':')
                .ok_or_else(|| bad("a tcp engine needs a port (tcp://HOST:2376)"))?;
            if host.is_empty() || port.parse::<u16>().is_err() || authority.contains('/') {
                return Err(bad("expected tcp://HOST:PORT"));
            }
            let tls = match (scheme, tls) {
                ("https", None) => {
                    return Err(bad(
                        "https:// needs the client certificates (DOCKER_CERT_PATH)",
                    ))
                }
                ("http", Some(_)) => return Err(bad("http:// cannot use TLS")),
                (_, tls) => tls,
            };
            if let Some(t) = &tls {
                t.check().map_err(|e| bad(&e))?;
            }
            Transport::Tcp {
                authority: authority.to_string(),
                tls,
            }
        }
        "ssh" => {
            let authority = rest.trim_end_matches('/');
            if authority.is_empty() || authority.contains('/') || authority.starts_with('-') {
                return Err(bad("expected ssh://[USER@]HOST[:PORT]"));
            }
            if let Some((_, port)) = authority
                .rsplit('@')
                .next()
                .and_then(|h| h.rsplit_once(':'))
            {
                if port.parse::<u16>().is_err() {
                    return Err(bad("expected ssh://[USER@]HOST[:PORT]"));
                }
            }
            Transport::Ssh(authority.to_string())
        }
        other => {
            return Err(bad(&format!(
                "the scheme `{}` is not supported (rmatrix reaches engines through unix://, \
                 tcp:// with or without TLS, and ssh://)",
                printable(other)
            )))
        }
    };
    let mut addr = EngineAddr {
        name: name.to_string(),
        transport,
        client_in_container: true,
    };
    addr.client_in_container = !addr.is_default_local();
    Ok(addr)
}

/// What no engine address may carry, whatever its scheme: a control character (it would be
/// echoed into every message) or credentials (they would be printed and stored). Bad input
/// (exit code 2) where the user typed it.
pub(crate) fn check_untrusted(url: &str) -> Result<(), String> {
    let bad = |why: &str| format!("engine address `{}`: {why}", printable(&redacted(url)));
    if url.chars().any(char::is_control) {
        return Err(bad("an engine address has no control characters"));
    }
    match credentials(url) {
        Some(why) => Err(bad(why)),
        None => Ok(()),
    }
}

/// `url` with the password of a `user:password@` shown as `***`, for messages.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    match authority.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{name}:***@{host}{}", &rest[authority.len()..])
        }
        _ => url.to_string(),
    }
}

/// Why `url` carries credentials rmatrix will not send, if it does: a Docker engine over
/// tcp authenticates with TLS client certificates, and ssh with its own keys.
fn credentials(url: &str) -> Option<&'static str> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split('/').next().unwrap_or(rest);
    let (user, _) = authority.rsplit_once('@')?;
    match scheme {
        "ssh" if !user.contains(':') => None,
        "ssh" => Some(
            "a password in an ssh:// engine URL is refused (it would be printed and stored): \
             ssh authenticates with its keys or agent (ssh://USER@HOST)",
        ),
        _ => Some(
            "credentials in an engine URL are refused (they would be printed and stored): a \
             tcp engine authenticates with TLS client certificates (DOCKER_TLS_VERIFY and \
             DOCKER_CERT_PATH, or `tls:` in a hosts file), or reach it over ssh://USER@HOST",
        ),
    }
}

/// The process environment as far as engine addresses go (a struct so tests need not set
/// the real one).
#[derive(Debug, Default, Clone)]
pub(crate) struct Env {
    pub(crate) docker_host: Option<String>,
    pub(crate) tls_verify: Option<String>,
    pub(crate) cert_path: Option<String>,
    pub(crate) context: Option<String>,
    /// `DOCKER_CONFIG`, else `~/.docker`.
    pub(crate) config_dir: Option<PathBuf>,
}

impl Env {
    pub(crate) fn current() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Env {
            docker_host: var("DOCKER_HOST"),
            tls_verify: var("DOCKER_TLS_VERIFY"),
            cert_path: var("DOCKER_CERT_PATH"),
            context: var("DOCKER_CONTEXT"),
            config_dir: var("DOCKER_CONFIG")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|h| Path::new(&h).join(".docker"))),
        }
    }

    /// The TLS files for `url`: Docker uses them for tcp:// only, when any non-empty
    /// DOCKER_TLS_VERIFY is set.
    fn tls(&self, url: &str) -> Option<TlsFiles> {
        if !url.trim_start().starts_with("tcp://") && !url.trim_start().starts_with("https://") {
            return None;
        }
        self.tls_verify.as_ref()?;
        let dir = match &self.cert_path {
            Some(p) => PathBuf::from(p),
            None => self.config_dir.clone().unwrap_or_default(),
        };
        Some(TlsFiles { dir })
    }
}

/// The engine the Docker CLI would use here: `DOCKER_HOST`, else `DOCKER_CONTEXT`, else
/// the config's `currentContext`, else the default socket.
pub(crate) fn from_env(env: &Env) -> Result<EngineAddr, String> {
    if let Some(host) = &env.docker_host {
        return parse(host, host, env.tls(host)).map_err(|e| format!("DOCKER_HOST: {e}"));
    }
    let context = match &env.context {
        Some(c) => Some(c.clone()),
        None => current_context(env)?,
    };
    match context.as_deref() {
        None | Some("default") => parse("local", DEFAULT_SOCKET, None),
        Some(name) => context_addr(env, name),
    }
}

/// An `--engine` value: a URL, or the name of a Docker context.
pub(crate) fn resolve(env: &Env, value: &str) -> Result<EngineAddr, String> {
    if value.contains("://") {
        // Given explicitly: TLS comes from the same variables as for DOCKER_HOST.
        parse(value, value, env.tls(value))
    } else if value == "default" {
        parse("default", DEFAULT_SOCKET, None)
    } else {
        context_addr(env, value)
    }
}

fn current_context(env: &Env) -> Result<Option<String>, String> {
    let Some(dir) = &env.config_dir else {
        return Ok(None);
    };
    let file = dir.join("config.json");
    let text = match crate::input::file::read_text_optional(&file, DOCKER_CONFIG) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    #[derive(Deserialize)]
    struct Config {
        #[serde(rename = "currentContext", default)]
        current_context: Option<String>,
    }
    let c: Config = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a Docker config file: {e}", file.display()))?;
    Ok(c.current_context.filter(|c| !c.is_empty()))
}

/// A Docker context, from `contexts/meta/<sha256 of its name>/meta.json` and its TLS
/// files under `contexts/tls/<same>/docker/`.
fn context_addr(env: &Env, name: &str) -> Result<EngineAddr, String> {
    let dir = env
        .config_dir
        .clone()
        .ok_or_else(|| format!("Docker context `{}`: no ~/.docker folder", printable(name)))?;
    let id = format!("{:x}", Sha256::digest(name.as_bytes()));
    let meta = dir.join("contexts/meta").join(&id).join("meta.json");
    let text = crate::input::file::read_text(&meta, DOCKER_CONFIG)
        .map_err(|e| format!("Docker context `{}` not found ({e})", printable(name)))?;
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "Endpoints")]
        endpoints: std::collections::HashMap<String, Endpoint>,
    }
    #[derive(Deserialize)]
    struct Endpoint {
        #[serde(rename = "Host", default)]
        host: String,
        #[serde(rename = "SkipTLSVerify", default)]
        skip_tls_verify: bool,
    }
    let m: Meta = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a Docker context: {e}", meta.display()))?;
    let ep = m.endpoints.get("docker").ok_or_else(|| {
        format!(
            "Docker context `{}` has no docker endpoint",
            printable(name)
        )
    })?;
    if ep.skip_tls_verify {
        return Err(format!(
            "Docker context `{}` skips TLS verification: rmatrix does not connect without it",
            printable(name)
        ));
    }
    let tls_dir = dir.join("contexts/tls").join(&id).join("docker");
    let tls = tls_dir.is_dir().then_some(TlsFiles { dir: tls_dir });
    parse(name, &ep.host, tls).map_err(|e| format!("Docker context `{}`: {e}", printable(name)))
}

/// A hosts file: the engines of a pool, kept out of the matrix so that the matrix stays
/// portable.
///
/// ```yaml
/// engines:
///   - {name: a, host: unix:///var/run/docker.sock}
///   - {name: b, host: tcp://b.lab:2376, tls: /etc/rmatrix/certs/b, client: container}
///   - {name: c, context: lab-c}
/// client_engine: a        # optional: every client runs on this engine
/// ```
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostsFile {
    pub(crate) engines: Vec<HostEntry>,
    #[serde(default)]
    pub(crate) client_engine: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostEntry {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) host: Option<String>,
    #[serde(default)]
    pub(crate) context: Option<String>,
    /// Folder of ca.pem, cert.pem, key.pem (relative to the hosts file).
    #[serde(default)]
    pub(crate) tls: Option<String>,
    #[serde(default)]
    pub(crate) client: Option<ClientPlace>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ClientPlace {
    /// In this rmatrix process.
    Process,
    /// In an rmatrix container on the engine's host, with host networking.
    Container,
}

/// The most engines one pool may have (a typo'd generator should not open 10,000 sockets).
pub(crate) const MAX_ENGINES: usize = 64;

/// The pool of a hosts file, and the engine every client runs on if it names one.
/// Errors carry file:line:column.
pub(crate) fn load_hosts_file(
    path: &Path,
    env: &Env,
) -> Result<(Vec<EngineAddr>, Option<String>), String> {
    let text = crate::input::file::read_text(path, crate::input::file::HOSTS)
        .map_err(|e| e.to_string())?;
    let spans = crate::input::span::SpanIndex::build(&text);
    let at = |p: &str, msg: String| {
        let pos = spans.find(p);
        format!("{}:{}:{}: {msg}", path.display(), pos.line, pos.col)
    };
    if let Some(s) = &spans.syntax {
        return Err(format!(
            "{}:{}:{}: {}",
            path.display(),
            s.pos.line,
            s.pos.col,
            crate::input::yaml::syntax(s)
        ));
    }
    let file: HostsFile = crate::input::yaml::from_str(&text).map_err(|e| {
        let (pos, message) = crate::input::yaml::describe(&e, &spans, &text, &[]);
        format!("{}:{}:{}: {message}", path.display(), pos.line, pos.col)
    })?;
    if file.engines.is_empty() {
        return Err(at(
            "engines",
            "`engines` is empty: list at least one".into(),
        ));
    }
    if file.engines.len() > MAX_ENGINES {
        return Err(at(
            "engines",
            format!(
                "at most {MAX_ENGINES} engines, found {}",
                file.engines.len()
            ),
        ));
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out: Vec<EngineAddr> = Vec::new();
    for (i, e) in file.engines.iter().enumerate() {
        let p = format!("engines[{i}]");
        crate::input::untrusted::name("engine", &e.name)
            .map_err(|m| at(&format!("{p}.name"), m))?;
        if out.iter().any(|o| o.name == e.name) {
            return Err(at(
                &format!("{p}.name"),
                format!("engine `{}` is listed twice", e.name),
            ));
        }
        let tls = e.tls.as_ref().map(|t| TlsFiles { dir: base.join(t) });
        let mut addr = match (&e.host, &e.context) {
            (Some(h), None) => parse(&e.name, h, tls).map_err(|m| at(&format!("{p}.host"), m))?,
            (None, Some(c)) if tls.is_none() => {
                context_addr(env, c).map_err(|m| at(&format!("{p}.context"), m))?
            }
            (None, Some(_)) => {
                return Err(at(
                    &format!("{p}.tls"),
                    "a context brings its own TLS files: `tls` goes with `host`".into(),
                ))
            }
            _ => {
                return Err(at(
                    &p,
                    "each engine needs exactly one of `host` (a URL) and `context` (a Docker context name)".into(),
                ))
            }
        };
        addr.name = e.name.clone();
        if let Some(place) = e.client {
            addr.client_in_container = place == ClientPlace::Container;
        }
        out.push(addr);
    }
    if let Some(c) = &file.client_engine {
        if !out.iter().any(|e| &e.name == c) {
            return Err(at(
                "client_engine",
                format!("`{}` is not one of the engines", printable(c)),
            ));
        }
    }
    Ok((out, file.client_engine))
}

/// Names for `--engine` values: the value itself would do, but a short unique one reads
/// better in results.csv (`e1`, `e2`... unless a context name is given).
pub(crate) fn name_engines(addrs: &mut [EngineAddr]) {
    if addrs.len() < 2 {
        return;
    }
    for (i, a) in addrs.iter_mut().enumerate() {
        if a.name.contains("://") {
            a.name = format!("e{}", i + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env::default()
    }

    #[test]
    fn schemes() {
        let a = parse("x", "unix:///run/d2/docker.sock", None).unwrap();
        assert_eq!(a.transport, Transport::Unix("/run/d2/docker.sock".into()));
        assert!(a.client_in_container);
        assert!(
            !parse("x", DEFAULT_SOCKET, None)
                .unwrap()
                .client_in_container
        );
        let t = parse("x", "tcp://127.0.0.1:2375", None).unwrap();
        assert_eq!(
            t.transport,
            Transport::Tcp {
                authority: "127.0.0.1:2375".into(),
                tls: None
            }
        );
        let s = parse("x", "ssh://me@lab:2222", None).unwrap();
        assert_eq!(s.transport, Transport::Ssh("me@lab:2222".into()));
        for (bad, why) in [
            ("npipe:////./pipe/docker_engine", "not supported"),
            ("fd://", "not supported"),
            ("tcp://host", "needs a port"),
            ("tcp://host:x", "expected tcp://HOST:PORT"),
            ("unix://relative", "absolute path"),
            ("ssh://-oProxyCommand=x", "expected ssh://"),
            ("ssh://me@lab:x", "expected ssh://[USER@]HOST[:PORT]"),
            ("/var/run/docker.sock", "expected unix://"),
            ("https://h:1", "needs the client certificates"),
            (
                "tcp://admin:hunter2@h:2375",
                "credentials in an engine URL are refused",
            ),
            ("tcp://admin@h:2375", "TLS client certificates"),
            ("ssh://me:hunter2@lab", "a password in an ssh:// engine URL"),
            ("unix:///run/\u{1b}[2J.sock", "no control characters"),
        ] {
            let e = parse("x", bad, None).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
            assert!(
                !e.contains("hunter2") && !e.contains('\u{1b}'),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn tls_files_must_exist() {
        let tmp = tempfile::tempdir().unwrap();
        let tls = TlsFiles {
            dir: tmp.path().into(),
        };
        let e = parse("x", "tcp://h:2376", Some(tls.clone())).unwrap_err();
        assert!(e.contains("ca.pem is missing"), "{e}");
        for f in ["ca.pem", "cert.pem", "key.pem"] {
            std::fs::write(tmp.path().join(f), "x").unwrap();
        }
        let a = parse("x", "tcp://h:2376", Some(tls)).unwrap();
        assert_eq!(a.url(), "tcp://h:2376 (TLS)");
    }

    #[test]
    fn docker_host_wins_and_tls_verify_applies() {
        let tmp = tempfile::tempdir().unwrap();
        for f in ["ca.pem", "cert.pem", "key.pem"] {
            std::fs::write(tmp.path().join(f), "x").unwrap();
        }
        let e = Env {
            docker_host: Some("tcp://h:2376".into()),
            tls_verify: Some("1".into()),
            cert_path: Some(tmp.path().display().to_string()),
            context: Some("ignored".into()),
            ..env()
        };
        let a = from_env(&e).unwrap();
        assert!(matches!(a.transport, Transport::Tcp { tls: Some(_), .. }));
        let e = Env {
            docker_host: Some("npipe:////./pipe/x".into()),
            ..env()
        };
        assert!(from_env(&e).unwrap_err().starts_with("DOCKER_HOST: "));
        // Nothing set: the default socket.
        assert!(from_env(&env()).unwrap().is_default_local());
    }

    fn write_context(dir: &Path, name: &str, host: &str) {
        let id = format!("{:x}", Sha256::digest(name.as_bytes()));
        let meta = dir.join("contexts/meta").join(id);
        std::fs::create_dir_all(&meta).unwrap();
        std::fs::write(
            meta.join("meta.json"),
            format!(
                r#"{{"Name":"{name}","Metadata":{{}},"Endpoints":{{"docker":{{"Host":"{host}","SkipTLSVerify":false}}}}}}"#
            ),
        )
        .unwrap();
    }

    #[test]
    fn contexts_as_the_docker_cli_finds_them() {
        let tmp = tempfile::tempdir().unwrap();
        let e = Env {
            config_dir: Some(tmp.path().into()),
            ..env()
        };
        write_context(tmp.path(), "lab", "tcp://127.0.0.1:23750");
        std::fs::write(
            tmp.path().join("config.json"),
            r#"{"auths":{},"currentContext":"lab"}"#,
        )
        .unwrap();
        let a = from_env(&e).unwrap();
        assert_eq!(a.name, "lab");
        assert_eq!(a.url(), "tcp://127.0.0.1:23750");
        // DOCKER_CONTEXT overrides the config file; an unknown one is an error.
        let e2 = Env {
            context: Some("nope".into()),
            ..e.clone()
        };
        assert!(from_env(&e2).unwrap_err().contains("`nope` not found"));
        assert_eq!(resolve(&e, "lab").unwrap().url(), "tcp://127.0.0.1:23750");
        // The context's own TLS folder is used when it exists.
        let id = format!("{:x}", Sha256::digest(b"lab"));
        let tls = tmp.path().join("contexts/tls").join(id).join("docker");
        std::fs::create_dir_all(&tls).unwrap();
        assert!(resolve(&e, "lab")
            .unwrap_err()
            .contains("ca.pem is missing"));
    }

    #[test]
    fn hosts_file_is_checked_with_positions() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("hosts.yaml");
        let load = |text: &str| {
            std::fs::write(&f, text).unwrap();
            load_hosts_file(&f, &env())
        };
        let (pool, client) = load(
            "engines:\n  - {name: a, host: 'unix:///var/run/docker.sock'}\n  - {name: b, host: 'tcp://127.0.0.1:23750', client: process}\n",
        )
        .unwrap();
        assert_eq!(pool.len(), 2);
        assert!(!pool[1].client_in_container);
        assert_eq!(client, None);
        let e = load("engines:\n  - {name: a, host: 'npipe://x'}\n").unwrap_err();
        assert!(
            e.contains("hosts.yaml:2:") && e.contains("not supported"),
            "{e}"
        );
        let e =
            load("engines:\n  - {name: a, host: 'unix:///a'}\n  - {name: a, host: 'unix:///b'}\n")
                .unwrap_err();
        assert!(
            e.contains("hosts.yaml:3:") && e.contains("listed twice"),
            "{e}"
        );
        let e = load("engines: []\n").unwrap_err();
        assert!(e.contains("is empty"), "{e}");
        let e = load("engines:\n  - {name: a, host: 'unix:///a', tls: certs}\n").unwrap_err();
        assert!(
            e.contains("hosts.yaml:2:") && e.contains("tcp:// engine only"),
            "{e}"
        );
        let e = load("engines:\n  - {name: a}\n").unwrap_err();
        assert!(e.contains("exactly one of"), "{e}");
        let e = load("engines:\n  - {name: a, host: 'unix:///a', port: 1}\n").unwrap_err();
        assert!(e.contains("hosts.yaml:2:"), "{e}");
        let e = load("engines:\n  - {name: a, host: 'unix:///a'}\nclient_engine: z\n").unwrap_err();
        assert!(
            e.contains("hosts.yaml:3:") && e.contains("not one of"),
            "{e}"
        );
    }
}
