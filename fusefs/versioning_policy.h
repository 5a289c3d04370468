// Versioning policy of the mount: which names are editor/tool droppings (swap,
// backup, lock and temp files, everything under .git/, .hg/, ...) that are stored but
// never versioned. Pure functions; see docs/fusefs.md for the pattern list.
#ifndef FUSEFS_VERSIONING_POLICY_H_
#define FUSEFS_VERSIONING_POLICY_H_

#include <string_view>

#include "grainstore/types.h"

namespace fusefs {

// True when `name` (one path segment) matches a temp/swap/backup/lock pattern:
// *.swp *.swo *.swx .*.sw? 4913.. (vim's digits-only probe names) *~ *.bak *.orig #*# .#*
// *___jb_tmp___ *___jb_old___ .goutputstream-* sed?????? *.tmp *.tmp.*
// *.vsctmp .~lock.*# tmp???????? (Python tempfile) tmp.?????????? (mktemp)
// .tmp?????? (Rust's tempfile) zi?????? (Info-ZIP) and GNU patch's
// NAME.[oirp]?????? with a drawn tail.
// `*.lock` is NOT matched.
bool IsTempName(std::string_view name);

// True when `name` is the temporary copy rsync writes for `target` in the
// same directory before renaming it there: "." + target + "." + six letters
// or digits (mkstemp's), e.g. ".notes.md.Xy3aQ9" for "notes.md", with
// target shortened as rsync shortens it: without its own leading dot
// (".bashrc.Xy3aQ9"), cut to 246 bytes so the copy's name fits in 255 (a cut
// inside a multi-byte character drops the bytes of that character run), and
// without a trailing dot ("trail." copies to ".trail.Xy3aQ9").
bool IsTempCopyOf(std::string_view name, std::string_view target);

// True when `name` is the copy `rsync --temp-dir=DIR` writes for `target` in
// DIR, another directory, before moving it: target + "." + six letters or
// digits, with no leading dot added ("notes.md.Xy3aQ9"; a dotfile keeps its
// own).
bool IsTempDirCopyOf(std::string_view name, std::string_view target);

// True when `name` is a copy of `target` written beside it under a longer
// name to be renamed onto it (an atomic save): `target` plus a suffix of at
// most 64 letters, digits, '.', '-' or '_' that starts with '.' or holds a
// digit, with or without a leading dot of its own. Node's write-file-atomic
// ("notes.md.3482157740"), Go's os.CreateTemp ("notes.md123456789"),
// renameio (".notes.md123456789"), GNU patch ("notes.md.oAbCdEf"), Ruby's
// Tempfile ("notes.md20261205-42-1x9abc"), Qt's QSaveFile ("notes.md.aBc123");
// also a person's "notes.md.new".
bool IsSuffixedCopyOf(std::string_view name, std::string_view target);

// The file GNU patch writes a copy for: "notes.md" for "notes.md.oCkteJv",
// its output, reject, input or patch copy (make_tempfile: the file's name, a
// dot, one of the letters o r i p and 6 letters or digits mkstemp draws),
// renamed onto NAME or NAME.rej; "" for other names. A tail of 6 lower-case
// letters or 6 digits (one draw in 190) is a temp file only when NAME lies
// beside it ("x.indexed" alone is a person's name; the caller checks that).
std::string_view PatchTempBase(std::string_view name);

// The database name a SQLite sidecar file belongs to: "notes.db" for
// "notes.db-journal", "notes.db-wal" or "notes.db-shm"; "" for other names.
// A sidecar is rewritten on every commit: it is a temp file by behaviour
// when its database lies beside it (the caller checks that).
std::string_view SqliteSidecarBase(std::string_view name);

// The directories version-control tools keep their own state in.
inline constexpr std::string_view kVcsDirNames[] = {".git", ".hg", ".svn", ".bzr", ".jj"};

// True when `name` is one of kVcsDirNames.
bool IsVcsDirName(std::string_view name);

// The ending of a bare git repository's directory name (NAME.git).
inline constexpr std::string_view kBareRepoSuffix = ".git";

// True when `parent_key` ("/memories/a/.git/refs") has a segment that is
// one of kVcsDirNames, or a bare repository's NAME.git.
bool IsInsideVcsDir(std::string_view parent_key);

// The directory `rsync --delay-updates` gathers a directory's new files in
// (its default --partial-dir) before it renames them to their names.
inline constexpr std::string_view kRsyncDelayDir = ".~tmp~";

// True when `parent_key` has a kRsyncDelayDir segment.
bool IsInsideRsyncDelayDir(std::string_view parent_key);

// True when renaming `name` in directory `dir_key` to `new_name` in
// `new_dir_key` moves rsync's temporary copy on its way (IsTempCopyOf): to
// its real name in the same directory, or, with --delay-updates, into the
// kRsyncDelayDir directly below it.
bool IsTempCopyMove(std::string_view dir_key, std::string_view name, std::string_view new_dir_key,
                    std::string_view new_name);

// Versioning for a file named `name` in the directory whose store key is
// `parent_key`: kUnversioned for temp names, a ".git" file and anything under
// a version-control directory (IsInsideVcsDir) or a kRsyncDelayDir one;
// kVersioned otherwise.
grainstore::Versioning VersioningFor(std::string_view parent_key, std::string_view name);

}  // namespace fusefs

#endif  // FUSEFS_VERSIONING_POLICY_H_
