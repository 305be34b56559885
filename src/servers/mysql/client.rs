//! Connections to a MySQL-family server at an endpoint: async (control connections, slap)
//! and blocking (the oltp clients, one OS thread each, as sysbench's).

use anyhow::{Context, Result};

use crate::servers::Endpoint;

/// The MySQL family's ways to connect to an `Endpoint`.
pub trait MysqlClient {
    fn opts(&self, db: Option<&str>) -> mysql_async::Opts;
    /// The same account through the server's unix socket at `socket` (host `localhost`).
    fn socket_opts(&self, socket: &str, db: Option<&str>) -> mysql_async::Opts;
    fn blocking_opts(&self, db: Option<&str>) -> mysql::OptsBuilder;
    fn connect(
        &self,
        db: Option<&str>,
    ) -> impl std::future::Future<Output = Result<mysql_async::Conn>>;
}

impl MysqlClient for Endpoint {
    fn opts(&self, db: Option<&str>) -> mysql_async::Opts {
        mysql_async::OptsBuilder::default()
            .ip_or_hostname(self.host.clone())
            .tcp_port(self.port)
            .user(Some(self.user.clone()))
            .pass(Some(self.password.clone()))
            .db_name(db.map(str::to_string))
            // Never switch to a unix socket: a socket on this host may belong to another server.
            .prefer_socket(false)
            .into()
    }

    fn socket_opts(&self, socket: &str, db: Option<&str>) -> mysql_async::Opts {
        mysql_async::OptsBuilder::from_opts(self.opts(db))
            .socket(Some(socket))
            .into()
    }

    /// The same connection for the blocking client (one OS thread per connection, as
    /// sysbench's), whose per-statement cost is what load generation needs.
    fn blocking_opts(&self, db: Option<&str>) -> mysql::OptsBuilder {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some(self.host.clone()))
            .tcp_port(self.port)
            .user(Some(self.user.clone()))
            .pass(Some(self.password.clone()))
            .db_name(db)
            .prefer_socket(false)
    }

    async fn connect(&self, db: Option<&str>) -> Result<mysql_async::Conn> {
        mysql_async::Conn::new(self.opts(db))
            .await
            .with_context(|| format!("failed to connect to {self:?}"))
    }
}
