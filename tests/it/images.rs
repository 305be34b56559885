//! `rmatrix clean --images`: the client images go, other images stay.

use std::process::Command;

use crate::common::rmatrix;

fn image_exists(reference: &str) -> bool {
    (Command::new("docker").args(["image", "inspect", reference]))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn clean_images_removes_the_client_images_and_nothing_else() {
    // A stand-in for an old client image: another tag of a base image the machine has.
    let old = "rmatrix/client:0000c1ea0000";
    let tagged = Command::new("docker")
        .args(["tag", "debian:bookworm", old])
        .status()
        .unwrap();
    assert!(tagged.success());
    let out = rmatrix(&["clean", "--images"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("client image(s) on"), "{}", out.stderr);
    assert!(!image_exists(old));
    assert!(image_exists("debian:bookworm"));
}
