// Where the injection library writes: one append-only file per process, <dir>/<pid>.jsonl, one
// whole line per write(2), so that whatever the process wrote before it died is on disk. A
// process that forks keeps writing its own file, and the child opens one of its own on its
// first record (the first line of every file is given by `first_line`, called in that process).
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <string>

namespace gpulab::inject {

class RecordFile {
 public:
  RecordFile(std::string dir, std::function<std::string()> first_line);
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  // Appends `line` (one record, newline-terminated). Failures are reported once on stderr and
  // otherwise ignored: the profiled program must not fail because a record could not be written.
  void write(const std::string& line);

  // Opens this process's file if it is not yet open, which writes its first line.
  void open() { write(""); }

  // Around fork(): the child must not inherit the lock held by another thread.
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork() { mutex_.unlock(); }

 private:
  void open_for_this_process();
  void write_all(const std::string& text);

  std::string dir_;
  std::function<std::string()> first_line_;
  std::mutex mutex_;
  int fd_ = -1;
  pid_t owner_ = 0;
  bool reported_ = false;
};

}  // namespace gpulab::inject
