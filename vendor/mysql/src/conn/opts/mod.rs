// Copyright (c) 2020 rust-mysql-simple contributors
//
// Licensed under the Apache License, Version 2.0
// <LICENSE-APACHE or http://www.apache.org/licenses/LICENSE-2.0> or the MIT
// license <LICENSE-MIT or http://opensource.org/licenses/MIT>, at your
// option. All files in the project carrying such notice may not be copied,
// modified, or distributed except according to those terms.

use percent_encoding::percent_decode;
use url::Url;

use std::{
    borrow::Cow,
    collections::HashMap,
    fmt,
    hash::Hash,
    net::SocketAddr,
    path::{Path, PathBuf},
    time::Duration,
};

use crate::{
    consts::CapabilityFlags, Compression, LocalInfileHandler, PoolConstraints, PoolOpts, UrlError,
};

/// Default value for client side per-connection statement cache.
pub const DEFAULT_STMT_CACHE_SIZE: usize = 32;

mod native_tls_opts;
mod rustls_opts;

pub mod pool_opts;

#[cfg(feature = "native-tls")]
pub use native_tls_opts::ClientIdentity;

#[cfg(feature = "rustls")]
pub use rustls_opts::ClientIdentity;

/// Ssl Options.
#[derive(Debug, Clone, Eq, PartialEq, Hash, Default)]
pub struct SslOpts {
    #[cfg(any(feature = "native-tls", feature = "rustls"))]
    client_identity: Option<ClientIdentity>,
    root_cert_path: Option<Cow<'static, Path>>,
    skip_domain_validation: bool,
    accept_invalid_certs: bool,
    #[cfg(feature = "rustls")]
    cipher_suites: Option<Vec<String>>,
}

impl SslOpts {
    /// Sets the client identity.
    #[cfg(any(feature = "native-tls", feature = "rustls"))]
    #[cfg_attr(
        docsrs,
        doc(cfg(any(
            feature = "native-tls",
            feature = "rustls-tls",
            feature = "rustls-tls-ring"
        )))
    )]
    pub fn with_client_identity(mut self, identity: Option<ClientIdentity>) -> Self {
        self.client_identity = identity;
        self
    }

    /// Sets path to a certificate of the root that connector will trust.
    ///
    /// Supported certificate formats are .der and .pem.
    /// Multiple certs are allowed in .pem files.
    pub fn with_root_cert_path<T: Into<Cow<'static, Path>>>(
        mut self,
        root_cert_path: Option<T>,
    ) -> Self {
        self.root_cert_path = root_cert_path.map(Into::into);
        self
    }

    /// The way to not validate the server's domain
    /// name against its certificate (defaults to `false`).
    pub fn with_danger_skip_domain_validation(mut self, value: bool) -> Self {
        self.skip_domain_validation = value;
        self
    }

    /// If `true` then client will accept invalid certificate (expired, not trusted, ..)
    /// (defaults to `false`).
    pub fn with_danger_accept_invalid_certs(mut self, value: bool) -> Self {
        self.accept_invalid_certs = value;
        self
    }

    /// List of TLS cipher suites to use (provider defaults are used by default).
    ///
    /// Expects a list of cipher suite names (see [`rustls::CipherSuite`]).
    /// Empty vec will reset to default. Provider-incompatible suites will be filtered out.
    #[cfg(feature = "rustls")]
    #[cfg_attr(
        docsrs,
        doc(cfg(any(feature = "rustls-tls", feature = "rustls-tls-ring")))
    )]
    pub fn with_cipher_suites(mut self, cipher_suites: &[rustls::SupportedCipherSuite]) -> Self {
        if cipher_suites.is_empty() {
            self.cipher_suites = None;
        } else {
            self.cipher_suites = Some(
                cipher_suites
                    .iter()
                    .filter_map(|x| x.suite().as_str().map(|x| x.to_owned()))
                    .collect(),
            );
        }
        self
    }

    #[cfg(any(feature = "native-tls", feature = "rustls"))]
    #[cfg_attr(
        docsrs,
        doc(cfg(any(
            feature = "native-tls",
            feature = "rustls-tls",
            feature = "rustls-tls-ring"
        )))
    )]
    pub fn client_identity(&self) -> Option<&ClientIdentity> {
        self.client_identity.as_ref()
    }

    pub fn root_cert_path(&self) -> Option<&Path> {
        self.root_cert_path.as_ref().map(AsRef::as_ref)
    }

    pub fn skip_domain_validation(&self) -> bool {
        self.skip_domain_validation
    }

    pub fn accept_invalid_certs(&self) -> bool {
        self.accept_invalid_certs
    }

    #[cfg(feature = "rustls")]
    #[cfg_attr(
        docsrs,
        doc(cfg(any(feature = "rustls-tls", feature = "rustls-tls-ring")))
    )]
    pub fn cipher_suites(&self) -> Option<&[String]> {
        self.cipher_suites.as_deref()
    }
}

/// Options structure is quite large so we'll store it separately.
#[derive(Debug, Clone, Eq, PartialEq)]
pub(crate) struct InnerOpts {
    /// Address of mysql server (defaults to `127.0.0.1`). Host names should also work.
    ip_or_hostname: url::Host,
    /// TCP port of mysql server (defaults to `3306`).
    tcp_port: u16,
    /// Path to unix socket on unix or pipe name on windows (defaults to `None`).
    ///
    /// Can be defined using `socket` connection url parameter.
    socket: Option<String>,
    /// User (defaults to `None`).
    user: Option<String>,
    /// Password (defaults to `None`).
    pass: Option<String>,
    /// Database name (defaults to `None`).
    db_name: Option<String>,

    /// The timeout for each attempt to read from the server.
    read_timeout: Option<Duration>,

    /// The timeout for each attempt to write to the server.
    write_timeout: Option<Duration>,

    /// Prefer socket connection (defaults to `true`).
    ///
    /// Will reconnect via socket (or named pipe on windows) after TCP
    /// connection to `127.0.0.1` if `true`.
    ///
    /// Will fall back to TCP on error. Use `socket` option to enforce socket connection.
    ///
    /// Can be defined using `prefer_socket` connection url parameter.
    prefer_socket: bool,

    /// Whether to enable `TCP_NODELAY` (defaults to `true`).
    ///
    /// This option disables Nagle's algorithm, which can cause unusually high latency (~40ms) at
    /// some cost to maximum throughput. See #132.
    tcp_nodelay: bool,

    /// TCP keep alive time for mysql connection.
    ///
    /// Can be defined using `tcp_keepalive_time_ms` connection url parameter.
    tcp_keepalive_time: Option<u32>,

    /// TCP keep alive interval between subsequent probe for mysql connection.
    ///
    /// Can be defined using `tcp_keepalive_probe_interval_secs` connection url parameter.
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    tcp_keepalive_probe_interval_secs: Option<u32>,

    /// TCP keep alive probe count for mysql connection.
    ///
    /// Can be defined using `tcp_keepalive_probe_count` connection url parameter.
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    tcp_keepalive_probe_count: Option<u32>,

    /// TCP_USER_TIMEOUT time for mysql connection.
    ///
    /// Can be defined using `tcp_user_timeout_ms` connection url parameter.
    #[cfg(target_os = "linux")]
    tcp_user_timeout: Option<u32>,

    /// Commands to execute on each new database connection.
    init: Vec<String>,

    /// Driver will require SSL connection if this option isn't `None` (default to `None`).
    ssl_opts: Option<SslOpts>,

    /// Client-side copy of the server RSA public key for caching_sha2_password.
    server_key_path: Option<PathBuf>,

    /// Connection pool options (defaults to [`PoolOpts::default`]).
    pool_opts: PoolOpts,

    /// Callback to handle requests for local files.
    ///
    /// These are caused by using `LOAD DATA LOCAL INFILE` queries.
    /// The callback is passed the filename, and a `Write`able object
    /// to receive the contents of that file.
    ///
    /// If unset, the default callback will read files relative to
    /// the current directory.
    local_infile_handler: Option<LocalInfileHandler>,

    /// Tcp connect timeout (defaults to `None`).
    ///
    /// Can be defined using `tcp_connect_timeout_ms` connection url parameter.
    tcp_connect_timeout: Option<Duration>,

    /// Bind address for a client (defaults to `None`).
    ///
    /// Use carefully. Will probably make pool unusable because of *address already in use*
    /// errors.
    bind_address: Option<SocketAddr>,

    /// Number of prepared statements cached on the client side (per connection).
    /// Defaults to [`DEFAULT_STMT_CACHE_SIZE`].
    ///
    /// Can be defined using `stmt_cache_size` connection url parameter.
    stmt_cache_size: usize,

    /// If not `None`, then client will ask for compression if server supports it
    /// (defaults to `None`).
    ///
    /// Can be defined using `compress` connection url parameter with values `true`, `fast`, `best`,
    /// `0`, `1`, ..., `9`.
    ///
    /// Note that compression level defined here will affect only outgoing packets.
    compress: Option<crate::Compression>,

    /// Additional client capabilities to set (defaults to empty).
    ///
    /// This value will be OR'ed with other client capabilities during connection initialization.
    ///
    /// ### Note
    ///
    /// It is a good way to set something like `CLIENT_FOUND_ROWS` but you should note that it
    /// won't let you to interfere with capabilities managed by other options (like
    /// `CLIENT_SSL` or `CLIENT_COMPRESS`). Also note that some capabilities are reserved,
    /// pointless or may broke the connection, so this option should be used with caution.
    additional_capabilities: CapabilityFlags,

    /// Connect attributes
    connect_attrs: Option<HashMap<String, String>>,

    /// Disables `mysql_old_password` plugin (defaults to `true`).
    ///
    /// Available via `secure_auth` connection url parameter.
    secure_auth: bool,

    /// Enables Client-Side Cleartext Pluggable Authentication (defaults to `false`).
    ///
    /// Enables client to send passwords to the server as cleartext, without hashing or encryption
    /// (consult MySql documentation for more info).
    ///
    /// # Security Notes
    ///
    /// Sending passwords as cleartext may be a security problem in some configurations. Please
    /// consider using TLS or encrypted tunnels for server connection.
    enable_cleartext_plugin: bool,

    /// Client side `max_allowed_packet` value (defaults to `None`).
    ///
    /// By default `Conn` will query this value from the server. One can avoid this step
    /// by explicitly specifying it.
    max_allowed_packet: Option<usize>,

    /// For tests only
    #[cfg(test)]
    pub injected_socket: Option<String>,
}

impl Default for InnerOpts {
    fn default() -> Self {
        InnerOpts {
            ip_or_hostname: url::Host::Domain(String::from("localhost")),
            tcp_port: 3306,
            socket: None,
            max_allowed_packet: None,
            user: None,
            pass: None,
            db_name: None,
            read_timeout: None,
            write_timeout: None,
            prefer_socket: true,
            init: vec![],
            ssl_opts: None,
            server_key_path: None,
            pool_opts: PoolOpts::default(),
            tcp_keepalive_time: None,
            #[cfg(any(target_os = "linux", target_os = "macos",))]
            tcp_keepalive_probe_interval_secs: None,
            #[cfg(any(target_os = "linux", target_os = "macos",))]
            tcp_keepalive_probe_count: None,
            #[cfg(target_os = "linux")]
            tcp_user_timeout: None,
            tcp_nodelay: true,
            local_infile_handler: None,
            tcp_connect_timeout: None,
            bind_address: None,
            stmt_cache_size: DEFAULT_STMT_CACHE_SIZE,
            compress: None,
            additional_capabilities: CapabilityFlags::empty(),
            connect_attrs: Some(HashMap::new()),
            secure_auth: true,
            enable_cleartext_plugin: false,
            #[cfg(test)]
            injected_socket: None,
        }
    }
}

impl TryFrom<&'_ str> for Opts {
    type Error = UrlError;

    fn try_from(url: &'_ str) -> Result<Self, Self::Error> {
        Opts::from_url(url)
    }
}

/// Mysql connection options.
///
/// Build one with [`OptsBuilder`](struct.OptsBuilder.html).
#[derive(Clone, Eq, PartialEq, Debug, Default)]
pub struct Opts(pub(crate) Box<InnerOpts>);

impl Opts {
    #[doc(hidden)]
    pub fn addr_is_loopback(&self) -> bool {
        match self.0.ip_or_hostname {
            url::Host::Domain(ref name) => name == "localhost",
            url::Host::Ipv4(ref addr) => addr.is_loopback(),
            url::Host::Ipv6(ref addr) => addr.is_loopback(),
        }
    }

    pub fn from_url(url: &str) -> Result<Opts, UrlError> {
        from_url(url)
    }

    pub(crate) fn get_host(&self) -> url::Host {
        self.0.ip_or_hostname.clone()
    }

    /// Address of mysql server (defaults to `127.0.0.1`). Host names should also work.
    pub fn get_ip_or_hostname(&self) -> Cow<'_, str> {
        self.0.ip_or_hostname.to_string().into()
    }
    /// TCP port of mysql server (defaults to `3306`).
    pub fn get_tcp_port(&self) -> u16 {
        self.0.tcp_port
    }
    /// Socket path on unix or pipe name on windows (defaults to `None`).
    pub fn get_socket(&self) -> Option<&str> {
        self.0.socket.as_deref()
    }
    /// Client side `max_allowed_packet` value (defaults to `None`).
    ///
    /// By default `Conn` will query this value from the server. One can avoid this step
    /// by explicitly specifying it. Server side default is 4MB.
    ///
    /// Available in connection URL via `max_allowed_packet` parameter.
    pub fn get_max_allowed_packet(&self) -> Option<usize> {
        self.0.max_allowed_packet
    }
    /// User (defaults to `None`).
    pub fn get_user(&self) -> Option<&str> {
        self.0.user.as_deref()
    }
    /// Password (defaults to `None`).
    pub fn get_pass(&self) -> Option<&str> {
        self.0.pass.as_deref()
    }
    /// Database name (defaults to `None`).
    pub fn get_db_name(&self) -> Option<&str> {
        self.0.db_name.as_deref()
    }

    /// The timeout for each attempt to write to the server.
    pub fn get_read_timeout(&self) -> Option<&Duration> {
        self.0.read_timeout.as_ref()
    }

    /// The timeout for each attempt to write to the server.
    pub fn get_write_timeout(&self) -> Option<&Duration> {
        self.0.write_timeout.as_ref()
    }

    /// Prefer socket connection (defaults to `true`).
    ///
    /// Will reconnect via socket (or named pipe on windows) after TCP connection
    /// to `127.0.0.1` if `true`.
    ///
    /// Will fall back to TCP on error. Use `socket` option to enforce socket connection.
    pub fn get_prefer_socket(&self) -> bool {
        self.0.prefer_socket
    }
    // XXX: Wait for keepalive_timeout stabilization
    /// Commands to execute on each new database connection.
    pub fn get_init(&self) -> Vec<String> {
        self.0.init.clone()
    }

    /// Driver will require SSL connection if this option isn't `None` (default to `None`).
    pub fn get_ssl_opts(&self) -> Option<&SslOpts> {
        self.0.ssl_opts.as_ref()
    }

    /// Returns the configured server RSA public-key path (defaults to `None`).
    pub fn get_server_key_path(&self) -> Option<&Path> {
        self.0.server_key_path.as_deref()
    }

    /// Connection pool options (defaults to [`Default::default`]).
    pub fn get_pool_opts(&self) -> &PoolOpts {
        &self.0.pool_opts
    }

    /// Whether `TCP_NODELAY` will be set for mysql connection.
    pub fn get_tcp_nodelay(&self) -> bool {
        self.0.tcp_nodelay
    }

    /// TCP keep alive time for mysql connection.
    pub fn get_tcp_keepalive_time_ms(&self) -> Option<u32> {
        self.0.tcp_keepalive_time
    }

    /// TCP keep alive interval between subsequent probes for mysql connection.
    #[cfg(any(target_os = "linux", target_os = "macos",))]
    pub fn get_tcp_keepalive_probe_interval_secs(&self) -> Option<u32> {
        self.0.tcp_keepalive_probe_interval_secs
    }

    /// TCP keep alive probe count for mysql connection.
    #[cfg(any(target_os = "linux", target_os = "macos",))]
    pub fn get_tcp_keepalive_probe_count(&self) -> Option<u32> {
        self.0.tcp_keepalive_probe_count
    }

    /// TCP_USER_TIMEOUT time for mysql connection.
    #[cfg(target_os = "linux")]
    pub fn get_tcp_user_timeout_ms(&self) -> Option<u32> {
        self.0.tcp_user_timeout
    }

    /// Callback to handle requests for local files.
    pub fn get_local_infile_handler(&self) -> Option<&LocalInfileHandler> {
        self.0.local_infile_handler.as_ref()
    }

    /// Tcp connect timeout (defaults to `None`).
    pub fn get_tcp_connect_timeout(&self) -> Option<Duration> {
        self.0.tcp_connect_timeout
    }

    /// Bind address for a client (defaults to `None`).
    ///
    /// Use carefully. Will probably make pool unusable because of *address already in use*
    /// errors.
    pub fn bind_address(&self) -> Option<&SocketAddr> {
        self.0.bind_address.as_ref()
    }

    /// Number of prepared statements cached on the client side (per connection).
    /// Defaults to [`DEFAULT_STMT_CACHE_SIZE`].
    ///
    /// Can be defined using `stmt_cache_size` connection url parameter.
    pub fn get_stmt_cache_size(&self) -> usize {
        self.0.stmt_cache_size
    }

    /// If not `None`, then client will ask for compression if server supports it
    /// (defaults to `None`).
    ///
    /// Can be defined using `compress` connection url parameter with values:
    /// * `true` - library defined default compression level;
    /// * `fast` - library defined fast compression level;
    /// * `best` - library defined best compression level;
    /// * `0`, `1`, ..., `9` - explicitly defined compression level where `0` stands for
    ///   "no compression";
    ///
    /// Note that compression level defined here will affect only outgoing packets.
    pub fn get_compress(&self) -> Option<crate::Compression> {
        self.0.compress
    }

    /// Additional client capabilities to set (defaults to empty).
    ///
    /// This value will be OR'ed with other client capabilities during connection initialization.
    ///
    /// ### Note
    ///
    /// It is a good way to set something like `CLIENT_FOUND_ROWS` but you should note that it
    /// won't let you to interfere with capabilities managed by other options (like
    /// `CLIENT_SSL` or `CLIENT_COMPRESS`). Also note that some capabilities are reserved,
    /// pointless or may broke the connection, so this option should be used with caution.
    pub fn get_additional_capabilities(&self) -> CapabilityFlags {
        self.0.additional_capabilities
    }

    /// Connect attributes (the default connect attributes are sent by default).
    ///
    /// This value is sent to the server as custom name-value attributes.
    /// You can see them from performance_schema tables: [`session_account_connect_attrs`
    /// and `session_connect_attrs`][attr_tables] when all of the following conditions
    /// are met.
    ///
    /// * The server is MySQL 5.6 or later, or MariaDB 10.0 or later.
    /// * [`performance_schema`] is on.
    /// * [`performance_schema_session_connect_attrs_size`] is -1 or big enough
    ///   to store specified attributes.
    ///
    /// ### Note
    ///
    /// - set `connect_attrs` to `None` to completely remove connect attributes
    /// - set `connect_attrs` to an empty map to send only the default attributes
    ///
    /// #### Warning
    ///
    /// > There is a bug in MySql 5.6 that kills COM_CHANGE_USER in the presence of connection
    /// > attributes so it's better to stick to `None` for mysql < 5.7.
    ///
    /// Attribute names that begin with an underscore (`_`) are not set by
    /// application programs because they are reserved for internal use.
    ///
    /// The following default attributes are sent in addition to ones set by programs.
    ///
    /// name            | value
    /// ----------------|--------------------------
    /// _client_name    | The client library name (`rust-mysql-simple`)
    /// _client_version | The client library version
    /// _os             | The operation system (`target_os` cfg feature)
    /// _pid            | The client process ID
    /// _platform       | The machine platform (`target_arch` cfg feature)
    /// program_name    | The first element of `std::env::args` if program_name isn't set by programs.
    ///
    /// [attr_tables]: https://dev.mysql.com/doc/refman/en/performance-schema-connection-attribute-tables.html
    /// [`performance_schema`]: https://dev.mysql.com/doc/refman/8.0/en/performance-schema-system-variables.html#sysvar_performance_schema
    /// [`performance_schema_session_connect_attrs_size`]: https://dev.mysql.com/doc/refman/en/performance-schema-system-variables.html#sysvar_performance_schema_session_connect_attrs_size
    ///
    pub fn get_connect_attrs(&self) -> Option<&HashMap<String, String>> {
        self.0.connect_attrs.as_ref()
    }

    /// Disables `mysql_old_password` plugin (defaults to `true`).
    ///
    /// Available via `secure_auth` connection url parameter.
    pub fn get_secure_auth(&self) -> bool {
        self.0.secure_auth
    }

    /// Returns `true` if `mysql_clear_password` plugin support is enabled (defaults to `false`).
    ///
    /// `mysql_clear_password` enables client to send passwords to the server as cleartext, without
    /// hashing or encryption (consult MySql documentation for more info).
    ///
    /// # Security Notes
    ///
    /// Sending passwords as cleartext may be a security problem in some configurations. Please
    /// consider using TLS or encrypted tunnels for server connection.
    ///
    /// # Connection URL
    ///
    /// Use `enable_cleartext_plugin` URL parameter to set this value. E.g.
    ///
    /// ```
    /// # use mysql::*;
    /// # fn main() -> Result<()> {
    /// let opts = Opts::from_url("mysql://localhost/db?enable_cleartext_plugin=true")?;
    /// assert!(opts.get_enable_cleartext_plugin());
    /// # Ok(()) }
    /// ```
    pub fn get_enable_cleartext_plugin(&self) -> bool {
        self.0.enable_cleartext_plugin
    }
}

/// Provides a way to build [`Opts`](struct.Opts.html).
///
/// ```ignore
/// let mut ssl_opts = SslOpts::default();
/// ssl_opts = ssl_opts.with_pkcs12_path(Some(Path::new("/foo/cert.p12")))
///         .with_root_ca_path(Some(Path::new("/foo/root_ca.der")));
///
/// // You can create new default builder
/// let mut builder = OptsBuilder::new();
/// builder = builder.ip_or_hostname(Some("foo"))
///        .db_name(Some("bar"))
///        .ssl_opts(Some(ssl_opts));
///
/// // Or use existing T: Into<Opts>
/// let builder = OptsBuilder::from_opts(existing_opts)
///        .ip_or_hostname(Some("foo"))
///        .db_name(Some("bar"));
/// ```
///
/// ## Connection URL
///
/// `Opts` also could be constructed using connection URL. See docs on `OptsBuilder`'s methods for
/// the list of options available via URL.
///
/// Example:
///
/// ```ignore
/// let connection_opts = mysql::Opts::from_url("mysql://root:password@localhost:3307/mysql?prefer_socket=false").unwrap();
/// let pool = mysql::Pool::new(connection_opts).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OptsBuilder {
    opts: Opts,
}

impl OptsBuilder {
    pub fn new() -> Self {
        OptsBuilder::default()
    }

    pub fn from_opts<T: Into<Opts>>(opts: T) -> Self {
        OptsBuilder { opts: opts.into() }
    }

    /// Use a HashMap for creating an OptsBuilder instance:
    ///
    /// See "URL-based connection string" section in the crate-level
    /// docs for the list of supported keys.
    ///
    /// ```ignore
    /// OptsBuilder::new().from_hash_map(client);
    /// ```
    ///
    /// Login .cnf file parsing lib <https://github.com/rjcortese/myloginrs> returns a HashMap for client configs
    ///
    /// **Note:** You do **not** have to use myloginrs lib.
    pub fn from_hash_map(mut self, client: &HashMap<String, String>) -> Result<Self, UrlError> {
        let mut pool_min = PoolConstraints::DEFAULT.min();
        let mut pool_max = PoolConstraints::DEFAULT.max();

        // [`SslOpts`] url parameters
        #[cfg_attr(not(feature = "rustls"), expect(unused_mut, unused_variables))]
        let mut cipher_suites: Option<Vec<String>> = None;
        let mut root_cert_path: Option<PathBuf> = None;
        let mut skip_domain_validation: Option<bool> = None;
        let mut accept_invalid_certs: Option<bool> = None;
        #[cfg_attr(not(feature = "rustls"), expect(unused_mut, unused_variables))]
        let mut cert_chain_path: Option<PathBuf> = None;
        #[cfg_attr(not(feature = "rustls"), expect(unused_mut, unused_variables))]
        let mut priv_key_path: Option<PathBuf> = None;
        #[cfg_attr(not(feature = "native-tls"), expect(unused_mut, unused_variables))]
        let mut pkcs12_path: Option<PathBuf> = None;
        #[cfg_attr(not(feature = "native-tls"), expect(unused_mut, unused_variables))]
        let mut pkcs12_pass: Option<String> = None;

        for (key, value) in client.iter() {
            match key.as_str() {
                "pool_min" => match value.parse::<usize>() {
                    Ok(parsed) => pool_min = parsed,
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "pool_max" => match value.parse::<usize>() {
                    Ok(parsed) => pool_max = parsed,
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "user" => self.opts.0.user = Some(value.to_string()),
                "password" => self.opts.0.pass = Some(value.to_string()),
                "host" => {
                    let host = url::Host::parse(value)
                        .unwrap_or_else(|_| url::Host::Domain(value.to_owned()));
                    self.opts.0.ip_or_hostname = host;
                }
                "port" => match value.parse::<u16>() {
                    Ok(parsed) => self.opts.0.tcp_port = parsed,
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "socket" => self.opts.0.socket = Some(value.to_string()),
                "server_key_path" => self.opts.0.server_key_path = Some(PathBuf::from(value)),
                "db_name" => self.opts.0.db_name = Some(value.to_string()),
                "prefer_socket" => {
                    //default to true like standard opts builder method
                    match value.parse::<bool>() {
                        Ok(parsed) => self.opts.0.prefer_socket = parsed,
                        Err(_) => {
                            return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                        }
                    }
                }
                "enable_cleartext_plugin" => match value.parse::<bool>() {
                    Ok(parsed) => self.opts.0.enable_cleartext_plugin = parsed,
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "secure_auth" => match value.parse::<bool>() {
                    Ok(parsed) => self.opts.0.secure_auth = parsed,
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "tcp_keepalive_time_ms" => {
                    //if cannot parse, default to none
                    self.opts.0.tcp_keepalive_time = match value.parse::<u32>() {
                        Ok(val) => Some(val),
                        _ => {
                            return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                        }
                    }
                }
                #[cfg(any(target_os = "linux", target_os = "macos",))]
                "tcp_keepalive_probe_interval_secs" => {
                    //if cannot parse, default to none
                    self.opts.0.tcp_keepalive_probe_interval_secs = match value.parse::<u32>() {
                        Ok(val) => Some(val),
                        _ => {
                            return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                        }
                    }
                }
                #[cfg(any(target_os = "linux", target_os = "macos",))]
                "tcp_keepalive_probe_count" => {
                    //if cannot parse, default to none
                    self.opts.0.tcp_keepalive_probe_count = match value.parse::<u32>() {
                        Ok(val) => Some(val),
                        _ => {
                            return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                        }
                    }
                }
                #[cfg(target_os = "linux")]
                "tcp_user_timeout_ms" => {
                    self.opts.0.tcp_user_timeout = match value.parse::<u32>() {
                        Ok(val) => Some(val),
                        _ => {
                            return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                        }
                    }
                }
                "compress" => match value.parse::<u32>() {
                    Ok(val) => self.opts.0.compress = Some(Compression::new(val)),
                    Err(_) => {
                        //not an int
                        match value.as_str() {
                            "fast" => self.opts.0.compress = Some(Compression::fast()),
                            "best" => self.opts.0.compress = Some(Compression::best()),
                            "true" => self.opts.0.compress = Some(Compression::default()),
                            _ => {
                                return Err(UrlError::InvalidValue(
                                    key.to_string(),
                                    value.to_string(),
                                )); //should not go below this due to catch all
                            }
                        }
                    }
                },
                "tcp_connect_timeout_ms" => {
                    self.opts.0.tcp_connect_timeout = match value.parse::<u64>() {
                        Ok(val) => Some(Duration::from_millis(val)),
                        _ => {
                            return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                        }
                    }
                }
                "stmt_cache_size" => match value.parse::<usize>() {
                    Ok(parsed) => self.opts.0.stmt_cache_size = parsed,
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "reset_connection" => match value.parse::<bool>() {
                    Ok(parsed) => {
                        self.opts.0.pool_opts = self.opts.0.pool_opts.with_reset_connection(parsed)
                    }
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "check_health" => match value.parse::<bool>() {
                    Ok(parsed) => {
                        self.opts.0.pool_opts = self.opts.0.pool_opts.with_check_health(parsed)
                    }
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "max_allowed_packet" => match value.parse::<usize>() {
                    Ok(parsed) => self.opts.0.max_allowed_packet = Some(parsed),
                    Err(_) => {
                        return Err(UrlError::InvalidValue(key.to_string(), value.to_string()))
                    }
                },
                "cipher_suites" => {
                    #[cfg(feature = "rustls")]
                    {
                        let supported_suites = rustls::ClientConfig::builder()
                            .crypto_provider()
                            .cipher_suites
                            .clone();

                        let mut selected_suites = Vec::new();
                        for name in value.split(",") {
                            if name.is_empty() {
                                continue;
                            }

                            if supported_suites
                                .iter()
                                .any(|y| y.suite().as_str() == Some(name))
                            {
                                selected_suites.push(name.to_owned());
                            } else {
                                return Err(UrlError::InvalidValue(
                                    key.to_string(),
                                    name.to_owned(),
                                ));
                            }
                        }

                        let selected_suites = value
                            .split(",")
                            .filter(|x| !x.is_empty())
                            .filter(|x| {
                                supported_suites
                                    .iter()
                                    .any(|y| y.suite().as_str() == Some(*x))
                            })
                            .map(|x| x.to_owned())
                            .collect::<Vec<_>>();

                        if selected_suites.is_empty() {
                            return Err(UrlError::InvalidValue(key.to_string(), value.to_string()));
                        }

                        cipher_suites = Some(selected_suites);
                    }
                    #[cfg(not(feature = "rustls"))]
                    return Err(UrlError::FeatureRequired(
                        "rustls | rustls-tls | rustls-tls-ring".to_owned(),
                        key.as_str().to_owned(),
                    ));
                }
                "cert_chain_path" => {
                    #[cfg(feature = "rustls")]
                    {
                        cert_chain_path = Some(PathBuf::from(value));
                    }
                    #[cfg(not(feature = "rustls"))]
                    return Err(UrlError::FeatureRequired(
                        "rustls | rustls-tls | rustls-tls-ring".to_owned(),
                        key.as_str().to_owned(),
                    ));
                }
                "priv_key_path" => {
                    #[cfg(feature = "rustls")]
                    {
                        priv_key_path = Some(PathBuf::from(value));
                    }
                    #[cfg(not(feature = "rustls"))]
                    return Err(UrlError::FeatureRequired(
                        "rustls | rustls-tls | rustls-tls-ring".to_owned(),
                        key.as_str().to_owned(),
                    ));
                }
                "pkcs12_path" => {
                    #[cfg(feature = "native-tls")]
                    {
                        pkcs12_path = Some(PathBuf::from(value));
                    }
                    #[cfg(not(feature = "native-tls"))]
                    return Err(UrlError::FeatureRequired(
                        "native-tls".to_owned(),
                        key.as_str().to_owned(),
                    ));
                }
                "pkcs12_pass" => {
                    #[cfg(feature = "native-tls")]
                    {
                        pkcs12_pass = Some(value.clone());
                    }
                    #[cfg(not(feature = "native-tls"))]
                    return Err(UrlError::FeatureRequired(
                        "native-tls".to_owned(),
                        key.as_str().to_owned(),
                    ));
                }
                "root_cert_path" => root_cert_path = Some(PathBuf::from(value)),
                "danger_skip_domain_validation" => {
                    skip_domain_validation =
                        Some(value.parse::<bool>().map_err(|_| {
                            UrlError::InvalidValue(key.to_string(), value.to_string())
                        })?)
                }
                "danger_accept_invalid_certs" => {
                    accept_invalid_certs =
                        Some(value.parse::<bool>().map_err(|_| {
                            UrlError::InvalidValue(key.to_string(), value.to_string())
                        })?)
                }
                _ => {
                    //throw an error if there is an unrecognized param
                    return Err(UrlError::UnknownParameter(key.to_string()));
                }
            }
        }

        if let Some(pool_constraints) = PoolConstraints::new(pool_min, pool_max) {
            self.opts.0.pool_opts = self.opts.0.pool_opts.with_constraints(pool_constraints);
        } else {
            return Err(UrlError::InvalidPoolConstraints {
                min: pool_min,
                max: pool_max,
            });
        }

        let mut ssl_opts: Option<SslOpts> = None;

        #[cfg(feature = "rustls")]
        if let Some(cipher_suites) = cipher_suites {
            let ssl_opts: &mut SslOpts = ssl_opts.get_or_insert_default();
            ssl_opts.cipher_suites = Some(cipher_suites);
        }

        #[cfg(feature = "rustls")]
        match (cert_chain_path, priv_key_path) {
            (Some(cert_chain_path), Some(priv_key_path)) => {
                let ssl_opts: &mut SslOpts = ssl_opts.get_or_insert_default();
                ssl_opts.client_identity = Some(ClientIdentity::new(cert_chain_path, priv_key_path))
            }
            (Some(_), None) => {
                return Err(UrlError::InvalidValue(
                    "priv_key_path".to_owned(),
                    "<MISSING>".to_owned(),
                ));
            }
            (None, Some(_)) => {
                return Err(UrlError::InvalidValue(
                    "cert_chain_path".to_owned(),
                    "<MISSING>".to_owned(),
                ));
            }
            _ => (),
        }

        #[cfg(feature = "native-tls")]
        if let Some(pkcs12_path) = pkcs12_path {
            let ssl_opts: &mut SslOpts = ssl_opts.get_or_insert_default();
            let mut identity = ClientIdentity::new(pkcs12_path);
            if let Some(pkcs12_pass) = pkcs12_pass {
                identity = identity.with_password(pkcs12_pass);
            }
            ssl_opts.client_identity = Some(identity);
        }

        if let Some(root_cert_path) = root_cert_path {
            let ssl_opts: &mut SslOpts = ssl_opts.get_or_insert_default();
            ssl_opts.root_cert_path = Some(Cow::Owned(root_cert_path));
        }

        if let Some(skip_domain_validation) = skip_domain_validation {
            let ssl_opts: &mut SslOpts = ssl_opts.get_or_insert_default();
            ssl_opts.skip_domain_validation = skip_domain_validation;
        }

        if let Some(accept_invalid_certs) = accept_invalid_certs {
            let ssl_opts: &mut SslOpts = ssl_opts.get_or_insert_default();
            ssl_opts.accept_invalid_certs = accept_invalid_certs;
        }

        if let Some(ssl_opts) = ssl_opts {
            self.opts.0.ssl_opts = Some(ssl_opts.clone());
        }

        Ok(self)
    }

    /// Address of mysql server (defaults to `127.0.0.1`). Host names should also work.
    ///
    /// **Note:** IPv6 addresses must be given in square brackets, e.g. `[::1]`.
    pub fn ip_or_hostname<T: Into<String>>(mut self, ip_or_hostname: Option<T>) -> Self {
        let new = ip_or_hostname
            .map(Into::into)
            .unwrap_or_else(|| "127.0.0.1".into());
        self.opts.0.ip_or_hostname =
            url::Host::parse(&new).unwrap_or_else(|_| url::Host::Domain(new.to_owned()));
        self
    }

    /// TCP port of mysql server (defaults to `3306`).
    pub fn tcp_port(mut self, tcp_port: u16) -> Self {
        self.opts.0.tcp_port = tcp_port;
        self
    }

    /// Socket path on unix or pipe name on windows (defaults to `None`).
    ///
    /// Can be defined using `socket` connection url parameter.
    pub fn socket<T: Into<String>>(mut self, socket: Option<T>) -> Self {
        self.opts.0.socket = socket.map(Into::into);
        self
    }

    /// Defines `max_allowed_packet` option. See [`Opts::get_max_allowed_packet`].
    ///
    /// Note that it'll saturate to proper minimum and maximum values
    /// for this parameter (see MySql documentation).
    pub fn max_allowed_packet(mut self, max_allowed_packet: Option<usize>) -> Self {
        self.opts.0.max_allowed_packet = max_allowed_packet.map(|x| x.clamp(1024, 1073741824));
        self
    }

    /// User (defaults to `None`).
    pub fn user<T: Into<String>>(mut self, user: Option<T>) -> Self {
        self.opts.0.user = user.map(Into::into);
        self
    }

    /// Password (defaults to `None`).
    pub fn pass<T: Into<String>>(mut self, pass: Option<T>) -> Self {
        self.opts.0.pass = pass.map(Into::into);
        self
    }

    /// Database name (defaults to `None`).
    pub fn db_name<T: Into<String>>(mut self, db_name: Option<T>) -> Self {
        self.opts.0.db_name = db_name.map(Into::into);
        self
    }

    /// The timeout for each attempt to read from the server (defaults to `None`).
    ///
    /// Note that named pipe connection will ignore duration's `nanos`, and also note that
    /// it is an error to pass the zero `Duration` to this method.
    pub fn read_timeout(mut self, read_timeout: Option<Duration>) -> Self {
        self.opts.0.read_timeout = read_timeout;
        self
    }

    /// The timeout for each attempt to write to the server (defaults to `None`).
    ///
    /// Note that named pipe connection will ignore duration's `nanos`, and also note that
    /// it is likely error to pass the zero `Duration` to this method.
    pub fn write_timeout(mut self, write_timeout: Option<Duration>) -> Self {
        self.opts.0.write_timeout = write_timeout;
        self
    }

    /// TCP keep alive time for mysql connection (defaults to `None`). Available as
    /// `tcp_keepalive_time_ms` url parameter.
    ///
    /// Can be defined using `tcp_keepalive_time_ms` connection url parameter.
    pub fn tcp_keepalive_time_ms(mut self, tcp_keepalive_time_ms: Option<u32>) -> Self {
        self.opts.0.tcp_keepalive_time = tcp_keepalive_time_ms;
        self
    }

    /// TCP keep alive interval between probes for mysql connection (defaults to `None`). Available as
    /// `tcp_keepalive_probe_interval_secs` url parameter.
    ///
    /// Can be defined using `tcp_keepalive_probe_interval_secs` connection url parameter.
    #[cfg(any(target_os = "linux", target_os = "macos",))]
    pub fn tcp_keepalive_probe_interval_secs(
        mut self,
        tcp_keepalive_probe_interval_secs: Option<u32>,
    ) -> Self {
        self.opts.0.tcp_keepalive_probe_interval_secs = tcp_keepalive_probe_interval_secs;
        self
    }

    /// TCP keep alive probe count for mysql connection (defaults to `None`). Available as
    /// `tcp_keepalive_probe_count` url parameter.
    ///
    /// Can be defined using `tcp_keepalive_probe_count` connection url parameter.
    #[cfg(any(target_os = "linux", target_os = "macos",))]
    pub fn tcp_keepalive_probe_count(mut self, tcp_keepalive_probe_count: Option<u32>) -> Self {
        self.opts.0.tcp_keepalive_probe_count = tcp_keepalive_probe_count;
        self
    }

    /// TCP_USER_TIMEOUT for mysql connection (defaults to `None`). Available as
    /// `tcp_user_timeout_ms` url parameter.
    ///
    /// Can be defined using `tcp_user_timeout_ms` connection url parameter.
    #[cfg(target_os = "linux")]
    pub fn tcp_user_timeout_ms(mut self, tcp_user_timeout_ms: Option<u32>) -> Self {
        self.opts.0.tcp_user_timeout = tcp_user_timeout_ms;
        self
    }

    /// Set the `TCP_NODELAY` option for the mysql connection (defaults to `true`).
    ///
    /// Setting this option to false re-enables Nagle's algorithm, which can cause unusually high
    /// latency (~40ms) but may increase maximum throughput. See #132.
    pub fn tcp_nodelay(mut self, nodelay: bool) -> Self {
        self.opts.0.tcp_nodelay = nodelay;
        self
    }

    /// Prefer socket connection (defaults to `true`). Available as `prefer_socket` url parameter
    /// with value `true` or `false`.
    ///
    /// Will reconnect via socket (on named pipe on windows) after TCP connection
    /// to `127.0.0.1` if `true`.
    ///
    /// Will fall back to TCP on error. Use `socket` option to enforce socket connection.
    ///
    /// Can be defined using `prefer_socket` connection url parameter.
    pub fn prefer_socket(mut self, prefer_socket: bool) -> Self {
        self.opts.0.prefer_socket = prefer_socket;
        self
    }

    /// Commands to execute on each new database connection.
    pub fn init<T: Into<String>>(mut self, init: Vec<T>) -> Self {
        self.opts.0.init = init.into_iter().map(Into::into).collect();
        self
    }

    /// Driver will require SSL connection if this option isn't `None` (default to `None`).
    pub fn ssl_opts<T: Into<Option<SslOpts>>>(mut self, ssl_opts: T) -> Self {
        self.opts.0.ssl_opts = ssl_opts.into();
        self
    }

    /// Sets a client-side copy of the server RSA public key in PEM format.
    ///
    /// Used only by full `caching_sha2_password` authentication over non-TLS TCP.
    /// When set, the key is read from this file instead of requested from the server.
    /// File-read errors are returned without falling back to server key retrieval.
    /// TLS, local sockets and cached authentication do not read this file.
    /// Defaults to `None`, retaining automatic server key retrieval.
    ///
    /// Also available as the `server_key_path` connection URL parameter.
    ///
    /// ```
    /// # use mysql::{Opts, OptsBuilder};
    /// # use std::path::PathBuf;
    /// let path = PathBuf::from("/path/to/server-public-key.pem");
    /// let opts = Opts::from(OptsBuilder::new().server_key_path(Some(path.clone())));
    /// assert_eq!(opts.get_server_key_path(), Some(path.as_path()));
    /// ```
    pub fn server_key_path(mut self, server_key_path: Option<PathBuf>) -> Self {
        self.opts.0.server_key_path = server_key_path;
        self
    }

    /// Connection pool options (see [`Opts::get_pool_opts`]).
    ///
    /// Pass `None` to reset to default.
    pub fn pool_opts<T: Into<Option<PoolOpts>>>(mut self, pool_opts: T) -> Self {
        self.opts.0.pool_opts = pool_opts.into().unwrap_or_default();
        self
    }

    /// Callback to handle requests for local files. These are
    /// caused by using `LOAD DATA LOCAL INFILE` queries. The
    /// callback is passed the filename, and a `Write`able object
    /// to receive the contents of that file.
    /// If unset, the default callback will read files relative to
    /// the current directory.
    pub fn local_infile_handler(mut self, handler: Option<LocalInfileHandler>) -> Self {
        self.opts.0.local_infile_handler = handler;
        self
    }

    /// Tcp connect timeout (defaults to `None`). Available as `tcp_connect_timeout_ms`
    /// url parameter.
    ///
    /// Can be defined using `tcp_connect_timeout_ms` connection url parameter.
    pub fn tcp_connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.opts.0.tcp_connect_timeout = timeout;
        self
    }

    /// Bind address for a client (defaults to `None`).
    ///
    /// Use carefully. Will probably make pool unusable because of *address already in use*
    /// errors.
    pub fn bind_address<T>(mut self, bind_address: Option<T>) -> Self
    where
        T: Into<SocketAddr>,
    {
        self.opts.0.bind_address = bind_address.map(Into::into);
        self
    }

    /// Number of prepared statements cached on the client side (per connection).
    /// Defaults to [`DEFAULT_STMT_CACHE_SIZE`].
    ///
    /// Can be defined using `stmt_cache_size` connection url parameter.
    ///
    /// Call with `None` to reset to default.
    pub fn stmt_cache_size<T>(mut self, cache_size: T) -> Self
    where
        T: Into<Option<usize>>,
    {
        self.opts.0.stmt_cache_size = cache_size.into().unwrap_or(128);
        self
    }

    /// If not `None`, then client will ask for compression if server supports it
    /// (defaults to `None`).
    ///
    /// Can be defined using `compress` connection url parameter with values:
    /// * `true` - library defined default compression level;
    /// * `fast` - library defined fast compression level;
    /// * `best` - library defined best compression level;
    /// * `0`, `1`, ..., `9` - explicitly defined compression level where `0` stands for
    ///   "no compression";
    ///
    /// Note that compression level defined here will affect only outgoing packets.
    pub fn compress(mut self, compress: Option<crate::Compression>) -> Self {
        self.opts.0.compress = compress;
        self
    }

    /// Additional client capabilities to set (defaults to empty).
    ///
    /// This value will be OR'ed with other client capabilities during connection initialization.
    ///
    /// ### Note
    ///
    /// It is a good way to set something like `CLIENT_FOUND_ROWS` but you should note that it
    /// won't let you to interfere with capabilities managed by other options (like
    /// `CLIENT_SSL` or `CLIENT_COMPRESS`). Also note that some capabilities are reserved,
    /// pointless or may broke the connection, so this option should be used with caution.
    pub fn additional_capabilities(mut self, additional_capabilities: CapabilityFlags) -> Self {
        let forbidden_flags: CapabilityFlags = CapabilityFlags::CLIENT_PROTOCOL_41
            | CapabilityFlags::CLIENT_SSL
            | CapabilityFlags::CLIENT_COMPRESS
            | CapabilityFlags::CLIENT_SECURE_CONNECTION
            | CapabilityFlags::CLIENT_LONG_PASSWORD
            | CapabilityFlags::CLIENT_TRANSACTIONS
            | CapabilityFlags::CLIENT_LOCAL_FILES
            | CapabilityFlags::CLIENT_MULTI_STATEMENTS
            | CapabilityFlags::CLIENT_MULTI_RESULTS
            | CapabilityFlags::CLIENT_PS_MULTI_RESULTS;

        self.opts.0.additional_capabilities = additional_capabilities & !forbidden_flags;
        self
    }

    /// Connect attributes (the default connect attributes are sent by default).
    ///
    /// This value is sent to the server as custom name-value attributes.
    /// You can see them from performance_schema tables: [`session_account_connect_attrs`
    /// and `session_connect_attrs`][attr_tables] when all of the following conditions
    /// are met.
    ///
    /// * The server is MySQL 5.6 or later, or MariaDB 10.0 or later.
    /// * [`performance_schema`] is on.
    /// * [`performance_schema_session_connect_attrs_size`] is -1 or big enough
    ///   to store specified attributes.
    ///
    /// ### Note
    ///
    /// - set `connect_attrs` to `None` to completely remove connect attributes
    /// - set `connect_attrs` to an empty map to send only the default attributes
    ///
    /// #### Warning
    ///
    /// > There is a bug in MySql 5.6 that kills COM_CHANGE_USER in the presence of connection
    /// > attributes so it's better to stick to `None` for mysql < 5.7.
    ///
    /// Attribute names that begin with an underscore (`_`) are not set by
    /// application programs because they are reserved for internal use.
    ///
    /// The following default attributes are sent in addition to ones set by programs.
    ///
    /// name            | value
    /// ----------------|--------------------------
    /// _client_name    | The client library name (`rust-mysql-simple`)
    /// _client_version | The client library version
    /// _os             | The operation system (`target_os` cfg feature)
    /// _pid            | The client process ID
    /// _platform       | The machine platform (`target_arch` cfg feature)
    /// program_name    | The first element of `std::env::args` if program_name isn't set by programs.
    ///
    /// [attr_tables]: https://dev.mysql.com/doc/refman/en/performance-schema-connection-attribute-tables.html
    /// [`performance_schema`]: https://dev.mysql.com/doc/refman/8.0/en/performance-schema-system-variables.html#sysvar_performance_schema
    /// [`performance_schema_session_connect_attrs_size`]: https://dev.mysql.com/doc/refman/en/performance-schema-system-variables.html#sysvar_performance_schema_session_connect_attrs_size
    ///
    pub fn connect_attrs<T1: Into<String> + Eq + Hash, T2: Into<String>>(
        mut self,
        connect_attrs: Option<HashMap<T1, T2>>,
    ) -> Self {
        if let Some(connect_attrs) = connect_attrs {
            let mut attrs = HashMap::with_capacity(connect_attrs.len());
            for (name, value) in connect_attrs {
                let name = name.into();
                if !name.starts_with('_') {
                    attrs.insert(name, value.into());
                }
            }
            self.opts.0.connect_attrs = Some(attrs);
        } else {
            self.opts.0.connect_attrs = None;
        }
        self
    }

    /// Disables `mysql_old_password` plugin (defaults to `true`).
    ///
    /// Available via `secure_auth` connection url parameter.
    pub fn secure_auth(mut self, secure_auth: bool) -> Self {
        self.opts.0.secure_auth = secure_auth;
        self
    }

    /// Enables Client-Side Cleartext Pluggable Authentication (defaults to `false`).
    ///
    /// Enables client to send passwords to the server as cleartext, without hashing or encryption
    /// (consult MySql documentation for more info).
    ///
    /// # Security Notes
    ///
    /// Sending passwords as cleartext may be a security problem in some configurations. Please
    /// consider using TLS or encrypted tunnels for server connection.
    ///
    /// # Connection URL
    ///
    /// Use `enable_cleartext_plugin` URL parameter to set this value. E.g.
    ///
    /// ```
    /// # use mysql::*;
    /// # fn main() -> Result<()> {
    /// let opts = Opts::from_url("mysql://localhost/db?enable_cleartext_plugin=true")?;
    /// assert!(opts.get_enable_cleartext_plugin());
    /// # Ok(()) }
    /// ```
    pub fn enable_cleartext_plugin(mut self, enable_cleartext_plugin: bool) -> Self {
        self.opts.0.enable_cleartext_plugin = enable_cleartext_plugin;
        self
    }
}

impl From<OptsBuilder> for Opts {
    fn from(builder: OptsBuilder) -> Opts {
        builder.opts
    }
}

fn get_opts_user_from_url(url: &Url) -> Option<String> {
    let user = url.username();
    if !user.is_empty() {
        Some(
            percent_decode(user.as_ref())
                .decode_utf8_lossy()
                .into_owned(),
        )
    } else {
        None
    }
}

fn get_opts_pass_from_url(url: &Url) -> Option<String> {
    url.password().map(|pass| {
        percent_decode(pass.as_ref())
            .decode_utf8_lossy()
            .into_owned()
    })
}

fn get_opts_db_name_from_url(url: &Url) -> Option<String> {
    if let Some(mut segments) = url.path_segments() {
        segments
            .next()
            .filter(|&db_name| !db_name.is_empty())
            .map(|db_name| {
                percent_decode(db_name.as_ref())
                    .decode_utf8_lossy()
                    .into_owned()
            })
    } else {
        None
    }
}

fn from_url_basic(url_str: &str) -> Result<(Opts, Vec<(String, String)>), UrlError> {
    let url = Url::parse(url_str)?;
    if url.scheme() != "mysql" {
        return Err(UrlError::UnsupportedScheme(url.scheme().to_string()));
    }
    if url.cannot_be_a_base() {
        return Err(UrlError::BadUrl);
    }
    let user = get_opts_user_from_url(&url);
    let pass = get_opts_pass_from_url(&url);
    let ip_or_hostname = url
        .host()
        .ok_or(UrlError::BadUrl)
        .and_then(|host| url::Host::parse(&host.to_string()).map_err(|_| UrlError::BadUrl))?;
    let tcp_port = url.port().unwrap_or(3306);
    let db_name = get_opts_db_name_from_url(&url);

    let query_pairs = url.query_pairs().into_owned().collect();
    let opts = Opts(Box::new(InnerOpts {
        user,
        pass,
        ip_or_hostname,
        tcp_port,
        db_name,
        ..InnerOpts::default()
    }));

    Ok((opts, query_pairs))
}

fn from_url(url: &str) -> Result<Opts, UrlError> {
    let (opts, query_pairs) = from_url_basic(url)?;
    let hash_map = query_pairs.into_iter().collect::<HashMap<String, String>>();
    OptsBuilder::from_opts(opts)
        .from_hash_map(&hash_map)
        .map(Into::into)
}

/// [`COM_CHANGE_USER`][1] options.
///
/// Connection [`Opts`] are going to be updated accordingly upon `COM_CHANGE_USER`.
///
/// [`Opts`] won't be updated by default, because default `ChangeUserOpts` will reuse
/// connection's `user`, `pass` and `db_name`.
///
/// [1]: https://dev.mysql.com/doc/c-api/5.7/en/mysql-change-user.html
#[derive(Clone, Eq, PartialEq)]
pub struct ChangeUserOpts {
    user: Option<Option<String>>,
    pass: Option<Option<String>>,
    db_name: Option<Option<String>>,
}

impl ChangeUserOpts {
    pub const DEFAULT: Self = Self {
        user: None,
        pass: None,
        db_name: None,
    };

    pub(crate) fn update_opts(self, opts: &mut Opts) {
        if self.user.is_none() && self.pass.is_none() && self.db_name.is_none() {
            return;
        }

        let mut builder = OptsBuilder::from_opts(opts.clone());

        if let Some(user) = self.user {
            builder = builder.user(user);
        }

        if let Some(pass) = self.pass {
            builder = builder.pass(pass);
        }

        if let Some(db_name) = self.db_name {
            builder = builder.db_name(db_name);
        }

        *opts = Opts::from(builder);
    }

    /// Creates change user options that'll reuse connection options.
    pub fn new() -> Self {
        Self {
            user: None,
            pass: None,
            db_name: None,
        }
    }

    /// Set [`Opts::get_user`] to the given value.
    pub fn with_user(mut self, user: Option<String>) -> Self {
        self.user = Some(user);
        self
    }

    /// Set [`Opts::get_pass`] to the given value.
    pub fn with_pass(mut self, pass: Option<String>) -> Self {
        self.pass = Some(pass);
        self
    }

    /// Set [`Opts::get_db_name`] to the given value.
    pub fn with_db_name(mut self, db_name: Option<String>) -> Self {
        self.db_name = Some(db_name);
        self
    }

    /// Returns user.
    ///
    /// * if `None` then `self` does not meant to change user
    /// * if `Some(None)` then `self` will clear user
    /// * if `Some(Some(_))` then `self` will change user
    pub fn user(&self) -> Option<Option<&str>> {
        self.user.as_ref().map(|x| x.as_deref())
    }

    /// Returns password.
    ///
    /// * if `None` then `self` does not meant to change password
    /// * if `Some(None)` then `self` will clear password
    /// * if `Some(Some(_))` then `self` will change password
    pub fn pass(&self) -> Option<Option<&str>> {
        self.pass.as_ref().map(|x| x.as_deref())
    }

    /// Returns database name.
    ///
    /// * if `None` then `self` does not meant to change database name
    /// * if `Some(None)` then `self` will clear database name
    /// * if `Some(Some(_))` then `self` will change database name
    pub fn db_name(&self) -> Option<Option<&str>> {
        self.db_name.as_ref().map(|x| x.as_deref())
    }
}

impl Default for ChangeUserOpts {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ChangeUserOpts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChangeUserOpts")
            .field("user", &self.user)
            .field(
                "pass",
                &self.pass.as_ref().map(|x| x.as_ref().map(|_| "...")),
            )
            .field("db_name", &self.db_name)
            .finish()
    }
}

#[cfg(test)]
mod test {
    use mysql_common::proto::codec::Compression;
    use std::{path::Path, time::Duration};

    use super::{InnerOpts, Opts, OptsBuilder};

    #[allow(dead_code)]
    fn assert_conn_from_url_opts_optsbuilder(url: &str, opts: Opts, opts_builder: OptsBuilder) {
        crate::Conn::new(url).unwrap();
        crate::Conn::new(opts.clone()).unwrap();
        crate::Conn::new(opts_builder.clone()).unwrap();
        crate::Pool::new(url).unwrap();
        crate::Pool::new(opts).unwrap();
        crate::Pool::new(opts_builder).unwrap();
    }

    #[test]
    fn should_report_empty_url_database_as_none() {
        let opt = Opts::from_url("mysql://localhost/").unwrap();
        assert_eq!(opt.get_db_name(), None);
    }

    #[test]
    fn should_convert_url_into_opts() {
        #[cfg(any(target_os = "linux", target_os = "macos",))]
        let tcp_keepalive_probe_interval_secs = "&tcp_keepalive_probe_interval_secs=8";
        #[cfg(not(any(target_os = "linux", target_os = "macos",)))]
        let tcp_keepalive_probe_interval_secs = "";

        #[cfg(any(target_os = "linux", target_os = "macos",))]
        let tcp_keepalive_probe_count = "&tcp_keepalive_probe_count=5";
        #[cfg(not(any(target_os = "linux", target_os = "macos",)))]
        let tcp_keepalive_probe_count = "";

        #[cfg(target_os = "linux")]
        let tcp_user_timeout = "&tcp_user_timeout_ms=6000";
        #[cfg(not(target_os = "linux"))]
        let tcp_user_timeout = "";

        let opts = format!(
            "mysql://us%20r:p%20w@localhost:3308/db%2dname?prefer_socket=false&tcp_keepalive_time_ms=5000{}{}{}&socket=%2Ftmp%2Fmysql.sock&compress=8",
            tcp_keepalive_probe_interval_secs,
            tcp_keepalive_probe_count,
            tcp_user_timeout,
        );
        assert_eq!(
            Opts(Box::new(InnerOpts {
                user: Some("us r".to_string()),
                pass: Some("p w".to_string()),
                ip_or_hostname: url::Host::Domain("localhost".to_string()),
                tcp_port: 3308,
                db_name: Some("db-name".to_string()),
                prefer_socket: false,
                tcp_keepalive_time: Some(5000),
                #[cfg(any(target_os = "linux", target_os = "macos",))]
                tcp_keepalive_probe_interval_secs: Some(8),
                #[cfg(any(target_os = "linux", target_os = "macos",))]
                tcp_keepalive_probe_count: Some(5),
                #[cfg(target_os = "linux")]
                tcp_user_timeout: Some(6000),
                socket: Some("/tmp/mysql.sock".into()),
                compress: Some(Compression::new(8)),
                ..InnerOpts::default()
            })),
            Opts::from_url(&opts).unwrap(),
        );
    }

    #[test]
    #[should_panic]
    fn should_panic_on_invalid_url() {
        let opts = "42";
        Opts::from_url(opts).unwrap();
    }

    #[test]
    #[should_panic]
    fn should_panic_on_invalid_scheme() {
        let opts = "postgres://localhost";
        Opts::from_url(opts).unwrap();
    }

    #[test]
    #[should_panic]
    fn should_panic_on_unknown_query_param() {
        let opts = "mysql://localhost/foo?bar=baz";
        Opts::from_url(opts).unwrap();
    }

    #[test]
    fn should_read_hashmap_into_opts() {
        use crate::OptsBuilder;
        macro_rules!  map(
            { $($key:expr => $value:expr), + }=> {
                {
                    let mut h = std::collections::HashMap::new();
                    $(
                        h.insert($key, $value);
                    )+
                    h
                }
            };
        );

        #[allow(unused_mut)]
        let mut cnf_map = map! {
            "user".to_string() => "test".to_string(),
            "password".to_string() => "password".to_string(),
            "host".to_string() => "127.0.0.1".to_string(),
            "port".to_string() => "8080".to_string(),
            "db_name".to_string() => "test_db".to_string(),
            "prefer_socket".to_string() => "false".to_string(),
            "tcp_keepalive_time_ms".to_string() => "5000".to_string(),
            "compress".to_string() => "best".to_string(),
            "tcp_connect_timeout_ms".to_string() => "1000".to_string(),
            "stmt_cache_size".to_string() => "33".to_string(),
            "max_allowed_packet".to_string() => "65536".to_string()
        };
        #[cfg(any(target_os = "linux", target_os = "macos",))]
        cnf_map.insert(
            "tcp_keepalive_probe_interval_secs".to_string(),
            "8".to_string(),
        );
        #[cfg(any(target_os = "linux", target_os = "macos",))]
        cnf_map.insert("tcp_keepalive_probe_count".to_string(), "5".to_string());

        let parsed_opts = OptsBuilder::new().from_hash_map(&cnf_map).unwrap();

        assert_eq!(parsed_opts.opts.get_user(), Some("test"));
        assert_eq!(parsed_opts.opts.get_pass(), Some("password"));
        assert_eq!(parsed_opts.opts.get_ip_or_hostname(), "127.0.0.1");
        assert_eq!(parsed_opts.opts.get_tcp_port(), 8080);
        assert_eq!(parsed_opts.opts.get_db_name(), Some("test_db"));
        assert_eq!(parsed_opts.opts.get_max_allowed_packet(), Some(65536));
        assert!(!parsed_opts.opts.get_prefer_socket());
        assert_eq!(parsed_opts.opts.get_tcp_keepalive_time_ms(), Some(5000));
        #[cfg(any(target_os = "linux", target_os = "macos",))]
        assert_eq!(
            parsed_opts.opts.get_tcp_keepalive_probe_interval_secs(),
            Some(8)
        );
        #[cfg(any(target_os = "linux", target_os = "macos",))]
        assert_eq!(parsed_opts.opts.get_tcp_keepalive_probe_count(), Some(5));
        assert_eq!(
            parsed_opts.opts.get_compress(),
            Some(crate::Compression::best())
        );
        assert_eq!(
            parsed_opts.opts.get_tcp_connect_timeout(),
            Some(Duration::from_millis(1000))
        );
        assert_eq!(parsed_opts.opts.get_stmt_cache_size(), 33);
    }

    #[test]
    fn should_have_url_err() {
        use crate::OptsBuilder;
        use crate::UrlError;
        macro_rules!  map(
            { $($key:expr => $value:expr), + }=> {
                {
                    let mut h = std::collections::HashMap::new();
                    $(
                        h.insert($key, $value);
                    )+
                    h
                }
            };
        );

        let cnf_map = map! {
            "user".to_string() => "test".to_string(),
            "password".to_string() => "password".to_string(),
            "host".to_string() => "127.0.0.1".to_string(),
            "port".to_string() => "NOTAPORT".to_string(),
            "db_name".to_string() => "test_db".to_string(),
            "prefer_socket".to_string() => "false".to_string(),
            "tcp_keepalive_time_ms".to_string() => "5000".to_string(),
            "compress".to_string() => "best".to_string(),
            "tcp_connect_timeout_ms".to_string() => "1000".to_string(),
            "stmt_cache_size".to_string() => "33".to_string()
        };

        let parsed = OptsBuilder::new().from_hash_map(&cnf_map);
        assert_eq!(
            parsed,
            Err(UrlError::InvalidValue(
                "port".to_string(),
                "NOTAPORT".to_string()
            ))
        );
    }

    #[test]
    #[cfg(feature = "rustls")]
    fn cipher_suites_override() {
        let opt = Opts::from_url("mysql://localhost/?cipher_suites=TLS13_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256").unwrap();
        assert_eq!(
            opt.get_ssl_opts().and_then(|x| x.cipher_suites()),
            Some(
                &[
                    "TLS13_AES_128_GCM_SHA256".to_owned(),
                    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256".to_owned(),
                ][..]
            ),
        );
    }

    #[test]
    #[cfg(feature = "rustls")]
    fn cipher_suites_empty_list_emits_error() {
        use crate::UrlError;

        let err = Opts::from_url("mysql://localhost/?cipher_suites=").unwrap_err();
        assert_eq!(
            err,
            UrlError::InvalidValue("cipher_suites".to_owned(), String::default())
        );

        let err = Opts::from_url("mysql://localhost/?cipher_suites=,,").unwrap_err();
        assert_eq!(
            err,
            UrlError::InvalidValue("cipher_suites".to_owned(), ",,".to_owned())
        );
    }

    #[test]
    #[cfg(feature = "rustls")]
    fn cipher_suites_unsupported_suite_emits_error() {
        use crate::UrlError;

        let err = Opts::from_url(
            "mysql://localhost/?cipher_suites=TLS13_AES_128_GCM_SHA256,TLS_NULL_WITH_NULL_NULL",
        )
        .unwrap_err();
        assert_eq!(
            err,
            UrlError::InvalidValue(
                "cipher_suites".to_owned(),
                "TLS_NULL_WITH_NULL_NULL".to_owned()
            )
        );
    }

    #[test]
    #[cfg(feature = "rustls")]
    fn rustls_identity() {
        let opts =
            Opts::from_url("mysql://localhost/?cert_chain_path=foo&priv_key_path=bar").unwrap();
        assert_eq!(
            opts.get_ssl_opts().unwrap().client_identity(),
            Some(&super::ClientIdentity::new(
                Path::new("foo"),
                Path::new("bar")
            ))
        );
    }

    #[test]
    #[cfg(feature = "rustls")]
    fn rustls_identity_key_path_required() {
        use super::UrlError;

        let err = Opts::from_url("mysql://localhost/?cert_chain_path=foo").unwrap_err();
        assert_eq!(
            err,
            UrlError::InvalidValue("priv_key_path".to_owned(), "<MISSING>".to_owned()),
        );
    }

    #[test]
    #[cfg(feature = "rustls")]
    fn rustls_identity_chain_path_required() {
        use super::UrlError;

        let err = Opts::from_url("mysql://localhost/?priv_key_path=foo").unwrap_err();
        assert_eq!(
            err,
            UrlError::InvalidValue("cert_chain_path".to_owned(), "<MISSING>".to_owned()),
        );
    }

    #[test]
    #[cfg(feature = "native-tls")]
    fn pkcs12_path() {
        let opts = Opts::from_url("mysql://localhost/?pkcs12_path=foo").unwrap();
        assert_eq!(
            opts.get_ssl_opts().unwrap().client_identity(),
            Some(&super::ClientIdentity::new(Path::new("foo"))),
        );

        let opts = Opts::from_url("mysql://localhost/?pkcs12_path=foo&pkcs12_pass=bar").unwrap();
        assert_eq!(
            opts.get_ssl_opts().unwrap().client_identity(),
            Some(&super::ClientIdentity::new(Path::new("foo")).with_password("bar")),
        );

        let opts = Opts::from_url("mysql://localhost/?pkcs12_pass=bar").unwrap();
        assert!(opts.get_ssl_opts().is_none());
    }

    #[test]
    fn root_cert_path() {
        let opts = Opts::from_url("mysql://localhost/?root_cert_path=foo").unwrap();
        assert_eq!(
            opts.get_ssl_opts().unwrap().root_cert_path(),
            Some(Path::new("foo"))
        );
    }

    #[test]
    fn danger_skip_domain_validation() {
        let opts = Opts::from_url("mysql://localhost/?danger_skip_domain_validation=true").unwrap();
        assert!(opts.get_ssl_opts().unwrap().skip_domain_validation());
        let opts =
            Opts::from_url("mysql://localhost/?danger_skip_domain_validation=false").unwrap();
        assert!(!opts.get_ssl_opts().unwrap().skip_domain_validation());
    }

    #[test]
    fn danger_skip_domain_validation_invalid_value() {
        let err =
            Opts::from_url("mysql://localhost/?danger_skip_domain_validation=funny_third_option")
                .unwrap_err();
        assert_eq!(
            err,
            super::UrlError::InvalidValue(
                "danger_skip_domain_validation".to_owned(),
                "funny_third_option".to_owned()
            )
        );
    }

    #[test]
    fn danger_accept_invalid_certs() {
        let opts = Opts::from_url("mysql://localhost/?danger_accept_invalid_certs=true").unwrap();
        assert!(opts.get_ssl_opts().unwrap().accept_invalid_certs());
        let opts = Opts::from_url("mysql://localhost/?danger_accept_invalid_certs=false").unwrap();
        assert!(!opts.get_ssl_opts().unwrap().accept_invalid_certs());
    }

    #[test]
    fn danger_accept_invalid_certs_invalid_value() {
        let err =
            Opts::from_url("mysql://localhost/?danger_accept_invalid_certs=funny_third_option")
                .unwrap_err();
        assert_eq!(
            err,
            super::UrlError::InvalidValue(
                "danger_accept_invalid_certs".to_owned(),
                "funny_third_option".to_owned()
            )
        );
    }
}
