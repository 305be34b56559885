//! `thread_handling: pool-of-threads` on a server whose image or build names Oracle MySQL
//! (which has no thread pool: its server would refuse to start) is a mistake the matrix
//! check reports, unless an exclude rule removes the pair.

use super::flavor::Flavor;
use super::MYCNF;
use crate::servers::family::Refusal;
use crate::servers::spec::{ServerSpec, Settings};

/// The refusal of `settings` (the config's my.cnf block) on `spec`, named as the matrix
/// names them.
pub(crate) fn refuses(
    server: &str,
    spec: &ServerSpec,
    config: &str,
    settings: &Settings,
) -> Option<Refusal> {
    let flavor = Flavor::of_spec(spec)?;
    if flavor.has_thread_pool() {
        return None;
    }
    let (key, _) = settings.iter().find(|(k, v)| {
        let k = k.trim().to_lowercase().replace('-', "_");
        k.strip_prefix("loose_").unwrap_or(&k) == "thread_handling"
            && v.as_ref()
                .is_some_and(|v| v.0.trim().to_lowercase().replace('_', "-") == "pool-of-threads")
    })?;
    Some(Refusal {
        at: format!("{}.{key}", MYCNF.key),
        message: format!(
            "config `{config}` sets `thread_handling: pool-of-threads`, but server `{server}` is \
             {} (from its {}), which has no thread pool: MariaDB and Percona Server have one; \
             use one of them, or add `{{server: {server}, config: {config}}}` to `exclude`",
            flavor.name(),
            match (&spec.image, &spec.source) {
                (Some(_), _) => "image",
                (None, Some(_)) => "source recipe",
                (None, None) => "build name",
            },
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(yaml: &str) -> Settings {
        crate::input::yaml::from_str(yaml).unwrap()
    }

    fn image(name: &str) -> ServerSpec {
        ServerSpec {
            image: Some(name.into()),
            ..ServerSpec::default()
        }
    }

    #[test]
    fn only_a_server_without_a_pool_refuses_one() {
        let pool = settings("{loose-thread-handling: pool_of_threads}");
        let r = refuses("m", &image("mysql:8.4"), "p", &pool).unwrap();
        assert_eq!(r.at, "mycnf.loose-thread-handling");
        assert!(
            r.message.contains("server `m` is MySQL (from its image)"),
            "{}",
            r.message
        );
        assert_eq!(refuses("m", &image("mariadb:11"), "p", &pool), None);
        assert_eq!(refuses("m", &image("percona:8.0"), "p", &pool), None);
        let other = settings("{thread_handling: one-thread-per-connection}");
        assert_eq!(refuses("m", &image("mysql:8.4"), "p", &other), None);
    }
}
