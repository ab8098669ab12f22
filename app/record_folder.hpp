// The private folder a profiled program's processes write their records into (the injection
// library's files, one per process), under TMPDIR (else /tmp) as gpulab-profile-XXXXXX.
//
// A folder is removed with everything in it on every way out that gpulab lives through; one whose
// gpulab was killed outright (SIGKILL, a crash) is removed by the next profile run. A folder's
// gpulab is alive while it holds the flock on the folder's `.owner` file (a lock goes with its
// process, and the program does not inherit it), so a folder nobody holds belongs to a run that
// died; a folder without that file is another run's just being made, or a leftover once it is an
// hour old.
#pragma once

#include <string>
#include <vector>

#include "reports/profile_records.hpp"

namespace gpulab::app {

class RecordFolder {
 public:
  // Removes the folders of killed runs first (remove_stale_record_folders), then makes this one.
  // Throws UsageError when no folder can be made.
  RecordFolder();
  ~RecordFolder();
  RecordFolder(const RecordFolder&) = delete;
  RecordFolder& operator=(const RecordFolder&) = delete;

  const std::string& path() const { return path_; }

  // The records of the folder's files.
  report::RecordSet read() const;

  // Removes the folder and everything in it (subfolders, dotfiles); again is a no-op.
  void remove();

 private:
  std::string path_;
  int owner_ = -1;  // the held `.owner` file
};

// The folder record folders are made in: TMPDIR, else /tmp.
std::string record_folders_parent();

// The record folders under `parent` of this user's runs that died, removed; returns their paths.
std::vector<std::string> remove_stale_record_folders(const std::string& parent);

}  // namespace gpulab::app
