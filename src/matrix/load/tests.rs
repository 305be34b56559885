//! The loader through its public functions: positions, messages, builds.

use std::collections::BTreeMap;

use indexmap::IndexMap;

use super::*;
use crate::matrix::load::builds::BUILD_NAMES;

const GOOD: &str = "\
servers:
  db: {image: mariadb:11}
configs:
  off: {}
  on: {mycnf: {log_bin: 1}}
engines: [InnoDB]
workloads:
  w: {slap: {load_type: write}}
length: 100
";

fn err(text: &str) -> MatrixError {
    load_str(text, Path::new("m.yaml")).unwrap_err()
}

#[test]
fn good_matrix_loads() {
    let m = load_str(GOOD, Path::new("m.yaml")).unwrap();
    assert_eq!(m.matrix.servers.len(), 1);
    assert_eq!(m.sha256.len(), 64);
}

#[test]
fn unknown_key_names_line_and_column() {
    let e = err(&GOOD.replace("length: 100", "length: 100\niteratons: 3"));
    assert_eq!((e.line, e.col), (10, 1), "{e}");
    assert!(e.message.contains("unknown field `iteratons`"), "{e}");
    assert!(
        e.message.contains("iterations"),
        "lists the valid keys: {e}"
    );
    assert!(e.to_string().starts_with("m.yaml:10:1: "), "{e}");
}

#[test]
fn wrong_type_and_unknown_kind() {
    let e = err(&GOOD.replace("length: 100", "length: 100\nconcurrency: two"));
    assert_eq!((e.line, e.col), (10, 14), "{e}");
    assert_eq!(
        e.message,
        "`concurrency`: give a list of levels (`[1, 2, 4]`) or geometric steps (`{from: 1, \
         factor: 2, to: 512}`), not `two`"
    );
    let e = err(&GOOD.replace("{slap: {load_type: write}}", "{slapp: {}}"));
    assert_eq!((e.line, e.col), (8, 7), "{e}");
    assert_eq!(
        e.message,
        "workload `w` names an unknown driver `slapp`; valid drivers: slap, oltp, sysbench, \
         redis, redis_benchmark, sqlbench, pgbench, tpcc"
    );
    let e = err(&GOOD.replace("{slap: {load_type: write}}", "slap"));
    assert_eq!((e.line, e.col), (8, 6), "{e}");
    assert!(
        e.message
            .starts_with("workload `w` must name one driver with its options"),
        "{e}"
    );
    for internal in ["SlapSpec", "variant", "struct"] {
        assert!(!e.message.contains(internal), "{e}");
    }
    let e = err(&GOOD.replace("load_type: write", "load_type: wrte"));
    assert!(
        e.message
            .contains("expected one of `write`, `key`, `read`, `update`, `mixed`"),
        "{e}"
    );
    let e = err(&GOOD.replace("length: 100", "length: 3 weeks"));
    assert!(e.message.contains("unknown unit"), "{e}");
    assert_eq!((e.line, e.col), (9, 9), "the value's own position: {e}");
}

#[test]
fn duplicate_keys_limits_and_merge_keys() {
    let e = err(&GOOD.replace(
        "  on: {mycnf: {log_bin: 1}}",
        "  on: {mycnf: {log_bin: 1, log_bin: 2}}",
    ));
    assert_eq!((e.line, e.col), (5, 28), "{e}");
    assert_eq!(
        e.message,
        "`log_bin` is defined twice in `configs.on.mycnf`: each key may appear once"
    );
    let e = err(&format!("{GOOD}workloads:\n  x: {{slap: {{}}}}\n"));
    assert_eq!((e.line, e.col), (10, 1), "{e}");
    let deep = format!("servers: {}", "[".repeat(100_000));
    let e = err(&deep);
    assert!(
        e.message
            .starts_with("lists and mappings are nested more than 32 deep"),
        "{e}"
    );
    let merged = GOOD.replace(
        "  db: {image: mariadb:11}",
        "  db: &base {image: mariadb:11}\n  db2: {<<: *base}",
    );
    let m = load_str(&merged, Path::new("m.yaml")).unwrap();
    assert_eq!(m.matrix.servers["db2"].image.as_deref(), Some("mariadb:11"));
    let e = err(&GOOD.replace("servers:", "servers: {a: {image: x}\nx:"));
    assert_eq!((e.line, e.col), (2, 1), "{e}");
    assert!(
        e.message
            .ends_with("(the `{` opened at line 1, column 10 is not closed)"),
        "{e}"
    );
    let e = err(&GOOD.replace("servers:", "servers: {a: [b, c}\nx:"));
    assert_eq!((e.line, e.col), (1, 14), "{e}");
    assert_eq!(
        e.message,
        "YAML syntax: mismatched bracket '[' closed by '}'"
    );
}

#[test]
fn unknown_names_in_exclude_and_report() {
    let e = err(&format!("{GOOD}exclude:\n  - {{engine: MyISAM}}\n"));
    assert_eq!((e.line, e.col), (11, 14), "{e}");
    assert_eq!(e.message, "unknown engine `MyISAM`; valid choices: InnoDB");
    let e = err(&format!("{GOOD}exclude:\n  - {{storage: InnoDB}}\n"));
    assert!(
        e.message
            .contains("unknown dimension `storage`; valid dimensions: server, config"),
        "{e}"
    );
    let e = err(&format!("{GOOD}report: {{metric: qqps}}\n"));
    assert!(
        e.message
            .starts_with("unknown metric `qqps`; valid choices: qps, tps"),
        "{e}"
    );
    let e = err(&format!("{GOOD}report: {{baseline: {{config: of}}}}\n"));
    assert_eq!(e.message, "unknown config `of`; valid choices: off, on");
    assert_eq!(e.line, 10);
    let e = err(&format!("{GOOD}report: {{confidence: 120}}\n"));
    assert_eq!(
        e.message,
        "confidence 120 is not a level between 50 and 100 percent (e.g. 95 or 0.95)"
    );
    assert_eq!((e.line, e.col), (10, 22));
}

/// Whatever reaches a config file or SQL is checked, with its position.
#[test]
fn injection_is_refused_where_it_is_written() {
    let e = err(&GOOD.replace(
        "engines: [InnoDB]",
        "engines: [InnoDB, \"MyISAM; DROP DATABASE mysql; --\"]",
    ));
    assert!(
        e.message
            .starts_with("engine `MyISAM; DROP DATABASE mysql; --` is not a plain SQL identifier"),
        "{e}"
    );
    assert_eq!((e.line, e.col), (6, 19), "{e}");
    let oltp = |spec: &str| {
        GOOD.replace(
            "w: {slap: {load_type: write}}",
            &format!("w: {{oltp: {spec}}}"),
        )
    };
    let e = err(&oltp("{db: \"x`; DROP TABLE t; --\"}"));
    assert!(
        e.message.starts_with("database `x`; DROP TABLE t; --`"),
        "{e}"
    );
    assert_eq!(e.line, 8, "{e}");
    let e = err(&oltp(
        "{mysql_storage_engine: \"InnoDB */ DROP TABLE x; /*\"}",
    ));
    assert!(e.message.starts_with("storage engine `InnoDB */"), "{e}");
    let cnf = |on: &str| GOOD.replace("on: {mycnf: {log_bin: 1}}", on);
    let e = err(&cnf("on: {mycnf: {\"!include /etc/shadow\": ~}}"));
    assert!(
        e.message
            .starts_with("my.cnf option `!include /etc/shadow` is not an option name"),
        "{e}"
    );
    assert_eq!((e.line, e.col), (5, 16), "{e}");
    let e = err(&cnf(
        "on: {mycnf: {log_bin: \"1\\n[mysqld_safe]\\nmalloc-lib = /tmp/x.so\"}}",
    ));
    assert!(
        e.message
            .starts_with("the value of `log_bin` contains a newline"),
        "{e}"
    );
    assert!(
        e.message.contains("1\\n[mysqld_safe]"),
        "shown escaped: {e}"
    );
    let e = err(&cnf(
        "on: {mycnf: {log_bin: 1}, redis_conf: {rename-command: \"CONFIG x\"}}",
    ));
    assert!(
        e.message
            .starts_with("redis.conf directive `rename-command` is refused"),
        "{e}"
    );
    let e = err(&cnf(
        "on: {mycnf: {log_bin: 1}, redis_conf: {appendonly: \"yes\\nrequirepass x\"}}",
    ));
    assert!(
        e.message
            .starts_with("the value of `appendonly` contains a newline"),
        "{e}"
    );
    for (text, want) in [
        ("length: 0s", "length must be more than 0"),
        ("start_timeout: 5", "`5` needs a unit"),
        (
            "iterations: 4294967295",
            "iterations 4294967295 is more than 10000",
        ),
        ("concurrency: [2, 4, 2]", "concurrency 2 is listed twice"),
        ("length: 1000000000000000h", "is longer than 7 days"),
    ] {
        let m = if text.starts_with("length") {
            GOOD.replace("length: 100", text)
        } else {
            format!("{GOOD}{text}\n")
        };
        let e = err(&m);
        assert!(e.message.contains(want), "{text}: {e}");
    }
    let many = GOOD.replace(
        "engines: [InnoDB]",
        "engines: [InnoDB]\nconcurrency: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]",
    );
    let workloads: String = (0..5001)
        .map(|i| format!("  w{i}: {{slap: {{}}}}\n"))
        .collect();
    let e = err(&many.replace("  w: {slap: {load_type: write}}\n", &workloads));
    assert!(
        e.message
            .starts_with("the matrix expands to more than 100000 cells"),
        "{e}"
    );
    let e = err(&GOOD.replace("  off: {}", "  \"a|b\": {}"));
    assert!(
        e.message.starts_with("config name `a|b` must be letters"),
        "{e}"
    );
    assert_eq!((e.line, e.col), (4, 3), "{e}");
}

#[test]
fn empty_axes_and_bad_servers() {
    let e = err(&GOOD.replace("engines: [InnoDB]", "engines: []"));
    assert!(e.message.contains("list `engines`"), "{e}");
    let e = err(&format!("{GOOD}concurrency: []\n"));
    assert!(e.message.contains("`concurrency` is empty"), "{e}");
    let e = err(&GOOD.replace("{image: mariadb:11}", "{image: a, build: b}"));
    assert_eq!(e.line, 2);
    assert!(
        e.message
            .contains("exactly one of `image`, `build`, `source` or `external`"),
        "{e}"
    );
    let e = err(&GOOD.replace("{image: mariadb:11}", "{build: no-such-dir}"));
    assert!(e.message.contains("no Dockerfile for `no-such-dir`"), "{e}");
}

/// `GOOD` with its server built by `build` (a flow value); `kind` keeps Redis builds
/// loadable with GOOD's slap workload.
fn built(build: &str) -> Result<LoadedMatrix, MatrixError> {
    let text = GOOD.replace(
        "{image: mariadb:11}",
        &format!("{{build: {build}, kind: mysql}}"),
    );
    load_str(&text, Path::new("m.yaml"))
}

/// A path under this repository's containers/, which `m.yaml` (in the working directory
/// of `cargo test`) finds.
fn repo(rel: &str) -> PathBuf {
    std::path::absolute("containers").unwrap().join(rel)
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn build_is_a_name_or_a_folder_with_arguments() {
    use super::super::model::{BuildDir, BuildSpec, ServerKind, ServerSpec};
    let m = built("mariadb").unwrap();
    assert_eq!(
        m.matrix.servers["db"].build,
        Some(BuildSpec::Name("mariadb".into()))
    );
    assert_eq!(m.build_dirs["db"].dir, repo("mariadb"));
    assert!(m.build_dirs["db"].args.is_empty());
    let m = built("{dir: mariadb, args: {suite: trixie}}").unwrap();
    assert_eq!(
        m.matrix.servers["db"].build,
        Some(BuildSpec::Dir(BuildDir {
            dir: "mariadb".into(),
            args: IndexMap::from([("suite".to_string(), "trixie".to_string())]),
        }))
    );
    assert_eq!(m.build_dirs["db"].dir, repo("mariadb"));
    assert_eq!(m.build_dirs["db"].args, args(&[("suite", "trixie")]));
    let m = built("{dir: redis}").unwrap();
    assert!(m.build_dirs["db"].args.is_empty());
    // The family is inferred from the folder, as from a name.
    for (build, kind) in [
        (
            "{dir: redis, args: {package: valkey-server}}",
            ServerKind::Redis,
        ),
        ("valkey-8.1", ServerKind::Redis),
        ("{dir: mariadb}", ServerKind::Mysql),
        ("/work/redis-tools/containers/mariadb", ServerKind::Mysql),
        ("{dir: /srv/valkey/containers/mariadb/}", ServerKind::Mysql),
    ] {
        let spec: ServerSpec =
            crate::input::yaml::from_str(&format!("{{build: {build}}}")).unwrap();
        assert_eq!(spec.kind(), kind, "{build}");
    }
}

#[test]
fn the_old_build_names_are_folders_with_arguments() {
    for (name, dir, want) in [
        ("mariadb-10.5", "mariadb", &[("suite", "bullseye")][..]),
        ("mariadb-10.11", "mariadb", &[("suite", "bookworm")]),
        ("mariadb-11.8", "mariadb", &[("suite", "trixie")]),
        ("mysql-9.7", "mysql", &[("suite", "sid")]),
        (
            "redis-6.0",
            "redis",
            &[("suite", "bullseye"), ("package", "redis-server")],
        ),
        (
            "redis-7.0",
            "redis",
            &[("suite", "bookworm"), ("package", "redis-server")],
        ),
        (
            "redis-8.0",
            "redis",
            &[("suite", "trixie"), ("package", "redis-server")],
        ),
        (
            "valkey-8.1",
            "redis",
            &[("suite", "trixie"), ("package", "valkey-server")],
        ),
        ("postgres-13", "postgres", &[("suite", "bullseye")]),
        ("postgres-15", "postgres", &[("suite", "bookworm")]),
        ("postgres-17", "postgres", &[("suite", "trixie")]),
    ] {
        let m = built(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let b = &m.build_dirs["db"];
        assert_eq!(b.dir, repo(dir), "{name}");
        assert_eq!(b.args, args(want), "{name}");
    }
    let e = built("mariadb-9.9").unwrap_err();
    assert_eq!(
        e.message,
        "no Dockerfile for `mariadb-9.9` under containers/; available: mariadb, \
         mariadb-10.11, mariadb-10.5, mariadb-11.8, mysql, mysql-9.7, postgres, postgres-13, \
         postgres-15, postgres-17, redis, redis-6.0, redis-7.0, redis-8.0, valkey-8.1"
    );
    // A name is not a folder: `dir` takes folders only.
    let e = built("{dir: mariadb-10.11}").unwrap_err();
    assert_eq!(
        e.message,
        "no Dockerfile for `mariadb-10.11` under containers/; available: mariadb, mysql, postgres, redis"
    );
}

#[test]
fn build_arguments_are_checked() {
    let e = built("{dir: mariadb, args: {suite: trixie, package: x}}").unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "build argument `package` is not declared in {} (`ARG package`); declared: \
             suite",
            repo("mariadb/Dockerfile").display()
        )
    );
    assert_eq!((e.line, e.col), (2, 52), "{e}");
    let e = built("{dir: mariadb, args: {a-b: x}}").unwrap_err();
    assert!(e.message.contains("`a-b` is not an argument name"), "{e}");
    let e = built(r#"{dir: mariadb, args: {suite: "bookworm\nRUN x"}}"#).unwrap_err();
    assert!(e.message.contains("must be one word"), "{e}");
    let e = built("{dir: mariadb, args: {suite: x;id}}").unwrap_err();
    assert!(e.message.contains("must be one word"), "{e}");
}

#[test]
fn build_names_come_from_the_builds_file_next_to_the_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let containers = tmp.path().join("containers");
    std::fs::create_dir_all(containers.join("fam")).unwrap();
    std::fs::write(
        containers.join("fam/Dockerfile"),
        "ARG suite=bookworm\nFROM debian:${suite}\narg  pkg=a other\n",
    )
    .unwrap();
    let matrix = tmp.path().join("m.yaml");
    let load = |builds: &str| {
        std::fs::write(containers.join(BUILD_NAMES), builds).unwrap();
        let text = GOOD.replace("{image: mariadb:11}", "{build: fam-1}");
        load_str(&text, &matrix)
    };
    let m = load("fam-1: {dir: fam, args: {suite: trixie, pkg: b, other: c}}\n").unwrap();
    assert_eq!(m.build_dirs["db"].dir, containers.join("fam"));
    assert_eq!(
        m.build_dirs["db"].args,
        args(&[("suite", "trixie"), ("pkg", "b"), ("other", "c")])
    );
    let e = load("fam-1: {dir: fam, args: {nope: x}}\n").unwrap_err();
    assert!(
        e.message.contains("`fam-1` in ")
            && e.message
                .ends_with("(`ARG nope`); declared: suite, pkg, other"),
        "{e}"
    );
    assert_eq!((e.line, e.col), (2, 15), "{e}");
    let e = load("fam-1: {dir: fam, args: {suite: 'a b'}}\n").unwrap_err();
    assert!(e.message.contains("must be one word"), "{e}");
    let e = load("fam-1: {dir: gone}\n").unwrap_err();
    assert!(e.message.ends_with("no Dockerfile for `gone`"), "{e}");
    let e = load("fam-1: {dir: fam, arg: {}}\n").unwrap_err();
    assert!(
        e.message.contains("builds.yaml:1:19: unknown field `arg`"),
        "{e}"
    );
}

#[test]
fn external_servers_are_never_reconfigured() {
    let text = GOOD.replace("{image: mariadb:11}", "{external: {port: 3306}}");
    let e = err(&text);
    assert_eq!(e.line, 5, "{e}");
    assert!(
        e.message.contains("would change the external server `db`"),
        "{e}"
    );
    let ok = format!("{text}exclude:\n  - {{config: on}}\n");
    assert!(load_str(&ok, Path::new("m.yaml")).is_ok());
}

#[test]
fn syntax_error_has_position() {
    let e = err("servers: {a: {image: x}\nconfigs: {}\n");
    assert_eq!(e.line, 2, "{e}");
    assert!(
        e.message.contains("did not find expected ',' or '}'"),
        "{e}"
    );
}

#[test]
fn apdex_t_for_all_or_per_workload() {
    let base = "servers: {r: {build: redis-7.0}}\nworkloads:\n  a: {redis: {test: get}}\n  b: {redis: {test: set}}\nlength: 100\n";
    let m = load_str(
        &format!("{base}report: {{apdex_t: 2ms}}\n"),
        Path::new("m.yaml"),
    )
    .unwrap();
    assert_eq!(m.matrix.report.apdex_t_ms("b"), Some(2.0));
    let m = load_str(
        &format!("{base}report: {{apdex_t: {{a: 500us}}}}\n"),
        Path::new("m.yaml"),
    );
    assert!(m.is_err(), "us is no unit rmatrix reads");
    let m = load_str(
        &format!("{base}report: {{apdex_t: {{a: 1s}}}}\n"),
        Path::new("m.yaml"),
    )
    .unwrap();
    assert_eq!(m.matrix.report.apdex_t_ms("a"), Some(1000.0));
    assert_eq!(m.matrix.report.apdex_t_ms("b"), None);
}

#[test]
fn build_folders_stay_under_the_matrix_and_hold_no_links() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    let fam = proj.join("containers/fam");
    std::fs::create_dir_all(&fam).unwrap();
    for dir in [&proj, &fam, &tmp.path().to_path_buf()] {
        std::fs::write(dir.join("Dockerfile"), "FROM debian:bookworm\n").unwrap();
    }
    let matrix = proj.join("m.yaml");
    let load = |build: &str| {
        let text = GOOD.replace(
            "{image: mariadb:11}",
            &format!("{{build: {build}, kind: mysql}}"),
        );
        load_str(&text, &matrix)
    };
    assert!(load("fam").is_ok());
    assert!(load("{dir: ./containers/fam}").is_ok());
    // `..` is containers/'s parent (here with a Dockerfile), not a folder of containers/.
    let e = load("..").unwrap_err();
    assert!(e.message.contains("no Dockerfile for `..`"), "{e}");
    let e = load("{dir: ../}").unwrap_err();
    assert!(e.message.contains("outside the matrix's folder"), "{e}");
    std::os::unix::fs::symlink("/etc/hostname", fam.join("hostname")).unwrap();
    let e = load("fam").unwrap_err();
    assert!(e.message.contains("is a symbolic link"), "{e}");
}

#[test]
fn counted_mode_needs_a_count_and_a_family_it_can_count() {
    let redis = "servers:\n  r: {image: redis:7}\nconfigs:\n  c: {}\nworkloads:\n  \
                 get: {redis: {test: get}}\nlength: 2000\ncounted: callgrind\n";
    let m = load_str(redis, Path::new("m.yaml")).unwrap();
    assert_eq!(
        m.matrix.counted,
        Some(crate::matrix::model::Counted::Callgrind)
    );
    let e = err(&redis.replace("length: 2000", "length: 2s"));
    assert_eq!((e.line, e.col), (8, 10), "{e}");
    assert!(e.message.contains("give `length` as a count"), "{e}");
    // Every family can be counted: PostgreSQL's backends are summed.
    let pg = (redis.replace("redis:7", "postgres:17"))
        .replace("{redis: {test: get}}", "{oltp: {test: oltp_point_select}}");
    assert!(load_str(&pg, Path::new("m.yaml")).is_ok());
    // A peer tool connects inside the phase: its backends would start uncounted.
    let pgbench = pg.replace(
        "{oltp: {test: oltp_point_select}}",
        "{pgbench: {builtin: select-only}}",
    );
    let e = err(&pgbench);
    assert!(
        e.message
            .starts_with("server r serves each connection in a process of its own")
            && e.message.contains("workload get runs pgbench"),
        "{e}"
    );
    let external = redis.replace("{image: redis:7}", "{external: {port: 6379}, kind: redis}");
    let e = err(&external);
    assert!(
        e.message.contains("is external: rmatrix does not start it"),
        "{e}"
    );
    let perf = load_str(&redis.replace("callgrind", "perf"), Path::new("m.yaml")).unwrap();
    assert_eq!(
        perf.matrix.counted,
        Some(crate::matrix::model::Counted::Perf)
    );
    let e = err(&redis.replace("callgrind", "cachegrind"));
    assert!(
        e.message.contains("callgrind") && e.message.contains("perf"),
        "lists the valid choices: {e}"
    );
}
