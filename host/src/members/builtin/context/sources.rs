//! What each context builtin reads, and the reading: the date, the
//! environment, named prompt files, the directory's top level, the user,
//! and git's output (through [`super::git`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::git;
use super::{MAX_CONTEXT, MAX_FILE, bounded};

/// The most directory entries listed or visited.
const MAX_ENTRIES: usize = 200;

/// The most directories `add_prompt_files` visits looking below the
/// working directory.
const MAX_VISITS: usize = 2000;

/// What a context builtin reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// Today's local date.
    Date,
    /// The working directory, whether it is in a git repository, the OS and
    /// the architecture.
    EnvironmentInfo,
    /// Each named file, looked up in the working directory and then its
    /// parents (nearest first); with `depth`, the paths of files of the
    /// same names up to that many levels below.
    PromptFiles { files: Vec<String>, depth: u32 },
    /// `git status --short --branch`.
    GitStatus,
    /// `git diff --stat`, or the whole diff.
    GitDiff { full: bool },
    /// The working directory's own entries, sorted, folders marked `/`.
    DirectoryListing,
    /// The OS user and the host name.
    UserInfo,
    /// `git log --oneline -n COUNT`.
    RecentCommits { count: u32 },
}

impl Source {
    /// Whether it reads the working directory (all but the date and the
    /// user).
    pub(crate) fn needs_dir(&self) -> bool {
        !matches!(self, Source::Date | Source::UserInfo)
    }

    /// The text for `dir`; `None` when there is nothing to say (not a git
    /// repository, no prompt file found). An error is a failure of the
    /// hook (a git that would not finish, an unreadable folder).
    pub(crate) async fn read(&self, dir: &Path) -> Result<Option<String>, String> {
        match self {
            Source::Date => Ok(Some(format!("Today's date: {}", local_date()))),
            Source::EnvironmentInfo => Ok(Some(environment(dir))),
            Source::UserInfo => Ok(Some(user_info())),
            Source::DirectoryListing => listing(dir).map(Some),
            Source::PromptFiles { files, depth } => prompt_files(dir, files, *depth).await,
            Source::GitStatus => git::run(
                dir,
                &["status", "--short", "--branch", "--ignore-submodules=all"],
            )
            .await
            .map(|o| o.map(|t| format!("Git status:\n{t}"))),
            Source::GitDiff { full } => {
                let shown = if *full { "diff" } else { "diff --stat" };
                let mut args = vec!["diff", "--no-ext-diff", "--no-textconv"];
                args.push("--ignore-submodules=all");
                if !*full {
                    args.push("--stat");
                }
                git::run(dir, &args)
                    .await
                    .map(|o| o.map(|t| format!("Uncommitted changes (git {shown}):\n{t}")))
            }
            Source::RecentCommits { count } => {
                let n = count.to_string();
                git::run(dir, &["log", "--no-show-signature", "--oneline", "-n", &n])
                    .await
                    .map(|o| o.map(|t| format!("Recent commits:\n{t}")))
            }
        }
    }
}

/// Today's date in the host's time zone, `YYYY-MM-DD`.
// The `libc` crate marks musl's `time_t` deprecated (its width changed in
// musl 1.2); it is still the type `localtime_r` takes.
#[allow(deprecated)]
fn local_date() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as libc::time_t)
        .unwrap_or(0);
    // SAFETY: `localtime_r` writes only into `tm`, which lives on this
    // stack frame; a null return leaves it zeroed, which is handled.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&now, &mut tm).is_null() };
    if !ok {
        return hookhost_protocol::time::rfc3339(std::time::SystemTime::now())[..10].to_string();
    }
    format!(
        "{:04}-{:02}-{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday
    )
}

/// [`local_date`], for the tests to compare with.
#[cfg(test)]
pub(super) fn local_date_for_tests() -> String {
    local_date()
}

/// docker-agent's environment block: cwd, git or not, OS, architecture.
fn environment(dir: &Path) -> String {
    let git = dir.ancestors().any(|d| d.join(".git").exists());
    let os = match std::env::consts::OS {
        "macos" => "MacOS",
        "linux" => "Linux",
        "windows" => "Windows",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        other => other,
    };
    format!(
        "Working directory: {}\nIs directory a git repo: {}\nOperating system: {os}\nCPU architecture: {arch}",
        dir.display(),
        if git { "yes" } else { "no" }
    )
}

/// The user and host names, from the password database and the kernel.
fn user_info() -> String {
    format!("User: {}\nHost: {}", user_name(), host_name())
}

fn user_name() -> String {
    // SAFETY: getpwuid_r writes into `pwd` and `buf`, both owned here and
    // sized as passed; the name is read only when it reports success.
    let uid = unsafe { libc::getuid() };
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc == 0 && !found.is_null() && !pwd.pw_name.is_null() {
        // SAFETY: on success pw_name points at a NUL-terminated string in `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
        return name.to_string_lossy().into_owned();
    }
    format!("uid {uid}")
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The working directory's entries, sorted, at most [`MAX_ENTRIES`].
fn listing(dir: &Path) -> Result<String, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names: Vec<String> = read
        .filter_map(Result::ok)
        .take(MAX_ENTRIES * 10)
        .map(|e| {
            let mut name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    let more = names.len().saturating_sub(MAX_ENTRIES);
    names.truncate(MAX_ENTRIES);
    let mut text = format!("Files in {}:\n{}", dir.display(), names.join("\n"));
    if more > 0 {
        let _ = write!(text, "\n[… {more} more]");
    }
    Ok(text)
}

/// Each file's contents, nearest copy first; then, with `depth`, where
/// copies below the working directory are. A file whose real path is out
/// of its project ([`confined`]) is skipped and logged, not read.
async fn prompt_files(dir: &Path, files: &[String], depth: u32) -> Result<Option<String>, String> {
    let mut parts = Vec::new();
    let root = project_root(dir);
    for name in files {
        let Some((folder, path)) = dir
            .ancestors()
            .map(|d| (d, d.join(name)))
            .find(|(_, p)| p.is_file())
        else {
            continue;
        };
        let Some(real) = confined(&root, folder, &path) else {
            tracing::warn!(
                file = %path.display(),
                "add_prompt_files: the file leads out of its project (a symlink?); it is not read"
            );
            continue;
        };
        let text = read_capped(&real).await?;
        parts.push(format!("Instructions from: {}\n{text}", path.display()));
    }
    if depth > 0 {
        let below = find_below(dir, files, depth);
        if !below.is_empty() {
            let list: Vec<String> = below.iter().map(|p| p.display().to_string()).collect();
            parts.push(format!(
                "More of these files below {}:\n{}",
                dir.display(),
                list.join("\n")
            ));
        }
    }
    Ok((!parts.is_empty()).then(|| bounded(parts.join("\n\n"), MAX_CONTEXT)))
}

/// The project `dir` is in: the nearest folder at or above it that holds
/// `.git`, else `dir` itself.
fn project_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
        .to_path_buf()
}

/// The real path of prompt file `path` found in `folder`, when it stays
/// within its project: the project `root` for a file found inside it, the
/// folder it was found in for one found above it (`~/AGENTS.md`). A
/// symlink out of the project (a repository's `AGENTS.md ->
/// ~/.ssh/id_ed25519`) is `None`.
fn confined(root: &Path, folder: &Path, path: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    let root = std::fs::canonicalize(root).ok()?;
    let folder = std::fs::canonicalize(folder).ok()?;
    let bound = if folder.starts_with(&root) {
        root
    } else {
        folder
    };
    real.starts_with(&bound).then_some(real)
}

/// At most [`MAX_FILE`] bytes of `path` (a real path, no symlink in it),
/// as text. The last component is opened without following a symlink
/// (`O_NOFOLLOW`), so a link swapped in after the check is refused; a file
/// that is not a regular file is refused too (a FIFO would never end).
async fn read_capped(path: &Path) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt;
    use tokio::io::AsyncReadExt;
    let failed = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(failed)?;
    if !file.metadata().map_err(failed)?.is_file() {
        return Err(format!("{}: not a regular file", path.display()));
    }
    let file = tokio::fs::File::from_std(file);
    let mut bytes = Vec::new();
    file.take(MAX_FILE as u64 + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(failed)?;
    let cut = bytes.len() > MAX_FILE;
    bytes.truncate(MAX_FILE);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        let _ = write!(text, "\n[… cut at {MAX_FILE} bytes]");
    }
    Ok(text)
}

/// Paths of files named `files` in folders 1..=`depth` levels below `dir`,
/// skipping hidden folders, visiting at most [`MAX_VISITS`] folders.
fn find_below(dir: &Path, files: &[String], depth: u32) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut level: Vec<PathBuf> = vec![dir.to_path_buf()];
    let mut visits = 0;
    for _ in 0..depth {
        let mut next = Vec::new();
        for folder in level {
            let Ok(read) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in read.filter_map(Result::ok) {
                let hidden = entry.file_name().to_string_lossy().starts_with('.');
                if !hidden && entry.file_type().is_ok_and(|t| t.is_dir()) && visits < MAX_VISITS {
                    visits += 1;
                    next.push(entry.path());
                }
            }
        }
        for folder in &next {
            found.extend(files.iter().map(|f| folder.join(f)).filter(|p| p.is_file()));
        }
        next.sort();
        level = next;
        if found.len() >= MAX_ENTRIES {
            break;
        }
    }
    found.sort();
    found.truncate(MAX_ENTRIES);
    found
}
