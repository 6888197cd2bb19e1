// The launcher's pre-check (issue 36, docs/runtime.md "Before the job is created"): before
// it creates a job, the launcher asks the API about everything the job needs, as the
// identity that will create it, with the rules of `pipec preflight` (rules/preflight), and
// reports every finding at once: an error stops it (exit 4) before anything is created; an
// unknown (a read it may not make) or a warning is printed and it goes on.
#include "runtime/launcher_job.hpp"
#include "runtime/preflight_job.hpp"

namespace pipec::runtime::launcher_detail {
using kube::PreflightLimits;
using kube::ask_preflight;

std::optional<int> Launcher::precheck() {
  namespace pf = rules::preflight;
  JobPrecheck what;
  what.rendered = &source_job_;
  what.pods = pods_mode_;
  what.created = &job_;
  const auto questions = job_questions(what);
  // Four at once: about 15 questions a job, and an API server's (or a test server's) listen
  // backlog is not flooded (a dropped connection costs a 1 s SYN retransmit).
  PreflightLimits limits;
  limits.concurrency = 4;
  const auto answers = ask_preflight(*client_, ns_, questions, limits);
  int errors = 0;
  for (const auto& findings : answers)
    for (const auto& f : findings) {
      if (f.verdict == pf::Verdict::ok || f.verdict == pf::Verdict::skipped) continue;
      errors += f.verdict == pf::Verdict::error;
      say(fmt::format("pre-check: {} [{}]: {}{}", pf::verdict_name(f.verdict), f.check, f.message,
                      f.fix.empty() ? "" : "; fix: " + f.fix));
    }
  if (errors == 0) return std::nullopt;
  error(fmt::format("the pre-check found {} problem{} with what job {} needs; nothing was created",
                    errors, errors == 1 ? "" : "s", name_));
  return kExitApiError;
}

}  // namespace pipec::runtime::launcher_detail
