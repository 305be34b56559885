//! What a benchmark client of this crate asks of an SQL family, in terms every such family
//! shares: a blocking client connection (`SqlClient`, one per client thread, as sysbench's
//! drivers make them), the tables made and loaded in its dialect with the id sequence kept
//! beside them (`SqlTables`), and the family's part in an iteration (`SqlFamily`): the
//! counters read so that they count the measured phase's statements only; and its part in
//! an external SQL tool's run (`SqlTool`). Each family answers in its own folder (`sql.rs`,
//! `sql_tables.rs`, `sql_client.rs`, `sql_tool.rs`); `ServerKind::with_sql` hands a caller
//! the family of a kind, and a family of another language answers None there.

use std::future::Future;
use std::pin::Pin;

use anyhow::Result;

use super::Endpoint;
use crate::measure::counters::Status;

/// How a statement failed, as sysbench's drivers see it.
pub(crate) enum Failure {
    /// An error sysbench ignores (a deadlock...): the event is restarted and counted.
    Ignored,
    /// The connection is gone: reconnect, re-prepare, restart the event.
    Lost,
    /// Anything else: the client stops.
    Fatal,
}

/// A statement's parameter, as the statement texts use them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Param {
    UInt(u64),
    Text(String),
    /// A DECIMAL of two places, in hundredths (money: exact on every family).
    Fixed(i64),
}

impl From<u32> for Param {
    fn from(v: u32) -> Param {
        Param::UInt(v.into())
    }
}

impl From<u64> for Param {
    fn from(v: u64) -> Param {
        Param::UInt(v)
    }
}

impl From<String> for Param {
    fn from(v: String) -> Param {
        Param::Text(v)
    }
}

/// How an INSERT lets the server number an auto-increment id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AutoId {
    /// `id` given as 0 (AUTO_INCREMENT).
    Zero,
    /// `id` left out (SERIAL), as sysbench's `oltp_insert.lua` does where the id is a serial.
    Omitted,
}

/// A decimal of `scale` places written from its integer in units of the last place
/// (`decimal(-1050, 2)` is `-10.50`).
pub(crate) fn decimal(units: i64, scale: u32) -> String {
    let p = 10u64.pow(scale);
    let sign = if units < 0 { "-" } else { "" };
    let a = units.unsigned_abs();
    format!("{sign}{}.{:0w$}", a / p, a % p, w = scale as usize)
}

/// A column's value as a client reads it back: integers as integers, DECIMALs and strings as
/// text (exact whatever the family's binary form), anything else (a timestamp) not decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
    Other,
}

/// A read's rows.
pub(crate) type Rows = Vec<Vec<Cell>>;

/// A statement's result: whether it returned rows (a read), and the rows it changed.
pub(crate) type Outcome = Result<(bool, u64), (Failure, String)>;

/// One blocking client connection of a family.
pub(crate) trait SqlClient: Sized + Send + 'static {
    /// A statement prepared on the server.
    type Statement: Send + 'static;
    /// How an INSERT of the family's dialect lets the server number an id.
    const AUTO_ID: AutoId;

    /// Connect to `db`; `statements` is how many the client will prepare.
    fn open(endpoint: &Endpoint, db: &str, statements: usize) -> Result<Self>;
    /// Prepare `sql` (`?` placeholders) on the server.
    fn prepare(&mut self, sql: &str) -> Result<Self::Statement>;
    fn begin(&mut self) -> Outcome;
    fn commit(&mut self) -> Outcome;
    fn rollback(&mut self) -> Outcome;
    /// A statement sent as text.
    fn text(&mut self, sql: &str) -> Outcome;
    fn exec(&mut self, statement: &Self::Statement, params: Vec<Param>) -> Outcome;
    /// A prepared read, with its rows.
    fn rows(
        &mut self,
        statement: &Self::Statement,
        params: Vec<Param>,
    ) -> Result<Rows, (Failure, String)>;
    /// After an ignored error, before the event restarts (end an aborted transaction).
    fn recover(&mut self) -> Result<(), (Failure, String)>;
    /// The server's id of the connection, where the family waits for a closed one by it.
    fn id(&self) -> Option<u32>;
}

/// What the tables to load look like, beyond their statements.
pub(crate) struct Tables<'a> {
    pub(crate) db: &'a str,
    pub(crate) count: u32,
    /// Rows each table starts with.
    pub(crate) rows: u32,
    pub(crate) auto_inc: bool,
    /// `id` a plain key rather than the primary key.
    pub(crate) secondary: bool,
    pub(crate) create_secondary: bool,
    /// The storage engine, in a family that has them.
    pub(crate) engine: Option<&'a str>,
}

/// Sysbench's tables in a family's dialect: made, loaded in its bulk form, keyed, and the
/// marker and id sequence kept beside them.
pub(crate) trait SqlTables {
    /// An async connection: loading, and the driver's own statements.
    type Conn: Send;

    /// The storage engine a family that has them uses: `chosen`, else `default`.
    fn engine<'a>(chosen: Option<&'a str>, default: &'a str) -> Option<&'a str>;

    /// The type of a date-and-time column that changes only when written (a MySQL
    /// TIMESTAMP column may update itself).
    const DATETIME: &'static str;
    /// What follows a CREATE TABLE's column list: the storage engine, where the family has
    /// them (`engine` from `engine()`).
    fn table_options(engine: Option<&str>) -> String;

    /// A connection to `db`, created when missing.
    fn open_db(endpoint: &Endpoint, db: &str) -> impl Future<Output = Result<Self::Conn>> + Send;
    fn connect(endpoint: &Endpoint, db: &str) -> impl Future<Output = Result<Self::Conn>> + Send;
    /// Close a connection so that it leaves nothing to count in a later phase.
    fn close(conn: Self::Conn) -> impl Future<Output = ()> + Send;
    /// The marker table's one text, when the last of the tables exists.
    fn marker(
        conn: &mut Self::Conn,
        marker: &str,
        last: &str,
    ) -> impl Future<Output = Option<String>> + Send;
    /// Drop `marker` and every table, and create the tables afresh.
    fn create_tables(
        conn: &mut Self::Conn,
        tables: &Tables<'_>,
        marker: &str,
    ) -> impl Future<Output = Result<()>> + Send;
    /// Rows into table `n`, a chunk of ids `(first, last)` at a time: `rows` makes a chunk's
    /// rows, and `sent` is told of each chunk once the server has it.
    fn load(
        conn: &mut Self::Conn,
        n: u32,
        chunks: &[(u32, u32)],
        rows: &mut (dyn FnMut(u32, u32) -> Vec<Row> + Send),
        sent: &(dyn Fn() + Sync),
    ) -> impl Future<Output = Result<()>> + Send;
    /// What table `n` gets once loaded (keys, sequences), each statement on its own.
    fn after_load(tables: &Tables<'_>, n: u32) -> Vec<String>;
    fn execute(conn: &mut Self::Conn, sql: &str) -> impl Future<Output = Result<()>> + Send;
    /// `CREATE TABLE marker` holding `text`.
    fn remember(
        conn: &mut Self::Conn,
        marker: &str,
        text: &str,
    ) -> impl Future<Output = Result<()>> + Send;

    /// A new id sequence in table `seq`: `offset`, and index 0 next.
    fn start_ids(
        conn: &mut Self::Conn,
        seq: &str,
        offset: u32,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// A family's part in the run of an external SQL tool (a benchmark binary with drivers of
/// its own, such as sysbench's), in this order: `watch` before the tool's warm-up ->
/// `before_run` -> the measured run -> `after_run` once the tool has exited -> `unwatch` ->
/// `run_measured`. The database and the marker of what the tool loaded are `SqlTables`'.
pub(crate) trait SqlTool: SqlTables {
    /// The name the tool's drivers give the family (sysbench's `--db-driver`, and the prefix
    /// of its connection options: `mysql`, `pgsql`); None: the tool cannot speak to it.
    const TOOL_DRIVER: Option<&'static str>;
    /// What the counters are read on around the run.
    type Watch: Send;

    /// Before the tool's warm-up.
    fn watch(endpoint: &Endpoint) -> impl Future<Output = Result<Self::Watch>> + Send;
    /// The counters just before the measured run, whatever ran before it (the load, the
    /// warm-up) counted.
    fn before_run(
        watch: &mut Self::Watch,
        endpoint: &Endpoint,
        db: &str,
    ) -> impl Future<Output = Result<Status>> + Send;
    /// The counters once the tool has exited, its statements counted.
    fn after_run(watch: &mut Self::Watch) -> impl Future<Output = Result<Status>> + Send;
    fn unwatch(watch: Self::Watch) -> impl Future<Output = ()> + Send;
    /// The run's counters from the reads around it (`reads`: those of the per-second
    /// counters between them).
    fn run_measured(before: &Status, after: &Status, reads: u64) -> Status;
    /// `CREATE TABLE marker` holding `text`, of any length.
    fn mark(
        conn: &mut Self::Conn,
        marker: &str,
        text: &str,
    ) -> impl Future<Output = Result<()>> + Send;
}

/// A family's part in a benchmark iteration. The calls come in this order, each rule one of
/// exact counters: `settle` (before the clients connect) -> `control` (once they have) ->
/// [`warmed_up`] -> `flush` and `before` around nothing but the measured phase -> the
/// clients closed first when `COUNTED_AT_EXIT` -> `after` -> `keep` -> `measured` ->
/// `close_control` (the clients dropped).
pub(crate) trait SqlFamily: SqlTool + 'static {
    type Client: SqlClient;
    /// What `settle` leaves for `control`.
    type Settled: Send;
    /// The connection the counters are read on.
    type Control: Send;
    /// What `flush` leaves for `before`.
    type Flushed: Send + 'static;
    /// A client's statements reach the counters only when it exits: close the clients
    /// before the counters after the phase are read.
    const COUNTED_AT_EXIT: bool;

    /// Before the clients connect: `seq`'s (offset, next index) when there is one.
    fn settle(
        endpoint: &Endpoint,
        db: &str,
        seq: Option<&str>,
    ) -> impl Future<Output = Result<Self::Settled>> + Send;
    /// The clients (`clients`: their ids) connected: the control connection, and `seq`'s
    /// (offset, next index) when asked.
    fn control(
        settled: Self::Settled,
        endpoint: &Endpoint,
        db: &str,
        clients: &[u32],
        seq: Option<&str>,
    ) -> impl Future<Output = Result<(Self::Control, Option<Kept>)>> + Send;
    /// After the warm-up: `next` kept in `seq` where the family keeps it there.
    fn warmed_up(
        control: &mut Self::Control,
        seq: Option<&str>,
        next: u32,
    ) -> impl Future<Output = Result<()>> + Send;
    /// On the clients' thread, before the counters are read: their statistics sent.
    fn flush(clients: Vec<&mut Self::Client>) -> Result<Self::Flushed>;
    fn before(
        control: &mut Self::Control,
        flushed: Self::Flushed,
    ) -> impl Future<Output = Result<Status>> + Send;
    fn after(control: &mut Self::Control) -> impl Future<Output = Result<Status>> + Send;
    /// `next` kept in `seq`, for the next phase, iteration or cell.
    fn keep(
        control: &mut Self::Control,
        endpoint: &Endpoint,
        db: &str,
        seq: &str,
        next: u32,
    ) -> impl Future<Output = Result<()>> + Send;
    /// The measured phase's counters from the reads around it (`reads`: those of the
    /// per-second counters between them).
    fn measured(before: &Status, after: &Status, reads: u64) -> Status;
    /// The transactions the server counted in a measured phase's counters, committed and
    /// rolled back (HammerDB's TPM), where it counts them.
    fn transactions(measured: &Status) -> Option<u64>;
    /// The clients (`clients`: their ids) dropped: wait until the server let them go.
    fn close_control(control: Self::Control, clients: &[u32]) -> impl Future<Output = ()> + Send;
}

/// An id sequence as kept beside the tables: its offset, and the next index to take.
pub(crate) type Kept = (u32, u32);

/// One row to load: id, k, c, pad.
pub(crate) type Row = (u32, u32, String, String);

/// What to do with a kind's family, known at compile time (`ServerKind::with_sql`).
pub(crate) trait WithSql {
    type Output;
    fn with<F: SqlFamily>(self) -> Self::Output;
}

/// A family's future, boxed to be one type whatever the family.
pub(crate) type FamilyFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
