//! `nearcrawl near-pairs` from the command line.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::process::Command;

fn nearcrawl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(args)
        .output()
        .expect("run nearcrawl")
}

/// A file holding `contents` in a directory of its own, removed when the directory is dropped.
fn temp_file(name: &str, contents: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}

#[test]
fn prints_pairs_within_k_by_line_number() {
    let (_dir, file) = temp_file(
        "fps.txt",
        "# fingerprints\n00000000000000ff\n\n00000000000000fe\nffffffffffffff00\n0x00000000000000f0\n",
    );
    let out = nearcrawl(&["near-pairs", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ff-fe: 1 bit; ff-f0: 4 bits (not a pair); fe-f0: 3 bits.
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "2 4 1\n4 6 3\n");
}

#[test]
fn a_bad_line_is_an_error_naming_file_and_line() {
    let (_dir, file) = temp_file("bad.txt", "00000000000000ff\nnot-a-fingerprint\n");
    let out = nearcrawl(&["near-pairs", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(&format!("{}:2", file.display())), "{err}");
    assert!(err.contains("not-a-fingerprint"), "{err}");
    let out = nearcrawl(&["near-pairs", "--design", "7-tables", file.to_str().unwrap()]);
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("unknown design")
    );
}

/// A reader that goes away (`| head -1`) ends the command quietly, as it ends `cat`: the
/// status a shell gives a process ended by SIGPIPE, nothing on standard error.
#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    use std::io::Read;
    // Seven fingerprints repeated: about 640,000 pairs, far more than a pipe holds.
    let contents: String = (0..3000).map(|i| format!("{:016x}\n", i % 7)).collect();
    let (_dir, file) = temp_file("many.txt", &contents);
    let mut child = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(["near-pairs", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then closed
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(141),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
