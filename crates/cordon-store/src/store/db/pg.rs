//! The PostgreSQL side of [`super::Conn`]: connecting under a deadline, each round trip
//! under the answer deadline on the connection's own current-thread runtime, errors as
//! store errors, and rows read into [`super::Row`].

use super::*;

/// Whether a PostgreSQL error means the connection is gone (not a refused statement).
fn lost(e: &tokio_postgres::Error) -> bool {
    match e.code() {
        None => true,
        Some(code) => {
            let c = code.code();
            c.starts_with("08") || c.starts_with("57P")
        }
    }
}

/// A PostgreSQL error as a store error naming `at` (the URL; never a password).
pub(super) fn pg_error(at: &Path, e: &tokio_postgres::Error) -> StoreError {
    use tokio_postgres::error::SqlState;
    let why = e
        .as_db_error()
        .map_or_else(|| e.to_string(), |d| d.message().to_string());
    if let Some(why) = crate::at::tls_failure(e) {
        return StoreError::new(at, StoreErrorKind::Tls(why));
    }
    // The driver's own refusal of the configuration (a password the server asked for and
    // none was given, more ports than hosts): no server is involved, and retrying or
    // checking the server would not help.
    if e.code().is_none() && why.starts_with("invalid configuration") {
        return StoreError::new(
            at,
            StoreErrorKind::Invalid(format!(
                "{why}; check `[store] url` and its password (`password_file` or `password_env`)"
            )),
        );
    }
    let kind = match e.code() {
        Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE || *c == SqlState::QUERY_CANCELED => {
            StoreErrorKind::Locked
        }
        Some(c) if *c == SqlState::DISK_FULL => StoreErrorKind::Full,
        // A role's missing grant (see pg_roles.sql): the server refused one statement.
        Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => StoreErrorKind::NotPermitted(why),
        Some(c)
            if *c == SqlState::INVALID_PASSWORD
                || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION =>
        {
            StoreErrorKind::Permissions(why)
        }
        _ if lost(e) => StoreErrorKind::Unavailable(why),
        _ => StoreErrorKind::Io(why),
    };
    StoreError::new(at, kind)
}

/// An open connection: the tokio-postgres client and the runtime that drives its socket.
/// Dropping it closes the socket.
pub(crate) struct PgClient {
    client: tokio_postgres::Client,
    runtime: tokio::runtime::Runtime,
}

impl PgClient {
    /// Run one round trip within `limit`; `Err(None)` when the deadline passed first.
    fn run<T>(
        &self,
        limit: Duration,
        f: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, Option<tokio_postgres::Error>> {
        // The timer is made inside the runtime: it needs the runtime's clock.
        match self
            .runtime
            .block_on(async { tokio::time::timeout(limit, f).await })
        {
            Ok(r) => r.map_err(Some),
            Err(_) => Err(None),
        }
    }
}

/// The async client's configuration for `target` (the same fields the URL and the
/// password file can set).
fn async_config(c: &postgres::Config) -> tokio_postgres::Config {
    use postgres::config::Host;
    let mut t = tokio_postgres::Config::new();
    if let Some(v) = c.get_user() {
        t.user(v);
    }
    if let Some(v) = c.get_password() {
        t.password(v);
    }
    if let Some(v) = c.get_dbname() {
        t.dbname(v);
    }
    if let Some(v) = c.get_options() {
        t.options(v);
    }
    if let Some(v) = c.get_application_name() {
        t.application_name(v);
    }
    for h in c.get_hosts() {
        match h {
            Host::Tcp(name) => t.host(name),
            Host::Unix(dir) => t.host_path(dir),
        };
    }
    for a in c.get_hostaddrs() {
        t.hostaddr(*a);
    }
    for p in c.get_ports() {
        t.port(*p);
    }
    if let Some(v) = c.get_tcp_user_timeout() {
        t.tcp_user_timeout(*v);
    }
    if let Some(v) = c.get_keepalives_interval() {
        t.keepalives_interval(v);
    }
    if let Some(v) = c.get_keepalives_retries() {
        t.keepalives_retries(v);
    }
    t.ssl_mode(c.get_ssl_mode())
        .ssl_negotiation(c.get_ssl_negotiation())
        .target_session_attrs(c.get_target_session_attrs())
        .channel_binding(c.get_channel_binding())
        .load_balance_hosts(c.get_load_balance_hosts());
    t
}

/// A store error naming `at`: the server gave no answer within `limit`.
fn no_answer(at: &Path, what: &str, limit: Duration) -> StoreError {
    StoreError::new(
        at,
        StoreErrorKind::Unavailable(format!(
            "the server did not answer {what} within {} ms; the connection was dropped",
            limit.as_millis()
        )),
    )
}

/// One connection attempt; the connection is driven by a task of the current runtime.
async fn open<T>(
    config: &tokio_postgres::Config,
    tls: T,
) -> Result<tokio_postgres::Client, tokio_postgres::Error>
where
    T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>,
    T::Stream: Send + 'static,
{
    let (client, connection) = config.connect(tls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// Connect within [`CONNECT_BUDGET`] in all (socket, startup and login included),
/// retrying with doubling pauses; the last error when every attempt failed.
pub(crate) fn connect(target: &PgTarget, lock_timeout: Duration) -> Result<PgClient, StoreError> {
    let at = PathBuf::from(target.url());
    let start = Instant::now();
    let mut pause = CONNECT_BACKOFF;
    let mut config = async_config(&target.config);
    // The session's timeouts and its search path travel in the startup packet: no round
    // trip of their own. The search path comes last, so a URL's own `options` cannot
    // widen it (see [`SEARCH_PATH`]).
    let options = format!(
        "{} -c lock_timeout={} -c statement_timeout={} -c idle_in_transaction_session_timeout=60000 -c search_path={SEARCH_PATH}",
        target.config.get_options().unwrap_or_default(),
        lock_timeout.as_millis().max(1),
        lock_timeout.saturating_add(STATEMENT_SLACK).as_millis()
    );
    config
        .options(options.trim_start())
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(30));
    loop {
        let left = CONNECT_BUDGET.saturating_sub(start.elapsed());
        let limit = left.min(Duration::from_secs(1));
        config.connect_timeout(limit.max(Duration::from_millis(1)));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                StoreError::new(
                    &at,
                    StoreErrorKind::Io(format!("the connection's runtime could not start ({e})")),
                )
            })?;
        // The connection is driven whenever a round trip blocks on this runtime, and
        // dropped with it. With TLS the mode is `require` (set by `PgTarget`): a server
        // that declines TLS is refused, never talked to in plaintext.
        let attempt = runtime.block_on(async {
            tokio::time::timeout(limit, async {
                match &target.tls {
                    Some(tls) => {
                        let tls = rustls::ClientConfig::clone(&tls.config);
                        open(&config, tokio_postgres_rustls::MakeRustlsConnect::new(tls)).await
                    }
                    None => open(&config, tokio_postgres::NoTls).await,
                }
            })
            .await
        });
        let err = match attempt {
            Ok(Ok(client)) => return Ok(PgClient { client, runtime }),
            Ok(Err(e)) => pg_error(&at, &e),
            Err(_) => no_answer(&at, "a login", CONNECT_BUDGET),
        };
        // A refusal by the server (a password, a missing database) does not get better.
        let retry = matches!(err.kind(), StoreErrorKind::Unavailable(_));
        if !retry || start.elapsed() + pause >= CONNECT_BUDGET {
            return Err(err);
        }
        std::thread::sleep(pause);
        pause = pause.saturating_mul(2);
    }
}

impl PgConn {
    pub(crate) fn new(client: PgClient, target: PgTarget, lock_timeout: Duration) -> Self {
        PgConn {
            client: Some(client),
            target,
            statements: HashMap::new(),
            in_tx: false,
            broken: false,
            lock_timeout,
        }
    }

    pub(crate) fn healthy(&self) -> bool {
        !self.broken && self.client.as_ref().is_some_and(|c| !c.client.is_closed())
    }

    /// The client, reconnecting first when the connection broke (never inside a
    /// transaction: that one is lost, and its caller gets the error).
    fn client(&mut self) -> Result<&PgClient, StoreError> {
        if !self.healthy() {
            if self.in_tx {
                return Err(StoreError::new(
                    Path::new(self.target.url()),
                    StoreErrorKind::Unavailable("the connection was lost in a transaction".into()),
                ));
            }
            self.client = None;
            self.statements.clear();
            self.client = Some(connect(&self.target, self.lock_timeout)?);
            self.broken = false;
        }
        match self.client.as_ref() {
            Some(c) => Ok(c),
            None => Err(StoreError::new(
                Path::new(self.target.url()),
                StoreErrorKind::Unavailable("no connection".into()),
            )),
        }
    }

    /// The error of a failed round trip; a lost connection, or one whose deadline passed
    /// (its state on the server unknown), is dropped and reconnected before the next use.
    fn fail(&mut self, e: Option<tokio_postgres::Error>, what: &str) -> StoreError {
        let at = Path::new(self.target.url());
        match e {
            Some(e) => {
                if lost(&e) {
                    self.broken = true;
                }
                pg_error(at, &e)
            }
            None => {
                self.broken = true;
                self.client = None;
                self.statements.clear();
                no_answer(at, what, answer_deadline(self.lock_timeout))
            }
        }
    }

    fn statement(&mut self, sql: &'static str) -> Result<tokio_postgres::Statement, StoreError> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let limit = answer_deadline(self.lock_timeout);
        let sql_pg = dollars(sql);
        let c = self.client()?;
        let prepared = c.run(limit, c.client.prepare(&sql_pg));
        let st = prepared.map_err(|e| self.fail(e, "a statement's preparation"))?;
        self.statements.insert(sql, st.clone());
        Ok(st)
    }

    pub(super) fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        let limit = answer_deadline(self.lock_timeout);
        let c = self.client()?;
        let r = c.run(limit, c.client.batch_execute(sql));
        r.map_err(|e| self.fail(e, "a statement"))
    }

    pub(super) fn rows(
        &mut self,
        sql: &'static str,
        args: &[Val],
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        let st = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as _).collect();
        let limit = answer_deadline(self.lock_timeout);
        let c = self.client()?;
        let r = c.run(limit, c.client.query(&st, &params));
        r.map_err(|e| self.fail(e, "a query"))
    }

    pub(super) fn exec(&mut self, sql: &'static str, args: &[Val]) -> Result<u64, StoreError> {
        let st = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as _).collect();
        let limit = answer_deadline(self.lock_timeout);
        let c = self.client()?;
        let r = c.run(limit, c.client.execute(&st, &params));
        r.map_err(|e| self.fail(e, "a statement"))
    }
}

pub(super) fn pg_row(r: &tokio_postgres::Row, at: &Rc<PathBuf>) -> Result<Row, StoreError> {
    let mut vals = Vec::with_capacity(r.len());
    for (i, col) in r.columns().iter().enumerate() {
        let v = match *col.type_() {
            Type::INT8 => r.try_get::<_, Option<i64>>(i).map(Val::from),
            Type::INT4 => r
                .try_get::<_, Option<i32>>(i)
                .map(|v| Val::from(v.map(i64::from))),
            Type::INT2 => r
                .try_get::<_, Option<i16>>(i)
                .map(|v| Val::from(v.map(i64::from))),
            Type::BOOL => r.try_get::<_, Option<bool>>(i).map(Val::from),
            _ => r.try_get::<_, Option<String>>(i).map(Val::from),
        };
        vals.push(v.map_err(|e| {
            StoreError::new(
                at,
                StoreErrorKind::Corrupt(format!("column {} could not be read ({e})", col.name())),
            )
        })?);
    }
    Ok(Row {
        vals,
        at: at.clone(),
    })
}
