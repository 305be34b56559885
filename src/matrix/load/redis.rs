//! Validation of Redis-family servers and workloads: each is reported at its position in the
//! file before any container starts.

use super::Validator;
use crate::matrix::model::{ServerKind, WorkloadSpec};
use crate::matrix::{Length, MatrixError};
use crate::workloads::redis::spec::{KeyDistribution, RedisTest};

impl Validator<'_> {
    pub(super) fn check_redis(&self) -> Result<(), MatrixError> {
        let m = self.m;
        for (name, w) in &m.workloads {
            let path = format!("workloads.{name}");
            match w {
                WorkloadSpec::Redis(s) => {
                    let at = |field: &str| format!("{path}.redis.{field}");
                    if s.pipeline == 0 {
                        return Err(self.err(&at("pipeline"), "pipeline must be at least 1".into()));
                    }
                    if s.keyspace == Some(0) {
                        return Err(self.err(&at("keyspace"), "keyspace must be at least 1".into()));
                    }
                    if s.distribution != KeyDistribution::Uniform && s.keyspace.is_none() {
                        return Err(self.err(
                            &at("distribution"),
                            "a key distribution needs a `keyspace` (without one every request \
                             uses the same key, as redis-benchmark without -r)"
                                .into(),
                        ));
                    }
                    if s.ratio.is_some() && s.test != RedisTest::Mixed {
                        return Err(
                            self.err(&at("ratio"), "`ratio` applies to `test: mixed` only".into())
                        );
                    }
                }
                WorkloadSpec::RedisBenchmark(s) => {
                    let at = |field: &str| format!("{path}.redis_benchmark.{field}");
                    if s.test == RedisTest::Mixed {
                        return Err(self.err(
                            &at("test"),
                            "redis-benchmark has no mixed test: use a `redis` workload".into(),
                        ));
                    }
                    if s.pipeline == 0 {
                        return Err(self.err(&at("pipeline"), "pipeline must be at least 1".into()));
                    }
                    if s.keyspace == Some(0) {
                        return Err(self.err(&at("keyspace"), "keyspace must be at least 1".into()));
                    }
                    if s.requests.is_none() && matches!(m.length, Length::Time(_)) {
                        return Err(self.err(
                            &format!("{path}.redis_benchmark"),
                            "redis-benchmark cannot run for a duration: give `requests` \
                             (its -n) when `length` is a duration"
                                .into(),
                        ));
                    }
                    if s.requests == Some(0) {
                        return Err(self.err(&at("requests"), "requests must be at least 1".into()));
                    }
                }
                _ => {}
            }
        }
        self.check_kinds()
    }

    /// A Redis workload against a MySQL server (or the other way round) is a mistake unless
    /// an exclude rule removes the pair.
    fn check_kinds(&self) -> Result<(), MatrixError> {
        let m = self.m;
        for d in &crate::matrix::expand(m, &[]).deployments {
            let kind = m.servers[&d.server].kind();
            for c in &d.cells {
                let w = &m.workloads[&c.workload];
                let wants = match w {
                    WorkloadSpec::Redis(_) | WorkloadSpec::RedisBenchmark(_) => ServerKind::Redis,
                    _ => ServerKind::Mysql,
                };
                if wants != kind {
                    let server_kind = match kind {
                        ServerKind::Mysql => "mysql",
                        ServerKind::Redis => "redis",
                    };
                    return Err(self.err_at(
                        self.spans.key(&format!("workloads.{}", c.workload)),
                        format!(
                            "workload `{}` ({}) cannot run against server `{}` ({server_kind}): \
                             add `{{server: {}, workload: {}}}` to `exclude`, or set the \
                             server's `kind` when it is not inferred from its image name",
                            c.workload,
                            w.kind(),
                            d.server,
                            d.server,
                            c.workload
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
