// Runtime "pods": the TF_CONFIGs tfjob_to_pods writes form a working cluster. Each
// replica's TF_CONFIG, with every host rewritten to 127.0.0.1 and a port of its own, goes
// to a real process (/usr/bin/python3) that opens its own address and connects to every
// peer named in the cluster spec; each peer answers with its task type and index, which
// must be the replica the spec names at that address.

#include "runtime/tf_pods.hpp"
#include "runtime/job_render.hpp"

#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pipec::runtime {

using rules::kMaxReplicas;
namespace {

using nlohmann::json;

const char* kTfJob = R"({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "x"},
  "spec": {"tfReplicaSpecs": {
    "Chief": {"replicas": 1, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}},
    "Worker": {"replicas": 3, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}},
    "PS": {"replicas": 2, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}},
    "Evaluator": {"replicas": 1, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}}}}})";

// A free loopback port (bound, then released: the replica binds it again at once).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Every replica listens on its own address (the evaluator has none in the cluster),
// connects to every address in the cluster but its own, says who it is and checks who
// answers; a listener answers each caller with its own identity until everyone came.
constexpr const char* kReplica = R"PY(
import json, os, socket, sys, threading, time
cfg = json.loads(os.environ["TF_CONFIG"])
me = (cfg["task"]["type"], cfg["task"]["index"])
cluster = cfg["cluster"]
callers = int(sys.argv[1])
where = {(t, i): a for t in cluster for i, a in enumerate(cluster[t])}
mine = where.get(me)
came = []
def serve(sock):
    sock.settimeout(20)
    while len(came) < callers:
        c, _ = sock.accept()
        who = c.recv(100).decode()
        c.sendall(("%s:%d" % me).encode())
        c.close()
        came.append(who)
if mine:
    host, port = mine.rsplit(":", 1)
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, int(port))); s.listen(16)
    server = threading.Thread(target=serve, args=(s,)); server.start()
for (t, i), addr in sorted(where.items()):
    if (t, i) == me: continue
    host, port = addr.rsplit(":", 1)
    for _ in range(400):
        try:
            c = socket.create_connection((host, int(port)), timeout=2); break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("%s:%d cannot reach %s:%d at %s" % (me + (t, i, addr)))
    c.sendall(("%s:%d" % me).encode())
    answer = c.recv(100).decode()
    if answer != "%s:%d" % (t, i):
        sys.exit("%s:%d reached %s at %s, expected %s:%d" % (me + (answer, addr, t, i)))
    c.close()
if mine:
    server.join()
print("%s:%d reached %d peers, %d came" % (me + (len(where) - (1 if mine else 0), len(came))))
)PY";

TEST(RuntimeTfPods, TheTfConfigsFormAWorkingClusterOverLoopback) {
  TfPods pods = tfjob_to_pods(json::parse(kTfJob), "wf-train", "team", json::object(), json());
  ASSERT_TRUE(pods.ok) << pods.error;
  ASSERT_EQ(pods.size(), 7u);
  // The cluster addresses, each mapped to a loopback port of its own.
  std::map<std::string, std::string> loopback;
  for (const auto& r : pods.replicas)
    loopback[r.name + ".team.svc:2222"] = "127.0.0.1:" + std::to_string(free_port());
  int in_cluster = 0;
  for (const auto& r : pods.replicas) in_cluster += r.role != "evaluator";
  std::vector<pid_t> children;
  std::vector<int> outputs;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    std::string config;
    json pod = pods.pod(i);
    for (const auto& e : pod["spec"]["containers"][0]["env"])
      if (e["name"] == "TF_CONFIG") config = e["value"];
    json parsed = json::parse(config);
    for (auto& [role, list] : parsed["cluster"].items())
      for (auto& address : list) {
        ASSERT_TRUE(loopback.count(address.get<std::string>())) << address;
        address = loopback[address.get<std::string>()];
      }
    // Callers of a listener: every other replica, the evaluator included.
    int callers = pods.replicas[i].role == "evaluator" ? 0 : static_cast<int>(pods.size()) - 1;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 1);
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      std::string env = "TF_CONFIG=" + parsed.dump();
      std::string n = std::to_string(callers);
      char* argv[] = {const_cast<char*>("python3"), const_cast<char*>("-c"), const_cast<char*>(kReplica),
                      const_cast<char*>(n.c_str()), nullptr};
      char* envp[] = {const_cast<char*>(env.c_str()), nullptr};
      ::execve("/usr/bin/python3", argv, envp);
      ::_exit(127);
    }
    ::close(fds[1]);
    children.push_back(pid);
    outputs.push_back(fds[0]);
  }
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < children.size(); ++i) {
    std::string out;
    char buffer[512];
    ssize_t n;
    while ((n = ::read(outputs[i], buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
    ::close(outputs[i]);
    int status = 0;
    ::waitpid(children[i], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << pods.replicas[i].name << ": " << out;
    lines.push_back(out);
  }
  // Each replica reached the 6 cluster members other than itself (the evaluator all 6),
  // and each listener was called by the 6 other replicas.
  EXPECT_EQ(lines[0], "chief:0 reached 5 peers, 6 came\n");
  for (const auto& line : lines) EXPECT_NE(line.find("reached"), std::string::npos) << line;
  EXPECT_EQ(in_cluster, 6);
  EXPECT_EQ(lines.back(), "evaluator:0 reached 6 peers, 0 came\n");
}

// seed 001's form: the chief is "master" in TF_CONFIG.
TEST(RuntimeTfPods, TheMasterForm) {
  TfPods pods = tfjob_to_pods(json::parse(kTfJob), "j", "ns", json::object(), json(), true);
  ASSERT_TRUE(pods.ok);
  json config = json::parse(pods.pod(0)["spec"]["containers"][0]["env"].back()["value"].get<std::string>());
  EXPECT_EQ(config["task"]["type"], "master");
  EXPECT_EQ(config["cluster"]["master"], json::array({"j-chief-0.ns.svc:2222"}));
  EXPECT_FALSE(config["cluster"].contains("chief"));
}


// Runtime "pods" at the largest count: every TF_CONFIG lists every replica, so the pods
// are made one at a time when asked for; all 10,000 at once took gigabytes (issue 25:
// workers=5000 took 0.97 GB). Making the set and two pods stays far below that.
TEST(RuntimeTfPods, TheLargestJobIsMadeInBoundedMemory) {
  json job = json::parse(kTfJob);
  job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = kMaxReplicas;
  struct rusage before {};
  ::getrusage(RUSAGE_SELF, &before);
  TfPods pods = tfjob_to_pods(job, "j", "ns", json::object(), json());
  ASSERT_TRUE(pods.ok) << pods.error;
  ASSERT_EQ(pods.size(), static_cast<std::size_t>(kMaxReplicas) + 4);
  json last = pods.pod(pods.size() - 1);
  json config = json::parse(last["spec"]["containers"][0]["env"].back()["value"].get<std::string>());
  EXPECT_EQ(config["cluster"]["worker"].size(), static_cast<std::size_t>(kMaxReplicas));
  EXPECT_EQ(config["task"]["type"], "evaluator");
  EXPECT_EQ(pods.service(1)["metadata"]["name"], "j-worker-0");
  struct rusage after {};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 200 * 1024) << "KiB grown";  // < 200 MiB

  job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = kMaxReplicas + 1;
  TfPods over = tfjob_to_pods(job, "j", "ns", json::object(), json());
  EXPECT_FALSE(over.ok);
  EXPECT_EQ(over.error, "replica Worker of the TFJob has 10001 replicas; one role has at most 10000");
}

}  // namespace
}  // namespace pipec::runtime
