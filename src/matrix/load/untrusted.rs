//! Names and values that reach a config file, SQL or a container's settings: each checked
//! by `input::untrusted` and refused at its place in the file.

use super::MatrixError;
use super::Validator;

impl Validator<'_> {
    /// The matrix's names, description and parameters, first: every later message may quote
    /// them.
    pub(super) fn check_names(&self) -> Result<(), MatrixError> {
        use crate::input::untrusted::{description, name};
        let m = self.m;
        if let Some(n) = &m.name {
            name("matrix", n).map_err(|msg| self.err("name", msg))?;
        }
        if let Some(d) = &m.description {
            description(d).map_err(|msg| self.err("description", msg))?;
        }
        // Checked before substitution too; again here for a run's copy, which is not.
        crate::input::params::check(&m.params, self.spans)
            .map_err(|(pos, msg)| self.err_at(pos, msg))?;
        for (what, section, keys) in [
            ("server", "servers", m.servers.keys().collect::<Vec<_>>()),
            ("config", "configs", m.configs.keys().collect()),
            ("workload", "workloads", m.workloads.keys().collect()),
        ] {
            for k in keys {
                name(what, k)
                    .map_err(|msg| self.err_at(self.spans.key(&format!("{section}.{k}")), msg))?;
            }
        }
        Ok(())
    }

    /// Names and values that are written into config files and SQL (see `untrusted`).
    pub(super) fn check_untrusted(&self) -> Result<(), MatrixError> {
        use crate::input::untrusted::{
            config_value, cpus, cpuset, env_name, image_reference, memory, password_env,
            sql_identifier,
        };
        let m = self.m;
        for (server, s) in &m.servers {
            if let Some(var) = s.external.as_ref().and_then(|e| e.password_env.as_ref()) {
                let path = format!("servers.{server}.external.password_env");
                password_env(var).map_err(|msg| self.err(&path, msg))?;
            }
            if let Some(image) = &s.image {
                image_reference(image)
                    .map_err(|msg| self.err(&format!("servers.{server}.image"), msg))?;
            }
            // Limits of a container rmatrix starts: an external server has none to set.
            let limits = [
                (
                    "cpuset",
                    s.cpuset.as_ref().map(|c| cpuset(c)),
                    "pin it to CPUs",
                ),
                ("cpus", s.cpus.map(cpus), "limit its CPU"),
                (
                    "memory",
                    s.memory.as_ref().map(|t| memory(t).map(|_| ())),
                    "limit its memory",
                ),
            ];
            for (key, checked, what) in limits {
                let Some(checked) = checked else { continue };
                let path = format!("servers.{server}.{key}");
                checked.map_err(|msg| self.err(&path, msg))?;
                if s.external.is_some() {
                    return Err(self.err(
                        &path,
                        format!(
                            "an external server runs where its owner put it: rmatrix cannot \
                             {what}; remove `{key}`"
                        ),
                    ));
                }
            }
        }
        if let Some(list) = &m.client_cpuset {
            cpuset(list).map_err(|msg| self.err("client_cpuset", msg))?;
        }
        for (i, e) in m.engines.iter().enumerate() {
            sql_identifier("engine", e).map_err(|msg| self.err(&format!("engines[{i}]"), msg))?;
        }
        for (name, c) in &m.configs {
            for block in crate::servers::config::config_blocks() {
                for (key, value) in c.settings(block.key) {
                    let path = format!("configs.{name}.{}.{key}", block.key);
                    (block.check_key)(key)
                        .map_err(|msg| self.err_at(self.spans.key(&path), msg))?;
                    if let Some(v) = value {
                        config_value(key, &v.0).map_err(|msg| self.err(&path, msg))?;
                    }
                }
            }
            for (key, value) in &c.env {
                let path = format!("configs.{name}.env.{key}");
                env_name(key).map_err(|msg| self.err_at(self.spans.key(&path), msg))?;
                config_value(key, value).map_err(|msg| self.err(&path, msg))?;
            }
        }
        Ok(())
    }
}
