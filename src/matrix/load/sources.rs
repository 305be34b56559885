//! Where each `source:` server is built from: its git work tree and commit (resolved here,
//! so a wrong revision fails before anything runs), its recipe and the recipe's folders.

use std::collections::HashMap;
use std::path::Path;

use super::MatrixError;
use super::Validator;
use crate::input::untrusted;
use crate::servers::images::build::SourceBuild;
use crate::servers::images::git;
use crate::servers::images::source::Recipe;

/// Where the recipes live under `containers/`.
const RECIPES: &str = "source";

impl Validator<'_> {
    /// The build of every `source:` server, by server name.
    pub(super) fn sources(&self, base: &Path) -> Result<HashMap<String, SourceBuild>, MatrixError> {
        let mut out = HashMap::new();
        for (name, s) in &self.m.servers {
            let Some(src) = &s.source else { continue };
            let at = |key: &str| format!("servers.{name}.source.{key}");
            let (kind, recipe) =
                Recipe::find(&src.recipe).map_err(|msg| self.err(&at("recipe"), msg))?;
            if let Some(k) = s.kind.filter(|k| *k != kind) {
                return Err(self.err(
                    &format!("servers.{name}.kind"),
                    format!(
                        "recipe `{}` builds a {} server, not {}",
                        recipe.name,
                        kind.name(),
                        k.name()
                    ),
                ));
            }
            for (i, flag) in src.flags.iter().enumerate() {
                recipe
                    .check_flag(flag)
                    .map_err(|msg| self.err(&format!("{}[{i}]", at("flags")), msg))?;
            }
            untrusted::build_arg_value("suite", &src.suite)
                .map_err(|msg| self.err(&at("suite"), msg))?;
            // The revision's form first: it needs no work tree to be refused.
            git::check_rev(&src.rev).map_err(|msg| self.err(&at("rev"), msg))?;
            let repo = git::work_tree(base, &src.git).map_err(|msg| self.err(&at("git"), msg))?;
            let commit = git::resolve(&repo, &src.rev)
                .map_err(|e| self.err(&at("rev"), format!("{e:#}")))?;
            let containers = super::builds::containers_dir(base).ok_or_else(|| {
                self.err(
                    &at("recipe"),
                    "no containers/ folder found above the matrix".into(),
                )
            })?;
            let recipe_dir = containers.join(RECIPES).join(recipe.folder);
            let entrypoint = containers
                .join(recipe.entrypoint_from)
                .join("entrypoint.sh");
            for needed in [
                recipe_dir.join("build/Dockerfile"),
                recipe_dir.join("run/Dockerfile"),
                entrypoint.clone(),
            ] {
                if !needed.is_file() {
                    return Err(self.err(
                        &at("recipe"),
                        format!("recipe `{}` needs {}", recipe.name, needed.display()),
                    ));
                }
            }
            out.insert(
                name.clone(),
                SourceBuild {
                    repo,
                    rev: src.rev.clone(),
                    commit,
                    recipe,
                    flags: src.flags.clone(),
                    suite: src.suite.clone(),
                    recipe_dir,
                    entrypoint,
                },
            );
        }
        Ok(out)
    }
}
