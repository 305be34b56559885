//! Data sets kept across servers: the datadir of a server that prepared a deployment's
//! tables, kept in a Docker volume, and copied into a fresh volume for each later server of
//! the same image, layouts and on-disk settings, so that a fresh server per round or config
//! does not load its rows again. A kept set is sealed (`Seal`): the key it was made for and
//! each table's checksum, written into the server before it stopped, and checked on every
//! restored copy before it is measured.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::engines::docker::{Engine, DATASET_LABEL, INSTANCE_LABEL, LABEL};
use super::engines::{ContainerSpec, Containers as _};
use super::family::Family;
pub use super::seal::Seal;
use super::spec::ConfigSpec;

/// What a workload loads before it measures: its schema, a signature of the tables' shape
/// (the same signature means the same rows, up to the random values), and the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) db: String,
    pub(crate) signature: String,
    pub(crate) rows: u64,
    /// The rows a second the kind loads, for estimates only (None: as fast as oltp's,
    /// `matrix::plan::ASSUMED_PREPARE_ROWS_PER_S`).
    pub(crate) load_rows_per_s: Option<u32>,
}

/// The label holding the password of the account the set's server was prepared with (its
/// copies start with it: an image's entrypoint may keep an existing account as it is).
pub(crate) const PASSWORD_LABEL: &str = "rmatrix.dataset.password";
/// The label saying what the set holds, for `rmatrix clean --datasets` to list.
pub(crate) const WHAT_LABEL: &str = "rmatrix.dataset.what";

/// What identifies a kept set, and the volume it lives in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataSet {
    /// 16 hex digits of the sha256 of `what`.
    pub(crate) key: String,
    /// The image, the layouts and the settings that shape the data files, one per line.
    pub(crate) what: String,
}

impl DataSet {
    /// The set of `layouts` (in the order given) on `image_id` under `config`: every setting
    /// of the family's block that may change the data files is part of it, and so are the
    /// server's extra arguments; settings the family knows to leave them alone are not.
    pub(crate) fn of(
        family: &dyn Family,
        image_id: &str,
        layouts: &[Layout],
        config: &ConfigSpec,
    ) -> DataSet {
        let mut what = format!("image {image_id}\n");
        for l in layouts {
            what.push_str(&format!("layout {} {}\n", l.db, l.signature));
        }
        let block = family.config_block().key;
        let shaping: BTreeMap<String, String> = config
            .settings(block)
            .iter()
            .filter(|(k, _)| !family.keeps_data_format(&normal(k)))
            .map(|(k, v)| {
                (
                    normal(k),
                    v.as_ref().map(|v| v.0.clone()).unwrap_or_default(),
                )
            })
            .collect();
        for (k, v) in shaping {
            what.push_str(&format!("setting {k}={v}\n"));
        }
        for a in &config.args {
            what.push_str(&format!("arg {a}\n"));
        }
        let key = format!("{:x}", Sha256::digest(what.as_bytes()))[..16].to_string();
        DataSet { key, what }
    }

    pub(crate) fn volume(&self) -> String {
        format!("rmatrix-dataset-{}", self.key)
    }
}

/// A setting's name as servers read it: `-` and `_` are the same.
fn normal(k: &str) -> String {
    k.trim().to_lowercase().replace('-', "_")
}

/// How a restored copy is checked before it is measured.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verify {
    /// Every table's checksum computed again and compared with the seal's (reads every row).
    #[default]
    Checksum,
    /// The seal names the set's key and lists the tables the server has.
    Seal,
}

/// Check a restored server's seal against the set it was copied from: its key, its tables,
/// and (`Verify::Checksum`) each table's checksum now. What was checked, for the manifest.
pub(crate) fn check(
    set: &DataSet,
    sealed: Option<Seal>,
    now: Option<&BTreeMap<String, String>>,
) -> Result<(Seal, String)> {
    let seal = sealed.ok_or_else(|| anyhow!("the copy holds no seal (an unfinished set)"))?;
    if seal.key != set.key {
        bail!("the copy's seal names set {}, not {}", seal.key, set.key);
    }
    let Some(now) = now else {
        return Ok((
            seal.clone(),
            format!("seal of {} tables", seal.tables.len()),
        ));
    };
    for (table, sum) in &seal.tables {
        match now.get(table) {
            Some(s) if s == sum => {}
            Some(s) => bail!("table {table}'s checksum is {s}, the seal says {sum}"),
            None => bail!("table {table} of the seal is missing"),
        }
    }
    if let Some(extra) = now.keys().find(|t| !seal.tables.contains_key(*t)) {
        bail!("table {extra} is in the copy but not in the seal");
    }
    let n = seal.tables.len();
    Ok((seal, format!("checksums of {n} tables equal the seal's")))
}

/// The kept set's volume, with its password, when one exists on `engine`.
pub(crate) async fn find(engine: &Engine, set: &DataSet) -> Result<Option<String>> {
    let labels = engine.volume(&set.volume()).await?;
    Ok(labels.map(|l| l.get(PASSWORD_LABEL).cloned().unwrap_or_default()))
}

/// Create the volume a set is prepared into.
pub(crate) async fn create(engine: &Engine, set: &DataSet, password: &str) -> Result<()> {
    engine
        .create_volume(
            &set.volume(),
            &[
                (DATASET_LABEL, &set.key),
                (PASSWORD_LABEL, password),
                (WHAT_LABEL, &set.what.replace('\n', "; ")),
            ],
        )
        .await
}

/// What copying a set took.
pub(crate) struct Copied {
    pub(crate) seconds: f64,
    pub(crate) bytes: u64,
}

/// Copy the set's volume into `to` (created here, labelled with the run so that its
/// removal passes find it) with a helper container of `image`, which has the shell tools.
pub(crate) async fn copy(
    engine: &Engine,
    set: &DataSet,
    image: &str,
    to: &str,
    (run_id, instance): (&str, &str),
) -> Result<Copied> {
    engine
        .create_volume(to, &[(LABEL, run_id), (INSTANCE_LABEL, instance)])
        .await?;
    let started = Instant::now();
    let spec = ContainerSpec {
        name: format!("{to}-copy"),
        image: image.to_string(),
        entrypoint: Some(vec!["sh".into(), "-c".into()]),
        args: vec!["cp -a /from/. /to/ && du -sk /to".into()],
        run_id: run_id.to_string(),
        instance: instance.to_string(),
        volumes: vec![
            (set.volume(), "/from".into()),
            (to.to_string(), "/to".into()),
        ],
        host_network: true,
        ..ContainerSpec::default()
    };
    let id = engine.start(&spec).await?;
    let code = engine.wait(&id).await;
    let out = engine.stdout(&id).await.unwrap_or_default();
    let log = engine.logs(&id).await;
    engine.remove(&id).await?;
    match code.context("the copy's container")? {
        0 => {}
        c => bail!(
            "copying data set {} failed (exit {c}): {}",
            set.key,
            super::engines::docker::tail(&log, 5)
        ),
    }
    let kib: u64 = String::from_utf8_lossy(&out)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Ok(Copied {
        seconds: started.elapsed().as_secs_f64(),
        bytes: kib * 1024,
    })
}

/// How long a server's clean shutdown may take before a prepared set's server is killed
/// (and the set not kept: a killed server's files need recovery).
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(600);

/// Every kept set on `engine`: (volume, what it holds).
pub(crate) async fn list(engine: &Engine) -> Result<Vec<(String, String)>> {
    Ok(engine
        .volumes_labelled(DATASET_LABEL)
        .await?
        .into_iter()
        .map(|(v, l)| (v, l.get(WHAT_LABEL).cloned().unwrap_or_default()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::mysql::Mysql;

    fn layout() -> Vec<Layout> {
        vec![Layout {
            db: "sbtest".into(),
            signature: "tables=2 rows=100".into(),
            rows: 200,
            load_rows_per_s: None,
        }]
    }

    fn config(yaml: &str) -> ConfigSpec {
        crate::input::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn settings_that_leave_the_files_alone_share_a_set() {
        let a = config("mycnf: {innodb_buffer_pool_size: 64M, log_bin: ~, sync_binlog: 1}");
        let b = config("mycnf: {innodb_buffer_pool_size: 1G, innodb_flush_log_at_trx_commit: 2}");
        let (a, b) = (
            DataSet::of(&Mysql, "sha256:1", &layout(), &a),
            DataSet::of(&Mysql, "sha256:1", &layout(), &b),
        );
        assert_eq!(a, b);
        assert_eq!(a.key.len(), 16);
    }

    #[test]
    fn the_image_the_layout_and_a_shaping_setting_each_make_another_set() {
        let plain = config("mycnf: {}");
        let base = DataSet::of(&Mysql, "sha256:1", &layout(), &plain);
        assert_ne!(base, DataSet::of(&Mysql, "sha256:2", &layout(), &plain));
        let mut other = layout();
        other[0].signature = "tables=3 rows=100".into();
        assert_ne!(base, DataSet::of(&Mysql, "sha256:1", &other, &plain));
        let paged = config("mycnf: {innodb-page-size: 8k}");
        let shaped = DataSet::of(&Mysql, "sha256:1", &layout(), &paged);
        assert_ne!(base, shaped);
        assert!(
            shaped.what.contains("setting innodb_page_size=8k"),
            "{}",
            shaped.what
        );
    }

    fn seal(key: &str) -> Seal {
        Seal {
            key: key.into(),
            rows: 200,
            prepare_s: 1.0,
            tables: BTreeMap::from([
                ("sbtest.sbtest1".into(), "11".into()),
                ("sbtest.sbtest2".into(), "22".into()),
            ]),
        }
    }

    #[test]
    fn a_copy_is_checked_against_its_seal() {
        let set = DataSet::of(&Mysql, "sha256:1", &layout(), &config("mycnf: {}"));
        let good = seal(&set.key);
        let (_, said) = check(&set, Some(good.clone()), Some(&good.tables)).unwrap();
        assert_eq!(said, "checksums of 2 tables equal the seal's");
        assert!(check(&set, Some(good.clone()), None).is_ok());
        let e = check(&set, None, None).unwrap_err().to_string();
        assert!(e.contains("no seal"), "{e}");
        let e = check(&set, Some(seal("0000")), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("names set 0000"), "{e}");
        let mut changed = good.tables.clone();
        changed.insert("sbtest.sbtest2".into(), "23".into());
        let e = check(&set, Some(good.clone()), Some(&changed)).unwrap_err();
        assert!(e.to_string().contains("sbtest2's checksum is 23"), "{e}");
        let mut fewer = good.tables.clone();
        fewer.remove("sbtest.sbtest1");
        let e = check(&set, Some(good.clone()), Some(&fewer)).unwrap_err();
        assert!(
            e.to_string().contains("sbtest1 of the seal is missing"),
            "{e}"
        );
    }
}
