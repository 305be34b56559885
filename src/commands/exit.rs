//! How the process ends: the one place where a command's outcome, or the kind of the error
//! it failed with, becomes an exit code (README.md's table, `rmatrix --help` and the man
//! page list them).

use crate::error::{ErrorKind, Outcome};

/// How a command ended: it ran to an outcome, or it failed with an error of some kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Ran(Outcome),
    Failed(ErrorKind),
}

impl End {
    /// The exit code. The match names every outcome and kind (no catch-all), so a new one
    /// does not compile until it has its code.
    pub const fn code(self) -> i32 {
        match self {
            End::Ran(Outcome::Done) => 0,
            End::Ran(Outcome::CellsFailed) | End::Failed(ErrorKind::Failed) => 1,
            End::Failed(ErrorKind::BadInput) => 2,
            End::Failed(ErrorKind::NoDocker) => 3,
            End::Ran(Outcome::Regressed) => 4,
            End::Failed(ErrorKind::EnvDiffers) => 5,
            End::Ran(Outcome::NotReproduced) => 6,
            End::Ran(Outcome::OnlySkipped) => 7,
            End::Ran(Outcome::CannotTell) => 8,
            End::Failed(ErrorKind::Interrupted) => 130,
        }
    }
}

/// Every end, each outcome and each kind once (for the tests that hold the docs to the
/// codes). The match below stops compiling when an outcome or a kind is added: the reminder
/// to list it here too.
#[cfg(test)]
pub(crate) fn every_end() -> Vec<End> {
    use ErrorKind::{BadInput, EnvDiffers, Failed, Interrupted, NoDocker};
    use Outcome::{CannotTell, CellsFailed, Done, NotReproduced, OnlySkipped, Regressed};
    let outcomes = [
        Done,
        CellsFailed,
        Regressed,
        NotReproduced,
        OnlySkipped,
        CannotTell,
    ];
    let kinds = [Failed, BadInput, NoDocker, EnvDiffers, Interrupted];
    let ends: Vec<End> = (outcomes.into_iter().map(End::Ran))
        .chain(kinds.into_iter().map(End::Failed))
        .collect();
    for end in &ends {
        match end {
            End::Ran(Done | CellsFailed | Regressed | NotReproduced | OnlySkipped | CannotTell) => {
            }
            End::Failed(Failed | BadInput | NoDocker | EnvDiffers | Interrupted) => {}
        }
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_is_0() {
        assert_eq!(End::Ran(Outcome::Done).code(), 0);
    }

    #[test]
    fn failed_cells_and_unspecific_errors_are_1() {
        assert_eq!(End::Ran(Outcome::CellsFailed).code(), 1);
        assert_eq!(End::Failed(ErrorKind::Failed).code(), 1);
    }

    #[test]
    fn bad_input_is_2() {
        assert_eq!(End::Failed(ErrorKind::BadInput).code(), 2);
    }

    #[test]
    fn no_docker_is_3() {
        assert_eq!(End::Failed(ErrorKind::NoDocker).code(), 3);
    }

    #[test]
    fn a_regression_is_4() {
        assert_eq!(End::Ran(Outcome::Regressed).code(), 4);
    }

    #[test]
    fn different_environments_are_5() {
        assert_eq!(End::Failed(ErrorKind::EnvDiffers).code(), 5);
    }

    #[test]
    fn a_bisection_that_does_not_reproduce_is_6() {
        assert_eq!(End::Ran(Outcome::NotReproduced).code(), 6);
    }

    #[test]
    fn a_bisection_left_with_skipped_commits_is_7() {
        assert_eq!(End::Ran(Outcome::OnlySkipped).code(), 7);
    }

    #[test]
    fn cannot_tell_is_8() {
        assert_eq!(End::Ran(Outcome::CannotTell).code(), 8);
    }

    #[test]
    fn interrupted_is_130() {
        assert_eq!(End::Failed(ErrorKind::Interrupted).code(), 130);
    }

    /// Only "some cells failed" and "failed" share a code; nothing but `Done` exits 0.
    #[test]
    fn no_two_ends_share_a_code_but_the_two_failures() {
        let mut codes: Vec<i32> = (every_end().into_iter())
            .filter(|e| *e != End::Failed(ErrorKind::Failed))
            .map(End::code)
            .collect();
        let n = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), n);
        let zero: Vec<End> = every_end().into_iter().filter(|e| e.code() == 0).collect();
        assert_eq!(zero, [End::Ran(Outcome::Done)]);
    }
}
