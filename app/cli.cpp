#include "app/cli.hpp"

#include <algorithm>
#include <exception>

#include <CLI/CLI.hpp>

#include "app/commands.hpp"
#include "app/version.hpp"
#include "reports/errors.hpp"

namespace gpulab::app {

int dispatch(const std::vector<std::string>& args, Session& session, Io& io) {
  CLI::App app{"gpulab: CUDA optimization labs measured with hardware counters", "gpulab"};
  app.set_version_flag("--version", std::string("gpulab ") + kVersion + " (" + kGitSha + ")");
  app.require_subcommand(0, 1);

  ListOptions list;
  InfoOptions info;
  RunOptions run;
  CompareOptions compare;
  DiagnoseOptions diagnose;
  SelftestOptions selftest;
  CLI::App* list_cmd = add_list(app, list);
  CLI::App* info_cmd = add_info(app, info);
  CLI::App* run_cmd = add_run(app, run);
  CLI::App* compare_cmd = add_compare(app, compare);
  CLI::App* diagnose_cmd = add_diagnose(app, diagnose);
  CLI::App* selftest_cmd = add_selftest(app, selftest);

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 pops from the back
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::ParseError& e) {
    io.err << "gpulab: error: " << e.what() << " (see gpulab --help)\n";
    return static_cast<int>(ExitCode::usage);
  }

  try {
    if (list_cmd->parsed()) return run_list(list, io);
    if (info_cmd->parsed()) return run_info(info, session, io);
    if (run_cmd->parsed()) return run_run(run, session, io, args);
    if (compare_cmd->parsed()) return run_compare(compare, io);
    if (diagnose_cmd->parsed()) return run_diagnose(diagnose, session, io, args);
    if (selftest_cmd->parsed()) return run_selftest(selftest, session, io);
    io.out << app.help();
    return static_cast<int>(ExitCode::ok);
  } catch (const Error& e) {
    io.err << "gpulab: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    io.err << "gpulab: internal error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace gpulab::app
