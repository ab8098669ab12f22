// Runs the gpulab binary as a user would, in a folder of the test's own: for the tests of what
// the process does with its files, streams and exit code.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace gpulab::test {

struct Outcome {
  int code = -1;
  std::string out, err;
};

inline std::string drain(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

// Runs the binary with `args` exactly as given (no shell: empty words stay words) in `dir`,
// which is also its TMPDIR: a temporary file or folder left behind (profile's records) is found
// there too. Standard input is read from the file `input` (by default an empty input).
inline Outcome run_gpulab(const std::vector<std::string>& args, const std::string& dir,
                          const std::string& input = "/dev/null") {
  std::vector<std::string> env{"TMPDIR=" + dir};
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("TMPDIR=", 0) != 0) env.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int out[2], err[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::close(out[0]), ::close(err[0]), ::close(out[1]), ::close(err[1]);
    const int in = ::open(input.c_str(), O_RDONLY);
    if (in < 0) ::_exit(127);
    ::dup2(in, STDIN_FILENO);
    ::close(in);
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    std::vector<char*> argv{const_cast<char*>(GPULAB_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execve(GPULAB_BINARY, argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]), ::close(err[1]);
  Outcome o;
  // Read one after the other: stdout first, as it may be large (an HTML page); what the tests
  // print on stderr stays far under a pipe's 64 KiB, so the child never blocks on it.
  o.out = drain(out[0]);
  o.err = drain(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace gpulab::test
