// stream_server: a loopback Kubernetes API just big enough for pipec-launcher to run one
// PyTorchJob whose master prints a big log (bench/stream/run.sh). The log endpoint answers
// as the API server's does (`/api/v1/namespaces/NS/pods/POD/log?timestamps=true&follow=true`:
// chunked text/plain, each line after its RFC3339Nano timestamp), from memory, so what is
// measured is the client. Each log request's bytes and time (first byte handed to the
// socket to the last) are printed on stderr as `log: BYTES bytes in SECONDS s`.
//   stream_server PORT_FILE MIB
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>

#include <fmt/format.h>
#include <httplib.h>

namespace {

// A training log: ten lines a second, most of them logger noise, one in ten with metrics.
std::string make_log(std::size_t bytes) {
  std::string log;
  log.reserve(bytes + 256);
  std::int64_t sec = 1'795'000'000;
  for (long i = 0; log.size() < bytes; ++i) {
    std::time_t t = static_cast<std::time_t>(sec + i / 10);
    std::tm tm{};
    gmtime_r(&t, &tm);
    log += fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z ", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (i % 10) * 100'000'000 + 123);
    if (i % 10 == 0)
      log += fmt::format("step {} loss={:.4f} accuracy={:.4f} images/sec={}\n", i / 10, 1.0 / (1 + i), 0.5, 100 + i % 7);
    else
      log += fmt::format("INFO worker.py:{}: batch {} done; queue=3 lr: 0.001 time=0.{:03}s\n", 100 + i % 50, i, i % 1000);
  }
  return log;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: stream_server PORT_FILE MIB\n");
    return 2;
  }
  const std::string log = make_log(static_cast<std::size_t>(std::stol(argv[2])) << 20);
  const std::string last_line = log.substr(log.rfind('\n', log.size() - 2) + 1);
  std::mutex mu;
  std::condition_variable cv;
  bool log_done = false;  // the master's log has been sent once: the job has succeeded
  auto job = [&](const std::string& name, bool done) {
    std::string cond = done ? "Succeeded" : "Running";
    return fmt::format(R"({{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{{"name":"{}",)"
                       R"("namespace":"bench","resourceVersion":"{}"}},"status":{{"conditions":[)"
                       R"({{"type":"{}","status":"True","reason":"bench"}}]}}}})",
                       name, done ? 2 : 1, cond);
  };

  httplib::Server s;
  s.new_task_queue = [] { return new httplib::ThreadPool(8); };
  const std::string jobs = R"(/apis/kubeflow\.org/v1/namespaces/([^/]+)/pytorchjobs)";
  s.Post(jobs, [&](const httplib::Request&, httplib::Response& res) {
    {
      std::lock_guard lock(mu);
      log_done = false;  // a new job: it runs until its log has been read
    }
    res.status = 201;
    res.set_content(job("bench", false), "application/json");
  });
  s.Get(jobs + "/([^/]+)", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    res.set_content(job(req.matches[2], log_done), "application/json");
  });
  s.Delete(jobs + "/([^/]+)", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
  });
  s.Get(jobs, [&](const httplib::Request&, httplib::Response& res) {  // the watch
    res.set_chunked_content_provider("application/json", [&](std::size_t, httplib::DataSink& sink) {
      std::unique_lock lock(mu);
      cv.wait_for(lock, std::chrono::seconds(60), [&] { return log_done; });
      std::string ev = R"({"type":"MODIFIED","object":)" + job("bench", true) + "}\n";
      sink.write(ev.data(), ev.size());
      sink.done();
      return true;
    });
  });
  s.Get(R"(/api/v1/namespaces/([^/]+)/pods)", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        R"({"kind":"PodList","items":[{"metadata":{"name":"bench-master-0","creationTimestamp":"2026-11-18T00:00:00Z"},)"
        R"("spec":{"containers":[{"name":"pytorch"}]},"status":{"phase":"Running","containerStatuses":)"
        R"([{"name":"pytorch","restartCount":0,"state":{"running":{}}}]}}]})",
        "application/json");
  });
  s.Get(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/log)", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("sinceTime")) {  // a reconnect or the final pass: the last line again
      res.set_content(last_line, "text/plain");
      return;
    }
    auto sent = std::make_shared<std::size_t>(0);
    auto began = std::make_shared<std::chrono::steady_clock::time_point>();
    res.set_chunked_content_provider(
        "text/plain",
        [&, sent, began](std::size_t, httplib::DataSink& sink) {
          if (*sent == 0) *began = std::chrono::steady_clock::now();
          std::size_t n = std::min<std::size_t>(log.size() - *sent, 1 << 20);
          if (!sink.write(log.data() + *sent, n)) return false;
          *sent += n;
          if (*sent == log.size()) sink.done();
          return true;
        },
        [&, sent, began](bool ok) {
          double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - *began).count();
          std::fprintf(stderr, "log: %zu bytes in %.3f s (%s)\n", *sent, s, ok ? "complete" : "cut");
          std::lock_guard lock(mu);
          log_done = true;
          cv.notify_all();
        });
  });
  int port = s.bind_to_any_port("127.0.0.1");
  std::ofstream(argv[1]) << port << "\n";
  s.listen_after_bind();
}
