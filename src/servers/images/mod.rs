//! Server images made here: from a folder under containers/ with a build's own packages over
//! it (`folder`, `packages`), from a git tree at a commit with a family's recipe (`source`,
//! `git`, `build`), and the image of a counted server (`counted`).

pub(crate) mod build;
pub(crate) mod counted;
pub(crate) mod folder;
pub(crate) mod git;
pub(crate) mod packages;
pub(crate) mod source;
